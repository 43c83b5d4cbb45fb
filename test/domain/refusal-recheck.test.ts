import { describe, expect, it } from 'vitest';
import { MeteredRefusalBudget } from '../../functions/adapters/metered-refusal-budget.js';
import type { ExecutionStore } from '../../functions/domain/flows/ports.js';
import type { SecretBox } from '../../functions/domain/secret-box.js';
import type { TriggerRecord } from '../../functions/domain/triggers/trigger.js';
import { receiveWebhook, type ReceiverDeps } from '../../functions/domain/webhooks/receive-webhook.js';
import { MAX_REFUSED_RECORDS_PER_MINUTE, RefusalBudget } from '../../functions/domain/webhooks/refusal-budget.js';
import { CachedTriggerLookup } from '../../functions/domain/webhooks/trigger-lookup.js';
import { AppError } from '../../functions/shared/errors.js';
import type { MetricsRecorder } from '../../functions/shared/metrics.js';
import { signGithub } from '../support/signers.js';

/**
 * A refusal is always checked again against the stored trigger: a change since the cached copy was
 * read (a new secret, key, address, the trigger enabled again) must let its first request in, even
 * one right after a flood of refusals. What a flood costs is one read per refusal (concurrent ones
 * shared), never a decryption of an unchanged trigger's secret.
 */
const WEBHOOK_ID = 'B'.repeat(32);
const BODY = JSON.stringify({ type: 'listed' });
const T0 = Date.parse('2026-11-28T12:00:00.000Z');

const record = (secret: string, version: number): TriggerRecord => ({
  id: 't1', account_id: 'a1', webhook_id: WEBHOOK_ID, flow: 'echo', response_mode: 'acknowledge', event_filter: ['not-this-one'],
  api_key_enabled: false, signature: { service: 'github', secret_sealed: secret }, allowed_source_ips: null, enabled: true, deduplicate: false,
  created_at: new Date(T0).toISOString(), updated_at: new Date(T0).toISOString(), version,
});

/** A receiver over a real `CachedTriggerLookup` (TTL one minute) of a stored trigger a test can change, on a clock it steps. */
function setup() {
  let now = T0;
  let stored = record('old-secret', 1);
  let reads = 0;
  const store = { findByWebhookId: async () => (reads++, stored) };
  // The "sealed" secret is the secret itself: this test is about when the trigger is read.
  let opened = 0;
  const secretBox = { open: async (sealed: string) => (opened++, sealed) } as unknown as SecretBox;
  const executions = { record: async () => undefined, countRefusal: async () => true } as unknown as ExecutionStore;
  const deps: ReceiverDeps = {
    triggers: new CachedTriggerLookup(store, secretBox, 60_000, () => now),
    executions,
    queue: { send: async () => undefined },
    flows: { run: async () => ({ status: 'succeeded', output: null }) },
    now: () => now,
    newId: () => 'id',
    refusals: new RefusalBudget(executions),
    maxBodyBytes: 10_000,
    waitTimeoutMs: 1000,
    keys: { fetchText: async (url) => { throw new Error(`no network in this test: ${url}`); } },
    adoptSecret: async () => 'has_secret',
  };
  const deliver = async (secret: string): Promise<number | string> => {
    try {
      const headers = { 'content-type': 'application/json', ...(await signGithub({ secret, body: BODY })) };
      return (await receiveWebhook(deps, {
        webhookId: WEBHOOK_ID, method: 'POST', headers, query: {}, rawBody: Buffer.from(BODY), publicUrl: `https://hooks.example.com/webhooks/${WEBHOOK_ID}`, sourceIp: '203.0.113.7',
      })).status;
    } catch (error) {
      if (error instanceof AppError) return error.code;
      throw error;
    }
  };
  return {
    deliver,
    reads: () => reads,
    opened: () => opened,
    step: (ms: number) => void (now += ms),
    rotate: (secret: string) => void (stored = record(secret, stored.version + 1)),
  };
}

describe('a refusal checked again against the stored trigger', () => {
  it('every refusal reads the trigger again, and a secret changed right after a flood admits its first delivery', async () => {
    const receiver = setup();
    expect(await receiver.deliver('old-secret')).toBe(200);
    expect(receiver.reads()).toBe(1);
    for (let i = 0; i < 5; i++) expect(await receiver.deliver('forged')).toBe('invalid_signature');
    expect(receiver.reads()).toBe(6);
    receiver.step(1);
    receiver.rotate('new-secret');
    expect(await receiver.deliver('new-secret')).toBe(200);
  });

  it('a flood re-reads but opens an unchanged trigger\'s secret once', async () => {
    const receiver = setup();
    expect(await receiver.deliver('old-secret')).toBe(200);
    for (let i = 0; i < 5; i++) expect(await receiver.deliver('forged')).toBe('invalid_signature');
    expect(receiver.opened()).toBe(1);
  });
});

describe('MeteredRefusalBudget', () => {
  it(`names the trigger on every refusal's line and counts WebhookRefusalsNotRecorded past the budget of ${MAX_REFUSED_RECORDS_PER_MINUTE} a minute`, async () => {
    const counted: string[] = [];
    const noted: [string, string][] = [];
    const metrics: MetricsRecorder = { count: (name) => void counted.push(name), milliseconds: () => undefined, note: (field, value) => void noted.push([field, value]) };
    const budget = new MeteredRefusalBudget(new RefusalBudget({ countRefusal: async () => true }), metrics);
    const granted: boolean[] = [];
    for (let i = 0; i < MAX_REFUSED_RECORDS_PER_MINUTE + 3; i++) granted.push(await budget.take('t1', T0 + i));
    expect(granted.filter(Boolean)).toHaveLength(MAX_REFUSED_RECORDS_PER_MINUTE);
    expect(counted).toEqual(['WebhookRefusalsNotRecorded', 'WebhookRefusalsNotRecorded', 'WebhookRefusalsNotRecorded']);
    expect(noted).toHaveLength(MAX_REFUSED_RECORDS_PER_MINUTE + 3);
    expect(new Set(noted.map(([field, value]) => `${field}=${value}`))).toEqual(new Set(['trigger=t1']));
  });

  it('records ten refusals a trigger a minute: enough to show a wrong secret and what a flood sends, 30 write units at most', () => {
    expect(MAX_REFUSED_RECORDS_PER_MINUTE).toBe(10);
  });
});
