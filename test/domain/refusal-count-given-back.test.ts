import { describe, expect, it } from 'vitest';
import type { ExecutionStore, RefusalOutcome } from '../../functions/domain/flows/ports.js';
import type { TriggerRecord } from '../../functions/domain/triggers/trigger.js';
import { receiveWebhook, type ReceiverDeps } from '../../functions/domain/webhooks/receive-webhook.js';
import { RefusalBudget } from '../../functions/domain/webhooks/refusal-budget.js';

/**
 * A refusal is counted in the trigger's delivery counts by the write that takes its recording
 * budget, before its record is written: when that record fails, the count is taken back, so the
 * chart never counts a delivery the list lacks. The refusal is answered either way.
 */
const NOW = new Date('2026-11-28T00:00:30.000Z');
const WEBHOOK_ID = 'B'.repeat(32);

const trigger: TriggerRecord = {
  id: 't1', account_id: 'a1', webhook_id: WEBHOOK_ID, flow: 'echo', response_mode: 'acknowledge', event_filter: [],
  api_key_enabled: false, signature: { service: 'github', secret_sealed: 's' }, allowed_source_ips: null, enabled: true, deduplicate: false,
  created_at: NOW.toISOString(), updated_at: NOW.toISOString(), version: 1,
} as TriggerRecord;

function receiver(recordFails: boolean) {
  const counted: [string, number, RefusalOutcome | undefined][] = [];
  const givenBack: [string, number, RefusalOutcome | undefined][] = [];
  const recorded: string[] = [];
  const executions = {
    record: async (_ref: unknown, execution: { status: string }) => {
      if (recordFails) throw new Error('the table is unavailable');
      recorded.push(execution.status);
    },
    countRefusal: async (triggerId: string, minute: number, _max: number, outcome?: RefusalOutcome) => (counted.push([triggerId, minute, outcome]), true),
    uncountRefusal: async (triggerId: string, minute: number, outcome?: RefusalOutcome) => void givenBack.push([triggerId, minute, outcome]),
  } as unknown as ExecutionStore;
  const deps: ReceiverDeps = {
    triggers: { find: async () => ({ record: trigger, signingSecret: 'secret', cached: true }), findFresh: async () => ({ record: trigger, signingSecret: 'secret' }) },
    executions,
    queue: { send: async () => undefined },
    flows: { run: async () => ({ status: 'succeeded', output: null }) },
    now: () => NOW.getTime(),
    newId: () => 'id',
    refusals: new RefusalBudget(executions),
    maxBodyBytes: 1000,
    waitTimeoutMs: 1000,
    keys: { fetchText: async (url) => { throw new Error(`no network in this test: ${url}`); } },
    adoptSecret: async () => 'has_secret',
  } as ReceiverDeps;
  const send = () => receiveWebhook(deps, {
    webhookId: WEBHOOK_ID, method: 'POST', headers: { 'content-type': 'application/json', 'x-hub-signature-256': 'sha256=forged' }, query: {},
    rawBody: Buffer.from('{"action":"opened"}'), publicUrl: `https://hooks.example.com/webhooks/${WEBHOOK_ID}`, sourceIp: '203.0.113.7',
  }).then((reply) => reply.status, (error: { status?: number; code?: string }) => error.code ?? error.status);
  return { send, counted, givenBack, recorded };
}

describe('a refusal counted by its recording budget', () => {
  const minute = Math.floor(NOW.getTime() / 60_000);

  it('is counted once, as refused, by the budget\'s write, and its record is written', async () => {
    const r = receiver(false);
    expect(await r.send()).toBe('invalid_signature');
    expect(r.counted).toEqual([['t1', minute, 'refused']]);
    expect(r.recorded).toEqual(['refused']);
    expect(r.givenBack).toEqual([]);
  });

  it('is taken back when its record cannot be written, and still answered', async () => {
    const r = receiver(true);
    expect(await r.send()).toBe('invalid_signature');
    expect(r.counted).toEqual([['t1', minute, 'refused']]);
    expect(r.givenBack).toEqual([['t1', minute, 'refused']]);
  });
});
