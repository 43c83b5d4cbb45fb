/**
 * BigCommerce webhooks, proven from BigCommerce's documentation (no signature, no verifying
 * library): a hook is created with custom `headers`, which BigCommerce sends with every callback;
 * the user pastes the header they set as a header line.
 * https://developer.bigcommerce.com/docs/integrations/webhooks ("headers" on create a webhook)
 */
import { describe, expect, it } from 'vitest';
import { checkSenderSecret } from '../../../functions/domain/webhooks/senders/secrets.js';
import { verifySender } from '../../../functions/domain/webhooks/senders/verify.js';
import { rowOf } from '../../support/sender-proof.js';
import { contextFor } from '../../support/verify-context.js';

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
