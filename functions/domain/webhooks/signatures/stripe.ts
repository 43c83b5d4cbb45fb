// Stripe signs `<t>.<raw body>`: https://docs.stripe.com/webhooks#verify-manually
import { headerValue } from '../headers.js';
import { anySignatureMatches, decodeSignature, hmac } from './hmac.js';
import { isFreshTimestamp, type SignedRequest } from './request.js';

/** Stripe's own default tolerance between the signed timestamp and now. */
export const STRIPE_TOLERANCE_SECONDS = 300;

/**
 * Verifies `stripe-signature: t=<unix>,v1=<hex>[,v1=<hex>...]`. Any `v1` may match (Stripe
 * sends one per active secret while rolling); other schemes such as `v0` are ignored.
 */
export function verifyStripe(secrets: readonly string[], request: SignedRequest): boolean {
  const header = headerValue(request.headers, 'stripe-signature');
  if (header === undefined) return false;
  let timestamp: string | undefined;
  const signatures: Buffer[] = [];
  for (const item of header.split(',')) {
    const separator = item.indexOf('=');
    if (separator < 0) continue;
    const key = item.slice(0, separator).trim();
    const value = item.slice(separator + 1).trim();
    if (key === 't') {
      if (timestamp !== undefined) return false; // two timestamps: which one was signed is ambiguous
      timestamp = value;
    } else if (key === 'v1') {
      const signature = decodeSignature(value, 'hex');
      if (signature) signatures.push(signature);
    }
  }
  if (timestamp === undefined || !isFreshTimestamp(timestamp, request.nowSeconds, STRIPE_TOLERANCE_SECONDS)) return false;
  const signedPrefix = `${timestamp}.`;
  return anySignatureMatches(secrets, signatures, (secret) => hmac('sha256', secret, signedPrefix, request.rawBody));
}
