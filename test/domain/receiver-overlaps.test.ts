import { RefusalBudget } from '../../functions/domain/webhooks/refusal-budget.js';
import { describe, expect, it } from 'vitest';
import { hashApiKey } from '../../functions/domain/api-keys.js';
import type { ExecutionStore } from '../../functions/domain/flows/ports.js';
import type { TriggerRecord } from '../../functions/domain/triggers/trigger.js';
import { receiveWebhook, type IncomingWebhook, type ReceiverDeps } from '../../functions/domain/webhooks/receive-webhook.js';
import type { ActiveTrigger } from '../../functions/domain/webhooks/trigger-lookup.js';
import { AppError } from '../../functions/shared/errors.js';
import { signGithub } from '../support/signers.js';

/**
 * The receiver's checks against a trigger in an overlap, with a trigger "cache" that never expires:
 * the end of an overlap must not wait for it. Deliveries are filtered out (200 ignored), so no flow runs.
 */
const NOW = new Date('2024-05-01T12:00:00.000Z');
const ENDS = new Date(NOW.getTime() + 2000);
const WEBHOOK_ID = 'A'.repeat(32);
const BODY = JSON.stringify({ type: 'not-listed' });

const record = (change: Partial<TriggerRecord> = {}): TriggerRecord => ({
  id: 't1', account_id: 'a1', webhook_id: WEBHOOK_ID, flow: 'echo', response_mode: 'acknowledge', event_filter: ['listed'],
  api_key_enabled: false, signature: null, allowed_source_ips: null, enabled: true, deduplicate: false,
  created_at: NOW.toISOString(), updated_at: NOW.toISOString(), version: 2, ...change,
});

/** A receiver at time `now` over one trigger, which every lookup (cached or fresh) returns as it is. */
function receiver(trigger: ActiveTrigger, now: Date) {
  const executions = { record: async () => undefined, countRefusal: async () => true } as unknown as ExecutionStore;
  const deps: ReceiverDeps = {
    triggers: { find: async () => ({ ...trigger, cached: true }), findFresh: async () => trigger },
    executions,
    queue: { send: async () => undefined },
    flows: { run: async () => ({ status: 'succeeded', output: null }) },
    now: () => now.getTime(),
    newId: () => 'id',
    refusals: new RefusalBudget(executions),
    maxBodyBytes: 1000,
    waitTimeoutMs: 1000,
    keys: { fetchText: async (url) => { throw new Error(`no network in this test: ${url}`); } },
    adoptSecret: async () => 'has_secret',
  };
  return async (request: Partial<IncomingWebhook>): Promise<number | string> => {
    try {
      const reply = await receiveWebhook(deps, {
        webhookId: WEBHOOK_ID, method: 'POST', headers: { 'content-type': 'application/json' }, query: {}, rawBody: Buffer.from(BODY),
        publicUrl: `https://hooks.example.com/webhooks/${WEBHOOK_ID}`, sourceIp: '203.0.113.7', ...request,
        ...(request.headers && { headers: { 'content-type': 'application/json', ...request.headers } }),
      });
      return reply.status;
    } catch (error) {
      if (error instanceof AppError) return error.code;
      throw error;
    }
  };
}

describe('a rotated signing secret', () => {
  const rotated: ActiveTrigger = {
    record: record({ signature: { service: 'github', secret_sealed: 's', previous_secret_sealed: 'p', previous_secret_expires_at: ENDS.toISOString() } }),
    signingSecret: 'new-secret',
    previousSigningSecret: 'old-secret',
  };
  const signedWith = async (secret: string) => ({ headers: await signGithub({ secret, body: BODY }) });

  it('both secrets are accepted during the overlap', async () => {
    const receive = receiver(rotated, new Date(ENDS.getTime() - 1));
    expect(await receive(await signedWith('new-secret'))).toBe(200);
    expect(await receive(await signedWith('old-secret'))).toBe(200);
    expect(await receive(await signedWith('other-secret'))).toBe('invalid_signature');
  });

  it('once the overlap ends the old secret is refused, though the trigger with it is still cached', async () => {
    const receive = receiver(rotated, ENDS);
    expect(await receive(await signedWith('old-secret'))).toBe('invalid_signature');
    expect(await receive(await signedWith('new-secret'))).toBe(200);
  });

  it('an old secret the lookup did not open (its overlap had ended) is not needed', async () => {
    const receive = receiver({ ...rotated, previousSigningSecret: undefined }, NOW);
    expect(await receive(await signedWith('new-secret'))).toBe(200);
    expect(await receive(await signedWith('old-secret'))).toBe('invalid_signature');
  });
});

describe('a regenerated API key with an overlap', () => {
  const keyed: ActiveTrigger = {
    record: record({
      api_key_enabled: true, api_key_hash: hashApiKey('fgk_new'), previous_api_key_hash: hashApiKey('fgk_old'), previous_api_key_expires_at: ENDS.toISOString(),
    }),
  };

  it('both keys work during the overlap, in the header or the query', async () => {
    const receive = receiver(keyed, new Date(ENDS.getTime() - 1));
    expect(await receive({ headers: { 'x-api-key': 'fgk_new' } })).toBe(200);
    expect(await receive({ headers: { 'x-api-key': 'fgk_old' } })).toBe(200);
    expect(await receive({ query: { api_key: 'fgk_old' } })).toBe(200);
    expect(await receive({ headers: { 'x-api-key': 'fgk_other' } })).toBe('unauthorized');
  });

  it('once the overlap ends the old key is refused', async () => {
    const receive = receiver(keyed, ENDS);
    expect(await receive({ headers: { 'x-api-key': 'fgk_old' } })).toBe('unauthorized');
    expect(await receive({ headers: { 'x-api-key': 'fgk_new' } })).toBe(200);
  });
});

describe('allowed_source_ips', () => {
  const guarded: ActiveTrigger = {
    record: record({ allowed_source_ips: ['203.0.113.0/24'], api_key_enabled: true, api_key_hash: hashApiKey('fgk_key'), signature: { service: 'github', secret_sealed: 's' } }),
    signingSecret: 'secret',
  };
  const receive = receiver(guarded, NOW);

  it('lets in a delivery from an allowed address with its credentials', async () => {
    expect(await receive({ headers: { 'x-api-key': 'fgk_key', ...(await signGithub({ secret: 'secret', body: BODY })) } })).toBe(200);
  });

  it('refuses another address with 403 ip_not_allowed before the API key and signature are looked at', async () => {
    expect(await receive({ sourceIp: '198.51.100.1' })).toBe('ip_not_allowed');
    expect(new AppError('ip_not_allowed').status).toBe(403);
    expect(await receive({ sourceIp: '203.0.113.9' })).toBe('unauthorized');
  });

  it('reads only the address the gateway saw: X-Forwarded-For changes nothing', async () => {
    expect(await receive({ sourceIp: '198.51.100.1', headers: { 'x-forwarded-for': '203.0.113.7' } })).toBe('ip_not_allowed');
  });

  it('without an address lets nothing in', async () => {
    expect(await receive({ sourceIp: undefined })).toBe('ip_not_allowed');
  });

  it('comes after the id, the method and the size', async () => {
    expect(await receiver({ record: { ...guarded.record, enabled: false } }, NOW)({ sourceIp: '198.51.100.1' })).toBe('not_found');
    expect(await receive({ sourceIp: '198.51.100.1', webhookId: 'not-a-webhook-id' })).toBe('not_found');
    expect(await receive({ sourceIp: '198.51.100.1', method: 'GET' })).toBe('method_not_allowed');
    expect(await receive({ sourceIp: '198.51.100.1', rawBody: Buffer.alloc(1001) })).toBe('payload_too_large');
  });
});
