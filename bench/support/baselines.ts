/**
 * Hand-written verifiers: what a developer writes from each sender's documentation with
 * `crypto.createHmac` and `timingSafeEqual`, nothing more. They are the baselines where a sender
 * ships no verifying SDK (Slack, Shopify) and the "bare" receiver of the receiver and
 * throughput benches (Stripe). They check what the documentation says to check, and no more.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

const TOLERANCE_SECONDS = 300;

/** https://api.slack.com/authentication/verifying-requests-from-slack */
export function verifySlackByHand(secret: string, rawBody: Buffer, signature: string, timestamp: string, nowSeconds: number): boolean {
  if (Math.abs(nowSeconds - Number(timestamp)) > TOLERANCE_SECONDS) return false;
  const expected = Buffer.from(`v0=${createHmac('sha256', secret).update(`v0:${timestamp}:`).update(rawBody).digest('hex')}`);
  const given = Buffer.from(signature);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** https://shopify.dev/docs/apps/build/webhooks/subscribe/https#step-2-validate-the-origin-of-your-webhook-to-ensure-its-coming-from-shopify */
export function verifyShopifyByHand(secret: string, rawBody: Buffer, signature: string): boolean {
  const expected = createHmac('sha256', secret).update(rawBody).digest();
  const given = Buffer.from(signature, 'base64');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

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
