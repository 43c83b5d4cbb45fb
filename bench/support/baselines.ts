/**
 * The hand-written verifier of the "bare" receiver in the receiver and throughput benches: what a
 * developer writes from Stripe's documentation with `crypto.createHmac` and `timingSafeEqual`, and
 * no more.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

const TOLERANCE_SECONDS = 300;

/** https://docs.stripe.com/webhooks#verify-manually: `t=<unix>,v1=<hex>` over `<t>.<body>`. */
export function verifyStripeByHand(secret: string, rawBody: string | Buffer, header: string, nowSeconds: number): boolean {
  let timestamp = '';
  const signatures: string[] = [];
  for (const item of header.split(',')) {
    const at = item.indexOf('=');
    if (item.slice(0, at) === 't') timestamp = item.slice(at + 1);
    else if (item.slice(0, at) === 'v1') signatures.push(item.slice(at + 1));
  }
  if (!timestamp || Math.abs(nowSeconds - Number(timestamp)) > TOLERANCE_SECONDS) return false;
  const expected = createHmac('sha256', secret).update(`${timestamp}.`).update(rawBody).digest();
  return signatures.some((signature) => {
    const given = Buffer.from(signature, 'hex');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}
