import { parseJson } from '../../shared/json.js';
import type { StoredRequest } from '../flows/ports.js';
import { ALWAYS_SECRET_HEADERS, NO_SECRET_FIELDS, redactJsonPaths, redactNamed, type SecretLocations } from './secret-fields.js';

export const REDACTED = '[redacted]';

/*
 * What is never stored or shown: the trigger's API key (header or query parameter), the
 * credentials a browser or proxy may attach, and whatever the sender's catalog row says carries
 * its secret in clear (`secret-fields.ts`). Signature headers are kept: they are not secrets (an
 * HMAC of the body), and an operator needs them to see why a delivery was refused.
 */

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * The body to keep: as received, or, when a JSON body holds a secret field, that body with the
 * field redacted, written again (its bytes then differ from the sender's; `body_bytes` keeps the size received).
 */
function keptBody(rawBody: Uint8Array, jsonPaths: SecretLocations['jsonPaths']): Uint8Array {
  if (jsonPaths.length === 0) return rawBody;
  let parsed: unknown;
  try {
    parsed = parseJson(rawBody);
  } catch {
    return rawBody;
  }
  const redacted = redactJsonPaths(parsed, jsonPaths, REDACTED);
  return redacted.changed ? Buffer.from(JSON.stringify(redacted.value), 'utf8') : rawBody;
}

/**
 * The request as received, redacted where `secrets` says. `withBody` false leaves the body out (a body over the
 * receiver's limit is refused unread and not kept); its size is recorded either way.
 */
export function storedRequest(
  request: { method: string; headers: Record<string, string>; query: Record<string, string>; sourceIp?: string; rawBody: Uint8Array },
  withBody: boolean,
  secrets: SecretLocations = NO_SECRET_FIELDS,
): StoredRequest {
  const stored: StoredRequest = {
    method: request.method,
    headers: redactNamed(request.headers, secrets.headers, REDACTED),
    query: redactNamed(request.query, secrets.query, REDACTED),
    ...(request.sourceIp !== undefined && { source_ip: request.sourceIp }),
    body_bytes: request.rawBody.length,
  };
  if (withBody) {
    const body = keptBody(request.rawBody, secrets.jsonPaths);
    try {
      stored.body = utf8.decode(body);
      stored.body_encoding = 'utf8';
    } catch {
      stored.body = Buffer.from(body).toString('base64');
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

/**
 * The headers a replayed flow sees: the stored ones without those that were redacted (their values
 * are gone), and without those a flow never sees, whatever was stored before they were redacted.
 */
export const replayHeaders = (request: StoredRequest): Record<string, string> =>
  Object.fromEntries(Object.entries(request.headers).filter(([name, value]) => value !== REDACTED && !ALWAYS_SECRET_HEADERS.has(name)));
