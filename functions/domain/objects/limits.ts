/**
 * Sizes and bounds of object stores, each named with its unit. Names, generations and listing
 * page sizes are the KV buckets' (`../kv/limits.ts`): one convention for every kind of store.
 */
export { BUCKET_NAME_PATTERN as STORE_NAME_PATTERN, DEFAULT_LIST_LIMIT, GENERATION_BYTES, MAX_DESCRIPTION_BYTES, MAX_LIST_LIMIT } from '../kv/limits.js';

/**
 * Keys are at most 950 UTF-8 bytes: S3's key limit is 1,024, and the bucket key adds the store id
 * (32), the generation (32) and two `/`.
 */
export const MAX_OBJECT_KEY_BYTES = 950;

/** Store ids are 128 random bits as 32 hex digits: never the account id, never reused. */
export const STORE_ID_BYTES = 16;

/** S3's largest single PutObject (5 GiB): the ceiling of `max_object_size`. */
export const MAX_OBJECT_SIZE_BYTES = 5 * 1024 ** 3;

/**
 * The largest body `PUT …/objects/{key}` takes, and `GET` answers inline: 4 MiB. A Lambda
 * invocation carries at most 6 MB each way, and API Gateway hands binary bodies to it in base64
 * (4 bytes for every 3), so 6 MB holds about 4.5 MB of bytes less the event's headers.
 * A larger object is answered with a 307 to a presigned URL.
 */
export const MAX_INLINE_OBJECT_BYTES = 4 * 1024 * 1024;

/** How long the presigned URL of a 307 answer works. */
export const DOWNLOAD_URL_EXPIRY_SECONDS = 300;

/** User metadata (`x-meta-*`): S3 allows 2 KB of names and values in all. */
export const MAX_METADATA_BYTES = 2048;
/** Metadata names: lower-case letters, digits, `-` and `_` (HTTP header names, as S3 stores them). */
export const METADATA_NAME_PATTERN = /^[a-z0-9_-]{1,128}$/;

/** `allowed_content_types`: at most this many media types (`type/subtype` or `type/*`). */
export const MAX_ALLOWED_CONTENT_TYPES = 32;

/** A write that keeps losing its compare-and-swap to other writers of the key gives up (503). */
export const MAX_WRITE_ATTEMPTS = 3;
