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

/**
 * Presigned uploads: one PUT up to this size, multipart above it in parts of this size (S3's
 * smallest part but the last). 5 GiB is then at most 1,024 part URLs, well inside S3's 10,000.
 */
export const MULTIPART_PART_BYTES = 5 * 1024 * 1024;
/** How long upload URLs work, and how long an upload may stay open before its catalog entry expires. */
export const UPLOAD_URL_EXPIRY_SECONDS = 3600;
/** An open upload is forgotten after a day, as the bucket's rule aborts incomplete multipart uploads after a day. */
export const UPLOAD_LIFETIME_SECONDS = 24 * 3600;
/** `POST …/objects/{key}/url`: a presigned GET works at most an hour (S3 allows 7 days; a leaked URL should not). */
export const MAX_URL_EXPIRY_SECONDS = 3600;
/** Upload ids are 128 random bits as 32 hex digits. */
export const UPLOAD_ID_BYTES = 16;
export const UPLOAD_ID_PATTERN = /^[0-9a-f]{32}$/;
/** A write's own name for its bytes (`ObjectInfo.blob`): 128 random bits as 32 hex digits. */
export const BLOB_ID_BYTES = 16;
/**
 * How long the table's TTL waits after an object's or upload's expiry before DynamoDB may delete
 * the entry: the product's expiry pass (due within minutes) must always come first, since it is
 * what gives the usage back and deletes the bytes. DynamoDB's own deletion is a backstop only.
 */
export const CATALOG_TTL_GRACE_SECONDS = 7 * 24 * 3600;
/** A closed upload's entry is kept this long past its URLs' expiry, for the pass that removes bytes they brought late. */
export const LATE_UPLOAD_SWEEP_MARGIN_SECONDS = 60;
