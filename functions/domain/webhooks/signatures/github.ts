// GitHub signs the raw body: https://docs.github.com/en/webhooks/using-webhooks/validating-webhook-deliveries
import { headerValue } from '../headers.js';
import { anySignatureMatches, decodeSignature, hmac } from './hmac.js';
import type { SignedRequest } from './request.js';

const PREFIX = 'sha256=';

/** Verifies `x-hub-signature-256: sha256=<hex>`, HMAC-SHA256 of the raw body. */
export function verifyGithub(secrets: readonly string[], request: SignedRequest): boolean {
  const header = headerValue(request.headers, 'x-hub-signature-256');
  if (!header?.startsWith(PREFIX)) return false;
  const signature = decodeSignature(header.slice(PREFIX.length), 'hex');
  if (!signature) return false;
  return anySignatureMatches(secrets, [signature], (secret) => hmac('sha256', secret, request.rawBody));
}
