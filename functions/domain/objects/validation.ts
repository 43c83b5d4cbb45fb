import { AppError } from '../../shared/errors.js';
import { isPlainObject } from '../../shared/json.js';
import { LONE_SURROGATE, validateKey, validatePrefix } from '../kv/validation.js';
import {
  MAX_ALLOWED_CONTENT_TYPES,
  MAX_DESCRIPTION_BYTES,
  MAX_METADATA_BYTES,
  MAX_OBJECT_KEY_BYTES,
  MAX_OBJECT_SIZE_BYTES,
  METADATA_NAME_PATTERN,
  STORE_NAME_PATTERN,
} from './limits.js';
import type { StoreConfig } from './types.js';

const invalid = (detail: string) => new AppError('validation_error', detail, undefined, detail);

export function validateStoreName(name: string): string {
  if (!STORE_NAME_PATTERN.test(name)) throw invalid('store names are 1-64 letters, digits, _ or -');
  return name;
}

/** A key as KV keys are (no control characters, no `.`/`..` segments), at most 950 UTF-8 bytes. */
export const validateObjectKey = (key: string): string => validateKey(key, MAX_OBJECT_KEY_BYTES);
export const validateObjectPrefix = (prefix: string | undefined): string | undefined => validatePrefix(prefix, MAX_OBJECT_KEY_BYTES);

/** A listing's delimiter: one character, `/` in practice. */
export function validateDelimiter(delimiter: string | undefined): string | undefined {
  if (delimiter === undefined || delimiter === '') return undefined;
  if ([...delimiter].length !== 1 || /[\u0000-\u001f\u007f]/.test(delimiter)) throw invalid('delimiter must be one printable character');
  return delimiter;
}

/** `type/subtype` or `type/*`, lower case, without parameters. */
const MEDIA_RANGE = /^[a-z0-9][a-z0-9!#$&^_.+-]{0,63}\/(?:\*|[a-z0-9][a-z0-9!#$&^_.+-]{0,126})$/;

/** The media type of a `Content-Type` value, lower case, without parameters. */
export const mediaTypeOf = (contentType: string): string => contentType.split(';')[0]!.trim().toLowerCase();

/** Whether a content type is one of the store's `allowed_content_types` (`null`: any). */
export function isAllowedContentType(contentType: string, allowed: string[] | null): boolean {
  if (allowed === null) return true;
  const type = mediaTypeOf(contentType);
  return allowed.some((range) => range === type || (range.endsWith('/*') && type.startsWith(range.slice(0, -1))));
}

/** US-ASCII printable text and spaces: what survives an HTTP header both ways. */
const HEADER_TEXT = /^[\x20-\x7e]*$/;

/**
 * User metadata from the request's `x-meta-<name>` headers (header names arrive lower case):
 * names of letters, digits, `-`, `_`; values of printable ASCII; 2 KB in all, as S3 allows.
 */
export function metadataFrom(headers: Record<string, string | undefined>): Record<string, string> {
  const metadata: Record<string, string> = {};
  let bytes = 0;
  for (const [header, value] of Object.entries(headers)) {
    if (!header.startsWith('x-meta-') || value === undefined) continue;
    const name = header.slice('x-meta-'.length);
    if (!METADATA_NAME_PATTERN.test(name)) throw invalid('x-meta-* names are letters, digits, - or _');
    if (!HEADER_TEXT.test(value)) throw invalid('x-meta-* values are printable ASCII');
    bytes += name.length + value.length;
    metadata[name] = value;
  }
  if (bytes > MAX_METADATA_BYTES) throw invalid(`x-meta-* names and values are at most ${MAX_METADATA_BYTES} bytes in all`);
  return metadata;
}

const CONFIG_FIELDS = new Set(['description', 'max_bytes', 'max_object_size', 'ttl_seconds', 'allowed_content_types']);
const isPositiveInteger = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 1;

/**
 * A store's configuration from the JSON body of `PUT /storage/objects/{store}`. Every field is
 * optional (`null`: not set); any other field is refused.
 *
 * - `description`: text of at most 1,024 UTF-8 bytes.
 * - `max_bytes`: the most the store's objects may hold together.
 * - `max_object_size`: the largest object, 1 to 5 GiB (the default, S3's single PUT).
 * - `ttl_seconds`: objects expire this many seconds after their write; expired ones are never served.
 * - `allowed_content_types`: up to 32 media types (`image/png`, `image/*`); others are refused.
 */
export function parseStoreConfig(body: unknown): StoreConfig {
  if (!isPlainObject(body)) throw invalid('configuration must be a JSON object');
  const unknown = Object.keys(body).filter((field) => !CONFIG_FIELDS.has(field));
  if (unknown.length > 0) throw invalid(`unknown configuration fields: ${unknown.join(', ')}`);
  const {
    description = null, max_bytes: maxBytes = null, max_object_size: maxObjectSize = null,
    ttl_seconds: ttlSeconds = null, allowed_content_types: allowed = null,
  } = body;
  if (description !== null && (typeof description !== 'string' || Buffer.byteLength(description, 'utf8') > MAX_DESCRIPTION_BYTES || LONE_SURROGATE.test(description))) {
    throw invalid(`description must be text of at most ${MAX_DESCRIPTION_BYTES} UTF-8 bytes`);
  }
  if (maxBytes !== null && !isPositiveInteger(maxBytes)) throw invalid('max_bytes must be a positive integer');
  if (maxObjectSize !== null && (!isPositiveInteger(maxObjectSize) || maxObjectSize > MAX_OBJECT_SIZE_BYTES)) {
    throw invalid(`max_object_size must be an integer from 1 to ${MAX_OBJECT_SIZE_BYTES}`);
  }
  if (ttlSeconds !== null && !isPositiveInteger(ttlSeconds)) throw invalid('ttl_seconds must be a positive integer');
  if (allowed !== null && (!Array.isArray(allowed) || allowed.length === 0 || allowed.length > MAX_ALLOWED_CONTENT_TYPES
    || !allowed.every((type) => typeof type === 'string' && MEDIA_RANGE.test(type)))) {
    throw invalid(`allowed_content_types must be 1-${MAX_ALLOWED_CONTENT_TYPES} lower-case media types (type/subtype or type/*)`);
  }
  return {
    description,
    maxBytes,
    maxObjectSize: maxObjectSize ?? MAX_OBJECT_SIZE_BYTES,
    ttlSeconds,
    allowedContentTypes: allowed === null ? null : [...new Set(allowed as string[])],
  };
}
