// Standard Webhooks signs `<id>.<timestamp>.<raw body>`:
// https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md#verifying-webhook-authenticity
import { headerValue } from '../headers.js';
import { anySignatureMatches, decodeSignature, hmac } from './hmac.js';
import { isFreshTimestamp, type SignedRequest } from './request.js';

/** The specification's (and reference library's) tolerance, `WEBHOOK_TOLERANCE_IN_SECONDS`. */
export const STANDARD_WEBHOOKS_TOLERANCE_SECONDS = 300;

const SECRET_PREFIX = 'whsec_';

/**
 * Verifies `webhook-signature: v1,<base64> [v1,<base64> ...]` over `webhook-id`,
 * `webhook-timestamp` and the raw body. Versions other than `v1` are ignored.
 */
export function verifyStandardWebhooks(secrets: readonly string[], request: SignedRequest): boolean {
  const id = headerValue(request.headers, 'webhook-id');
  const timestamp = headerValue(request.headers, 'webhook-timestamp');
  const header = headerValue(request.headers, 'webhook-signature');
  if (id === undefined || timestamp === undefined || header === undefined) return false;
  if (!isFreshTimestamp(timestamp, request.nowSeconds, STANDARD_WEBHOOKS_TOLERANCE_SECONDS)) return false;
  const signatures: Buffer[] = [];
  for (const item of header.split(' ')) {
    const [version, encoded] = splitOnce(item, ',');
    const signature = version === 'v1' ? decodeSignature(encoded, 'base64') : undefined;
    if (signature) signatures.push(signature);
  }
  const signedPrefix = `${id}.${timestamp}.`;
  return anySignatureMatches(secrets, signatures, (secret) => hmac('sha256', signingKey(secret), signedPrefix, request.rawBody));
}

/** The key is the base64 part of the secret, after its `whsec_` prefix. */
function signingKey(secret: string): Buffer {
  const key = Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
  // An empty key would make every signature forgeable: a configuration error, not a bad request.
  if (key.length === 0) throw new TypeError('standard_webhooks secret decodes to an empty key');
  return key;
}

function splitOnce(text: string, separator: string): [string, string] {
  const at = text.indexOf(separator);
  return at < 0 ? [text, ''] : [text.slice(0, at), text.slice(at + 1)];
}
