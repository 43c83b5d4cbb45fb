import { describe, expect, it } from 'vitest';
import { QUEUES } from '../../functions/manifest.js';
import { useLocalStack } from '../support/local-stack.js';
import { createTrigger, deliver, TEST_FLOWS_DIR, waitForExecutions } from '../support/webhooks.js';

// 14 s of wait: a one-state flow that fails must be answered 502 even while other processes keep
// both cores busy (at 8 s it was 504 under a load of 15), and still well before `slow`'s 20 s.
// As `npm start` runs it: the flow worker and Step Functions on their own thread.
const stack = useLocalStack({ flowsDir: TEST_FLOWS_DIR, flowWorkerThread: true, env: { WAIT_TIMEOUT_MS: '14000', TRIGGER_CACHE_TTL_MS: '0' } });

describe.concurrent('wait for completion', () => {
  it('answers with the flow output as the JSON body', async () => {
    const token = await stack.token('wait-owner');
    const trigger = await createTrigger(stack, token, { flow: 'echo', response_mode: 'wait' });
    const res = await deliver(trigger.url, JSON.stringify({ id: 'evt_1', type: 'ping', amount: 3 }));
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ received: { id: 'evt_1', type: 'ping', amount: 3 }, webhook_id: trigger.webhook_id });
    const [execution] = await waitForExecutions(stack, token, trigger.id, (e) => e.length === 1);
    expect(execution).toMatchObject({ status: 'succeeded', attempts: 1, type: 'ping' });
  });

  it('a failing flow answers 502 flow_failed', async () => {
    const token = await stack.token('wait-owner');
    const trigger = await createTrigger(stack, token, { flow: 'always-fails', response_mode: 'wait' });
    const res = await deliver(trigger.url, '{}');
    expect(res.status).toBe(502);
    expect(res.json).toEqual({ error: 'flow_failed' });
  });

  it('a flow slower than WAIT_TIMEOUT_MS answers 504 flow_timeout', async () => {
    const token = await stack.token('wait-owner');
    const trigger = await createTrigger(stack, token, { flow: 'slow', response_mode: 'wait' });
    const started = Date.now();
    const res = await deliver(trigger.url, '{}');
    expect(res.status).toBe(504);
    expect(res.json).toEqual({ error: 'flow_timeout' });
    // Answered before the flow's 20 s Wait could have ended: the receiver did not wait for it.
    expect(Date.now() - started).toBeLessThan(20_000);
  });
});

describe.concurrent('acknowledge immediately', () => {
  it('answers accepted, then the execution succeeds with the flow output', async () => {
    const token = await stack.token('ack-owner');
    const trigger = await createTrigger(stack, token, { flow: 'echo' });
    const res = await deliver(trigger.url, JSON.stringify({ id: 'evt_ack', type: 'invoice.paid' }));
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ status: 'accepted', event_id: 'evt_ack' });
    const [execution] = await waitForExecutions(stack, token, trigger.id, (e) => e[0]?.status === 'succeeded');
    expect(execution).toMatchObject({ event_id: 'evt_ack', type: 'invoice.paid', attempts: 1, output: { received: { id: 'evt_ack' }, event_id: 'evt_ack' } });
  });

  it(`a flow that always fails is tried ${QUEUES.flowEvents.maxReceiveCount} times and recorded failed`, async () => {
    const token = await stack.token('ack-owner');
    const trigger = await createTrigger(stack, token, { flow: 'always-fails' });
    await deliver(trigger.url, JSON.stringify({ id: 'evt_doomed' }));
    const [execution] = await waitForExecutions(stack, token, trigger.id, (e) => e[0]?.status === 'failed', 80_000);
    expect(execution).toMatchObject({ event_id: 'evt_doomed', attempts: QUEUES.flowEvents.maxReceiveCount, error: 'Fixture.AlwaysFails' });
  }, 90_000);

  it('GET /health counts the deliveries the flow worker thread has not settled, and none once every flow has run', async () => {
    const token = await stack.token('backlog-owner');
    const trigger = await createTrigger(stack, token, { flow: 'echo' });
    for (let i = 0; i < 5; i++) expect((await deliver(trigger.url, JSON.stringify({ id: `evt_backlog_${i}` }))).status).toBe(200);
    await waitForExecutions(stack, token, trigger.id, (e) => e.length === 5 && e.every((x) => x.status === 'succeeded'));
    // The thread reports each settled message to the main thread's ledger; one it lost would wait for ever.
    const backlog = async () => ((await (await fetch(`${stack.baseUrl}/health`)).json()) as { backlog: { waiting: number } }).backlog;
    const deadline = Date.now() + 30_000;
    while ((await backlog()).waiting !== 0 && Date.now() < deadline) await new Promise((done) => setTimeout(done, 100));
    expect(await backlog()).toEqual({ waiting: 0, oldest_age_seconds: null });
  });
});
