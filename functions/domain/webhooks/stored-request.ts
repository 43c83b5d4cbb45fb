import type { StoredRequest } from '../flows/ports.js';

export const REDACTED = '[redacted]';

/**
 * What is never stored or shown: the trigger's API key (header or query parameter) and the
 * credentials a browser or proxy may attach. Signature headers are kept: they are not secrets (an
 * HMAC of the body), and an operator needs them to see why a delivery was refused.
 */
const REDACTED_HEADERS: ReadonlySet<string> = new Set(['x-api-key', 'authorization', 'proxy-authorization', 'cookie']);
const REDACTED_QUERY: ReadonlySet<string> = new Set(['api_key']);

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

const redact = (values: Record<string, string>, names: ReadonlySet<string>) =>
  Object.fromEntries(Object.entries(values).map(([name, value]) => [name, names.has(name.toLowerCase()) ? REDACTED : value]));

/**
 * The request as received, redacted. `withBody` false leaves the body out (a body over the
 * receiver's limit is refused unread and not kept); its size is recorded either way.
 */
export function storedRequest(
  request: { method: string; headers: Record<string, string>; query: Record<string, string>; sourceIp?: string; rawBody: Uint8Array },
  withBody: boolean,
): StoredRequest {
  const stored: StoredRequest = {
    method: request.method,
    headers: redact(request.headers, REDACTED_HEADERS),
    query: redact(request.query, REDACTED_QUERY),
    ...(request.sourceIp !== undefined && { source_ip: request.sourceIp }),
    body_bytes: request.rawBody.length,
  };
  if (withBody) {
    try {
      stored.body = utf8.decode(request.rawBody);
      stored.body_encoding = 'utf8';
    } catch {
      stored.body = Buffer.from(request.rawBody).toString('base64');
      stored.body_encoding = 'base64';
    }
  }
  return stored;
}

/** The stored body's bytes again; undefined when it was not stored. */
export function storedBodyBytes(request: StoredRequest): Uint8Array | undefined {
  if (request.body === undefined) return undefined;
  return Buffer.from(request.body, request.body_encoding === 'base64' ? 'base64' : 'utf8');
}

/** The headers a replayed flow sees: the stored ones without those that were redacted (their values are gone). */
export const replayHeaders = (request: StoredRequest): Record<string, string> =>
  Object.fromEntries(Object.entries(request.headers).filter(([name, value]) => !(REDACTED_HEADERS.has(name) && value === REDACTED)));
