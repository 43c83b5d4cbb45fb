/**
 * BigCommerce webhooks, proven from BigCommerce's documentation, which gives two ways:
 * - a hook is created with custom `headers`, which BigCommerce sends with every callback; the user
 *   pastes the header they set as a header line;
 * - BigCommerce signs every callback as Standard Webhooks do (`webhook-id`, `webhook-timestamp`,
 *   `webhook-signature`), and its docs verify with the `standardwebhooks` library keyed by the
 *   base64 of the app's client secret: the user pastes the client secret.
 * https://developer.bigcommerce.com/docs/integrations/webhooks ("headers" on create a webhook;
 * "Webhook signature"), bigcommerce/docs docs/integrations/webhooks/https-webhook-overview.mdx
 */
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { checkSenderSecret } from '../../../functions/domain/webhooks/senders/secrets.js';
import { verifySender } from '../../../functions/domain/webhooks/senders/verify.js';
import { atClock, rowOf } from '../../support/sender-proof.js';
import { contextFor, NOW } from '../../support/verify-context.js';

/** The catalog's `bigcommerce` row. */
const BIGCOMMERCE = rowOf('bigcommerce');
const PASTED = 'X-Custom-Auth-Header: 7d4f7a2b-my-bigcommerce-value';
const BODY = JSON.stringify({ scope: 'store/order/created', store_id: '1025646', data: { type: 'order', id: 250 }, hash: 'dd70c0976e06b67aaf671e73f49dcb79230ebf9d', created_at: 1561479335, producer: 'stores/{store_hash}' });
const HEADERS = { 'X-Custom-Auth-Header': '7d4f7a2b-my-bigcommerce-value', 'Content-Type': 'application/json' };

const verify = (headers: Record<string, string>, secrets = [PASTED], body = BODY) => verifySender(BIGCOMMERCE, contextFor({ body, headers, secrets }));

describe('bigcommerce: the custom header set on the hook', () => {
  it('a genuine callback passes', async () => expect(await verify(HEADERS)).toBe(true));
  it('another value fails', async () => expect(await verify({ ...HEADERS, 'X-Custom-Auth-Header': 'guess' })).toBe(false));
  it('a missing header fails', async () => expect(await verify({ 'Content-Type': 'application/json' })).toBe(false));
  it('a changed body still passes: the header authenticates BigCommerce, it does not sign the body', async () =>
    expect(await verify(HEADERS, [PASTED], '{}')).toBe(true));
  it('rotation: either of two header lines passes', async () =>
    expect(await verify(HEADERS, ['X-Custom-Auth-Header: old', PASTED])).toBe(true));
  it('checkSenderSecret accepts the header line', () => expect(checkSenderSecret(BIGCOMMERCE, PASTED)).toBeUndefined());
});

/** An app's client secret, as the Developer Portal shows it. */
const CLIENT_SECRET = 'hvx8ybz5m1c0o0j4f6pn2fy5b9jl0mk';
const OTHER_CLIENT_SECRET = 'b2k0d9rmv7q1w3e5t8y6u4i2o0p9a8s';
const MESSAGE_ID = 'msg_2lNqa2b8ZKoJvP6Tq8NsOe0cZ1k';

/** A callback signed as BigCommerce signs it: the `standardwebhooks` library keyed by base64(client secret), as its docs do. */
function signed(clientSecret: string, at = NOW, body = BODY): Record<string, string> {
  const signature = new Webhook(Buffer.from(clientSecret).toString('base64')).sign(MESSAGE_ID, new Date(at * 1000), body);
  return { 'Content-Type': 'application/json', 'webhook-id': MESSAGE_ID, 'webhook-timestamp': String(at), 'webhook-signature': signature };
}

describe('bigcommerce: Standard Webhooks signing by the app\'s client secret, where the webhook-* headers are present', () => {
  it('verifySender(bigcommerce) returns true for a callback the standardwebhooks library signed, which the library itself verifies', async () => {
    const headers = signed(CLIENT_SECRET);
    expect(await verify(headers, [CLIENT_SECRET])).toBe(true);
    const official = await atClock(NOW, () => new Webhook(Buffer.from(CLIENT_SECRET).toString('base64')).verify(BODY, headers));
    expect(official).toEqual(JSON.parse(BODY));
  });

  it('verifySender(bigcommerce) returns false for a changed body', async () =>
    expect(await verify(signed(CLIENT_SECRET), [CLIENT_SECRET], `${BODY} `)).toBe(false));

  it('verifySender(bigcommerce) returns false for a callback signed with another client secret', async () =>
    expect(await verify(signed(OTHER_CLIENT_SECRET), [CLIENT_SECRET])).toBe(false));

  it('verifySender(bigcommerce) returns false without the webhook-signature header', async () => {
    const { 'webhook-signature': _signature, ...unsigned } = signed(CLIENT_SECRET);
    expect(await verify(unsigned, [CLIENT_SECRET])).toBe(false);
  });

  it('verifySender(bigcommerce) returns false for a timestamp 301 s old or ahead, and true at exactly 300 s', async () => {
    expect(await verify(signed(CLIENT_SECRET, NOW - 301), [CLIENT_SECRET])).toBe(false);
    expect(await verify(signed(CLIENT_SECRET, NOW + 301), [CLIENT_SECRET])).toBe(false);
    expect(await verify(signed(CLIENT_SECRET, NOW - 300), [CLIENT_SECRET])).toBe(true);
  });

  it('verifySender(bigcommerce) returns true when the previous client secret of a rotation signed', async () =>
    expect(await verify(signed(OTHER_CLIENT_SECRET), [CLIENT_SECRET, OTHER_CLIENT_SECRET])).toBe(true));

  it('a trigger holding the header line still verifies callbacks that also carry the signature headers', async () =>
    expect(await verify({ ...signed(OTHER_CLIENT_SECRET), 'X-Custom-Auth-Header': '7d4f7a2b-my-bigcommerce-value' }, [PASTED])).toBe(true));

  it('neither way lends the other its secret: a header line is no signing key, and a client secret is no header', async () => {
    expect(await verify(signed(CLIENT_SECRET), [PASTED])).toBe(false);
    expect(await verify({ ...HEADERS, 'X-Custom-Auth-Header': CLIENT_SECRET }, [CLIENT_SECRET])).toBe(false);
  });

  it('checkSenderSecret accepts the client secret, and names both forms for a secret of neither', () => {
    expect(checkSenderSecret(BIGCOMMERCE, CLIENT_SECRET)).toBeUndefined();
    expect(checkSenderSecret(BIGCOMMERCE, ` ${CLIENT_SECRET}`)).toMatch(/spaces.*; or .*Name: value/);
  });
});
