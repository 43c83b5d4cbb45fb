// Shopify signs the raw body, base64 digest: https://shopify.dev/docs/apps/build/webhooks/subscribe/https
import { headerValue } from '../headers.js';
import { anySignatureMatches, decodeSignature, hmac } from './hmac.js';
import type { SignedRequest } from './request.js';

/** Verifies `x-shopify-hmac-sha256: <base64>`, HMAC-SHA256 of the raw body. */
export function verifyShopify(secrets: readonly string[], request: SignedRequest): boolean {
  const header = headerValue(request.headers, 'x-shopify-hmac-sha256');
  const signature = header === undefined ? undefined : decodeSignature(header, 'base64');
  if (!signature) return false;
  return anySignatureMatches(secrets, [signature], (secret) => hmac('sha256', secret, request.rawBody));
}
