import { AppError, notFound } from '../../shared/errors.js';
import { isPlainObject } from '../../shared/json.js';
import { contentTypeOf } from '../kv/validation.js';
import { DOWNLOAD_URL_EXPIRY_SECONDS, MAX_OBJECT_SIZE_BYTES, MAX_URL_EXPIRY_SECONDS, UPLOAD_ID_PATTERN } from './limits.js';
import type { UploadedPart } from './types.js';
import type { NewUpload } from './uploads.js';
import { metadataFrom, validateObjectKey } from './validation.js';

const invalid = (detail: string) => new AppError('validation_error', detail, undefined, detail);

function onlyFields(body: Record<string, unknown>, fields: string[]): void {
  const unknown = Object.keys(body).filter((field) => !fields.includes(field));
  if (unknown.length > 0) throw invalid(`unknown fields: ${unknown.join(', ')}`);
}

/**
 * `POST …/uploads`: `{key, size, content_type?, metadata?}`. The size is a whole number of bytes
 * up to S3's 5 GiB; metadata follows the `x-meta-*` rules of a direct write.
 */
export function parseNewUpload(body: Record<string, unknown>): NewUpload {
  onlyFields(body, ['key', 'size', 'content_type', 'metadata']);
  const { key, size, content_type: contentType, metadata = {} } = body;
  if (typeof key !== 'string') throw invalid('key must be a string');
  if (!Number.isSafeInteger(size) || (size as number) < 0) throw invalid('size must be a whole number of bytes');
  if ((size as number) > MAX_OBJECT_SIZE_BYTES) throw new AppError('payload_too_large', 'size', undefined, `objects are at most ${MAX_OBJECT_SIZE_BYTES} bytes`);
  if (contentType !== undefined && typeof contentType !== 'string') throw invalid('content_type must be a string');
  if (!isPlainObject(metadata) || !Object.values(metadata).every((value) => typeof value === 'string')) throw invalid('metadata must be an object of strings');
  return {
    key: validateObjectKey(key),
    size: size as number,
    contentType: contentTypeOf(contentType),
    // The same rules as x-meta-* headers, whose names arrive lower case.
    metadata: metadataFrom(Object.fromEntries(Object.entries(metadata as Record<string, string>).map(([name, value]) => [`x-meta-${name}`, value]))),
  };
}

/** `POST …/uploads/{id}/complete`: `{parts?: [{part_number, etag}]}`, the parts required for a multipart upload. */
export function parseCompletion(body: Record<string, unknown>): UploadedPart[] | undefined {
  onlyFields(body, ['parts']);
  if (body.parts === undefined) return undefined;
  const { parts } = body;
  if (!Array.isArray(parts) || parts.length === 0 || parts.length > 10_000) throw invalid('parts must be a list of 1 to 10000 parts');
  return parts.map((part: unknown) => {
    if (!isPlainObject(part) || !Number.isSafeInteger(part.part_number) || (part.part_number as number) < 1 || (part.part_number as number) > 10_000
      || typeof part.etag !== 'string' || !/^"?[\x21\x23-\x7e]{1,128}"?$/.test(part.etag)) {
      throw invalid('each part is {part_number: 1-10000, etag: the ETag its PUT answered}');
    }
    return { partNumber: part.part_number as number, etag: part.etag };
  });
}

/** `POST …/objects/{key}/url`: `{expires_in?}` seconds, 1 to 3,600. */
export function parseUrlRequest(body: Record<string, unknown>): number {
  onlyFields(body, ['expires_in']);
  const { expires_in: expiresIn = DOWNLOAD_URL_EXPIRY_SECONDS } = body;
  if (!Number.isSafeInteger(expiresIn) || (expiresIn as number) < 1 || (expiresIn as number) > MAX_URL_EXPIRY_SECONDS) {
    throw invalid(`expires_in must be whole seconds from 1 to ${MAX_URL_EXPIRY_SECONDS}`);
  }
  return expiresIn as number;
}

export function validateUploadId(id: string): string {
  if (!UPLOAD_ID_PATTERN.test(id)) throw notFound('upload');
  return id;
}
