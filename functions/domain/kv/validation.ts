import { AppError } from '../../shared/errors.js';
import { isPlainObject } from '../../shared/json.js';
import { didYouMean } from '../../shared/nearest-name.js';
import {
  BUCKET_NAME_PATTERN,
  DEFAULT_CONTENT_TYPE,
  MAX_CONTENT_TYPE_BYTES,
  MAX_DESCRIPTION_BYTES,
  MAX_KEY_BYTES,
  MAX_VALUE_BYTES,
  MAX_VALUE_TTL_SECONDS,
  MIN_VALUE_TTL_SECONDS,
} from './limits.js';
import type { BucketConfig } from './types.js';

/** C0 controls, DEL and C1 controls. */
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f]/;
/** A UTF-16 surrogate without its pair: not encodable as UTF-8, so it would be stored as U+FFFD. */
export const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Each refusal says which of the caller's fields is wrong and what it takes: the detail is the message. */
const invalid = (detail: string) => new AppError('validation_error', detail, undefined, detail);
const utf8Bytes = (text: string) => Buffer.byteLength(text, 'utf8');

export function validateBucketName(name: string): string {
  if (!BUCKET_NAME_PATTERN.test(name)) throw invalid('bucket names are 1-64 letters, digits, _ or -');
  return name;
}

/** Text that can be stored and compared byte for byte: well-formed, without control characters. */
export function isCleanText(text: string): boolean {
  return !CONTROL_CHARACTERS.test(text) && !LONE_SURROGATE.test(text);
}

/** Whether `key` (already percent-decoded) is a key a client may use; see {@link validateKey}. */
export function isValidKey(key: string, maxBytes = MAX_KEY_BYTES): boolean {
  const bytes = utf8Bytes(key);
  if (bytes < 1 || bytes > maxBytes || !isCleanText(key)) return false;
  return !key.split('/').some((segment) => segment === '.' || segment === '..');
}

/**
 * A key as it arrives in `{key+}`, percent-decoded: 1 to 1,024 UTF-8 bytes, no control
 * characters (C0, DEL, C1), and no `.` or `..` path segment. The last rule exists because URL
 * normalisation in clients and proxies (WHATWG URL parsing, fetch, nginx, CDNs) resolves dot
 * segments before the request reaches us: `DELETE …/keys/../purge` would arrive as a purge of the
 * bucket. Refusing such keys means no stored key ever needs an ambiguous URL.
 */
export function validateKey(key: string, maxBytes = MAX_KEY_BYTES): string {
  if (!isValidKey(key, maxBytes)) throw invalid(`keys are 1-${maxBytes} UTF-8 bytes without control characters or . / .. segments`);
  return key;
}

/** The `prefix` of a listing: like a key, but may be empty (no prefix) and may end anywhere. */
export function validatePrefix(prefix: string | undefined, maxBytes = MAX_KEY_BYTES): string | undefined {
  if (prefix === undefined || prefix === '') return undefined;
  if (utf8Bytes(prefix) > maxBytes || !isCleanText(prefix)) throw invalid(`prefix must be at most ${maxBytes} UTF-8 bytes of text`);
  return prefix;
}

/** Printable ASCII and spaces, as a media type with parameters is written. */
const CONTENT_TYPE = /^[\x21-\x7e][\x20-\x7e]*$/;

/** The content type to store for a value: the request's, or `application/octet-stream` without one. */
export function contentTypeOf(header: string | undefined): string {
  const value = header?.trim();
  if (!value) return DEFAULT_CONTENT_TYPE;
  if (value.length > MAX_CONTENT_TYPE_BYTES || !CONTENT_TYPE.test(value)) throw invalid('content-type must be at most 255 printable ASCII characters');
  return value;
}

const CONFIG_FIELDS = new Set(['description', 'ttl_seconds', 'max_value_bytes']);
/** Fields a bucket answers with but that no PUT sets: the name is the path's, created_at the server's. */
const READ_ONLY_FIELDS = new Set(['name', 'created_at']);
const isPositiveInteger = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 1;

/**
 * A bucket's configuration from the JSON body of `PUT /storage/kv/{bucket}`. Every field is
 * optional (`null` means "not set"); the body is the whole configuration, so on an existing
 * bucket a field left out goes back to its default. `name` and `created_at` cannot be set (400
 * naming them); any other field is refused.
 *
 * - `description`: text of at most 1,024 UTF-8 bytes.
 * - `ttl_seconds`: a default lifetime for values. A value written to the bucket expires at least
 *   this many seconds after its write; from then on it reads, lists and deletes as missing. It is
 *   enforced on every read because DynamoDB's TTL deletion is lazy (up to days) and optional.
 * - `max_value_bytes`: the largest value accepted, 1 to {@link MAX_VALUE_BYTES} (the default).
 */
export function parseBucketConfig(body: unknown): BucketConfig {
  if (!isPlainObject(body)) throw invalid('configuration must be a JSON object');
  const readOnly = Object.keys(body).filter((field) => READ_ONLY_FIELDS.has(field));
  if (readOnly.length > 0) {
    throw new AppError('validation_error', 'read-only bucket fields', undefined,
      `${readOnly.join(' and ')} cannot be set: a bucket's name is the one in its path, and created_at is set when it is created. The settings a PUT sets or changes are ${[...CONFIG_FIELDS].join(', ')}.`);
  }
  const unknown = Object.keys(body).filter((field) => !CONFIG_FIELDS.has(field));
  if (unknown.length > 0) throw invalid(`${unknown[0]}: is not a known field${didYouMean(unknown[0], [...CONFIG_FIELDS])}; a bucket's configuration takes ${[...CONFIG_FIELDS].join(', ')}`);
  const { description = null, ttl_seconds: ttlSeconds = null, max_value_bytes: maxValueBytes = null } = body;

  if (description !== null && (typeof description !== 'string' || utf8Bytes(description) > MAX_DESCRIPTION_BYTES || LONE_SURROGATE.test(description))) {
    throw invalid('description must be text of at most 1024 UTF-8 bytes');
  }
  if (ttlSeconds !== null && !isPositiveInteger(ttlSeconds)) throw invalid('ttl_seconds must be a positive integer');
  if (maxValueBytes !== null && (!isPositiveInteger(maxValueBytes) || maxValueBytes > MAX_VALUE_BYTES)) {
    throw invalid(`max_value_bytes must be an integer from 1 to ${MAX_VALUE_BYTES}`);
  }
  return { description, ttlSeconds, maxValueBytes: maxValueBytes ?? MAX_VALUE_BYTES };
}

/**
 * A value's own lifetime from the put's `ttl_seconds` query parameter: whole seconds from
 * {@link MIN_VALUE_TTL_SECONDS} to {@link MAX_VALUE_TTL_SECONDS}; `undefined` when absent (the
 * bucket's default applies).
 */
export function parseValueTtl(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const seconds = /^[0-9]{1,10}$/.test(raw) ? Number(raw) : NaN;
  if (!(seconds >= MIN_VALUE_TTL_SECONDS && seconds <= MAX_VALUE_TTL_SECONDS)) {
    throw new AppError('validation_error', 'bad ttl_seconds', undefined,
      `ttl_seconds must be a whole number of seconds from ${MIN_VALUE_TTL_SECONDS} to ${MAX_VALUE_TTL_SECONDS} (10 years); leave it out for the bucket's default.`);
  }
  return seconds;
}
