import type { Busboy } from 'busboy';
import { AppError } from '../../shared/errors.js';
import { decodeUtf8, parseJson } from '../../shared/json.js';

/** A webhook body parsed according to its content type. */
export type WebhookBody =
  | { kind: 'json'; value: unknown }
  | { kind: 'form'; value: Record<string, string | string[]> }
  | { kind: 'multipart'; value: Record<string, unknown> };

/** An uploaded file of a multipart body, carried inline. */
export interface MultipartFile {
  filename: string;
  content_type: string;
  size: number;
  content_base64: string;
}

/** Field names that could reach `Object.prototype` when assigned to a plain object. */
const UNSAFE_NAMES: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * Parses a webhook body by its `content-type` (parameters such as `charset` are allowed).
 * Throws `AppError('unsupported_media_type')` for types other than JSON, urlencoded form and
 * multipart form, and `AppError('validation_error')` for a body that is not what it claims.
 */
export async function parseWebhookBody(rawBody: Uint8Array, contentTypeHeader: string | undefined): Promise<WebhookBody> {
  const mediaType = contentTypeHeader?.split(';')[0]?.trim().toLowerCase();
  switch (mediaType) {
    case 'application/json':
      return { kind: 'json', value: parseJson(rawBody) };
    case 'application/x-www-form-urlencoded':
      return { kind: 'form', value: parseForm(decodeUtf8(rawBody)) };
    case 'multipart/form-data':
      return { kind: 'multipart', value: await parseMultipart(rawBody, contentTypeHeader ?? '') };
    default:
      throw new AppError('unsupported_media_type', undefined, undefined, 'send JSON, a urlencoded form or a multipart form');
  }
}

function parseForm(text: string): Record<string, string | string[]> {
  const fields: Record<string, string | string[]> = {};
  for (const [name, value] of new URLSearchParams(text)) addField(fields, name, value);
  return fields;
}

/** Repeated names collect into an array, in order; unsafe names are dropped. */
function addField<T>(fields: Record<string, T | T[]>, name: string, value: T): void {
  if (UNSAFE_NAMES.has(name)) return;
  const existing = Object.hasOwn(fields, name) ? fields[name] : undefined;
  if (existing === undefined) fields[name] = value;
  else if (Array.isArray(existing)) existing.push(value);
  else fields[name] = [existing, value];
}

async function parseMultipart(rawBody: Uint8Array, contentType: string): Promise<Record<string, unknown>> {
  // Loaded on the first multipart body: JSON and form senders never need the parser.
  const { default: busboy } = await import('busboy');
  return new Promise((resolve, reject) => {
    const invalid = (why: string) => reject(new AppError('validation_error', undefined, undefined, `multipart: ${why}`));
    let parser: Busboy;
    try {
      // The whole body is already in memory, so no field can usefully be truncated.
      parser = busboy({ headers: { 'content-type': contentType }, limits: { fieldSize: Infinity } });
    } catch (error) {
      return invalid(error instanceof Error ? error.message : 'unreadable content type');
    }
    const fields: Record<string, unknown> = {};
    parser.on('field', (name, value) => addField(fields, name, value));
    parser.on('file', (name, stream, info) => {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('error', () => undefined); // the same failure also reaches the parser's 'error'
      stream.on('end', () => {
        const content = Buffer.concat(chunks);
        const file: MultipartFile = {
          filename: info.filename ?? '',
          content_type: info.mimeType,
          size: content.length,
          content_base64: content.toString('base64'),
        };
        addField(fields, name, file);
      });
    });
    parser.on('error', (error: unknown) => invalid(error instanceof Error ? error.message : 'malformed body'));
    parser.on('close', () => resolve(fields));
    parser.end(rawBody);
  });
}
