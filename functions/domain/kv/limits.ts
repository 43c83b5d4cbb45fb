/**
 * Sizes and bounds of the KV storage gateway, each named with its unit. The value ceiling is
 * derived from DynamoDB's item limit so that any accepted value fits in one item whatever the
 * account, bucket and key; `test/handlers/kv-store.test.ts` writes that worst case to dynalite.
 */

/** Bucket names: letters, digits, `_` and `-`, 1 to 64 characters. */
export const BUCKET_NAME_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
export const MAX_BUCKET_NAME_LENGTH = 64;

/** Keys are at most 1,024 UTF-8 bytes, which is also DynamoDB's sort key limit. */
export const MAX_KEY_BYTES = 1024;

/** `description` of a bucket, in UTF-8 bytes. */
export const MAX_DESCRIPTION_BYTES = 1024;

/** A stored content type (`type/subtype; parameters`), in bytes of printable ASCII. */
export const MAX_CONTENT_TYPE_BYTES = 255;
export const DEFAULT_CONTENT_TYPE = 'application/octet-stream';

/** Generations are 128 random bits written as 32 lower-case hex digits. */
export const GENERATION_BYTES = 16;
export const GENERATION_PATTERN = /^[0-9a-f]{32}$/;

/**
 * Upper bound of an account id in UTF-8 bytes. The authenticator accepts ids of at most 256
 * UTF-16 code units, which is at most 768 UTF-8 bytes; 1,024 leaves room without depending on it.
 */
export const MAX_ACCOUNT_ID_BYTES = 1024;

/** DynamoDB's item size limit (400 KB), counting attribute names and values. */
export const DYNAMODB_ITEM_LIMIT_BYTES = 400 * 1024;

/** The most a DynamoDB number attribute can take (38 significant digits). */
const DYNAMODB_MAX_NUMBER_BYTES = 21;

/**
 * Everything in a value item except the value's bytes, at its worst (see `DynamoKvStore`):
 * `pk` = `DATA#{account}#{bucket}#{generation}`, `sk` = the key, `value`, `content_type`,
 * `revision` and `expires_at`, each attribute name counted as DynamoDB does.
 */
export const VALUE_ITEM_OVERHEAD_BYTES =
  'pk'.length + 'DATA#'.length + MAX_ACCOUNT_ID_BYTES + 1 + MAX_BUCKET_NAME_LENGTH + 1 + 2 * GENERATION_BYTES +
  'sk'.length + MAX_KEY_BYTES +
  'value'.length +
  'content_type'.length + MAX_CONTENT_TYPE_BYTES +
  'revision'.length + DYNAMODB_MAX_NUMBER_BYTES +
  'expires_at'.length + DYNAMODB_MAX_NUMBER_BYTES;

/**
 * The largest value one item holds after its key and attributes, rounded down to whole KiB:
 * 397 KiB (406,528 bytes). It is the default `max_value_bytes` and its ceiling.
 */
export const MAX_VALUE_BYTES = Math.floor((DYNAMODB_ITEM_LIMIT_BYTES - VALUE_ITEM_OVERHEAD_BYTES) / 1024) * 1024;

/**
 * A value's own lifetime (`ttl_seconds` on a put), in seconds: 1 second to 10 years of 365 days.
 * The upper bound keeps `expires_at` a date DynamoDB's TTL and every client reads as a date.
 */
export const MIN_VALUE_TTL_SECONDS = 1;
export const MAX_VALUE_TTL_SECONDS = 10 * 365 * 24 * 60 * 60;

/** Listing: keys per page by default and at most. */
export const DEFAULT_LIST_LIMIT = 100;
export const MAX_LIST_LIMIT = 1000;
