import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, describe, expect, it } from 'vitest';
import { sqsClient } from '../../functions/adapters/aws/clients/sqs.js';
import { LambdaEventInvoker } from '../../functions/adapters/aws/lambda-event-invoker.js';
import { QUIET_MAX_DELIVERIES } from '../../functions/domain/flows/quiet-rule.js';
import { QUEUES } from '../../functions/manifest.js';
import { retryDelaySeconds } from '../../functions/domain/flows/run-queued-flow.js';
import { call, useLocalStack } from '../support/local-stack.js';
import { createTrigger, deliver, TEST_FLOWS_DIR, waitForExecutions } from '../support/webhooks.js';

/** Every invocation of the flow worker: one flow message invoked directly, or a batch of the flow queue's bodies. */
const invocations: ({ kind: 'direct'; body: string } | { kind: 'batch'; bodies: string[] })[] = [];
/** Direct invocations whose body holds one of these crash, as a worker that throws or times out. */
const crashOn = new Set<string>();

const stack = useLocalStack({
  flowsDir: TEST_FLOWS_DIR,
  env: { TRIGGER_CACHE_TTL_MS: '0' },
  aroundInvocation: async (fn, event, invoke) => {
    if (fn !== 'flowWorker') return invoke();
    const records = (event as { Records?: { body: string }[] }).Records;
    if (records) {
      invocations.push({ kind: 'batch', bodies: records.map((record) => record.body) });
    } else {
      const body = JSON.stringify(event);
      invocations.push({ kind: 'direct', body });
      if ([...crashOn].some((marker) => body.includes(marker))) throw new Error('Task timed out after 60.00 seconds');
    }
    return invoke();
  },
});

/**
 * Direct invocations the receiver gave up on (any failure, its 2 s wait included) and sent to the
 * queue instead, by body. One whose answer came after the wait may still have been taken, and the
 * event then runs both ways (at least once, as with a queue): on a loaded machine a burst's
 * invocations can wait that long for the event loop.
 */
const fellBack: string[] = [];
const invokeDirectly = LambdaEventInvoker.prototype.invoke;
LambdaEventInvoker.prototype.invoke = async function (this: LambdaEventInvoker, body: string) {
  try {
    return await invokeDirectly.call(this, body);
  } catch (error) {
    fellBack.push(body);
    throw error;
  }
};
// Test files share their worker's modules (vitest.config.ts): the next file gets the invoker as it was.
afterAll(() => {
  LambdaEventInvoker.prototype.invoke = invokeDirectly;
});

const direct = (marker: string) => invocations.filter((i): i is { kind: 'direct'; body: string } => i.kind === 'direct' && i.body.includes(marker));
const batched = (marker: string) => invocations.flatMap((i) => (i.kind === 'batch' ? i.bodies.filter((body) => body.includes(marker)).map(() => i) : []));

describe.concurrent('the direct path of a quiet trigger', () => {
  it('a quiet delivery runs its flow with no flow-queue message: one direct invocation, no batch', async () => {
    const token = await stack.token('quiet-owner');
    const trigger = await createTrigger(stack, token, { flow: 'echo' });
    const res = await deliver(trigger.url, JSON.stringify({ id: 'evt_quiet_one' }));
    expect(res.json).toEqual({ status: 'accepted', event_id: 'evt_quiet_one' });
    const [execution] = await waitForExecutions(stack, token, trigger.id, (e) => e[0]?.status === 'succeeded');
    expect(execution).toMatchObject({ status: 'succeeded', attempts: 1 });
    expect([direct('evt_quiet_one').length, batched('evt_quiet_one').length]).toEqual([1, 0]);
  });

  it('a burst goes through the queue, in batches of several events', async () => {
    const token = await stack.token('burst-owner');
    const trigger = await createTrigger(stack, token, { flow: 'echo' });
    const count = 60;
    const startedAt = Date.now();
    const answers = await Promise.all(Array.from({ length: count }, (_, i) => deliver(trigger.url, JSON.stringify({ id: `evt_burst_${trigger.id}_${i}` }))));
    const seconds = (Date.now() - startedAt) / 1000;
    expect(answers.every((answer) => answer.status === 200)).toBe(true);
    await waitForExecutions(stack, token, trigger.id, (e) => e.length === count && e.every((x) => x.status === 'succeeded'), 60_000);
    const marker = `evt_burst_${trigger.id}_`;
    // The receiver (one environment here) let at most the rule's allowance a second go direct,
    // however fast this machine took the burst; the rest went to the queue.
    const directly = direct(marker).length;
    expect(directly).toBeLessThanOrEqual(QUIET_MAX_DELIVERIES * Math.ceil(seconds + 1));
    const batches = invocations.filter((i) => i.kind === 'batch' && i.bodies.some((body) => body.includes(marker))) as { bodies: string[] }[];
    const queued = batches.reduce((sum, b) => sum + b.bodies.filter((body) => body.includes(marker)).length, 0);
    // Every event ran, and only a direct invocation the receiver gave up on ran one a second time.
    const ran = new Set([...direct(marker).map((i) => i.body), ...batches.flatMap((b) => b.bodies)].flatMap((body) => body.match(new RegExp(`${marker}\\d+`, 'g')) ?? []));
    expect(ran.size).toBe(count);
    const gaveUp = fellBack.filter((body) => body.includes(marker)).length;
    expect(directly + queued).toBeGreaterThanOrEqual(count);
    expect(directly + queued - count).toBeLessThanOrEqual(gaveUp);
    expect(queued).toBeGreaterThan(count / 3);
    // And the queue batched them: fewer worker invocations than events.
    expect(batches.length).toBeLessThan(queued);
  }, 90_000);

  it(`a failed direct attempt is retried through the queue with its backoff, and the event ends in the dead-letter queue after ${QUEUES.flowEvents.maxReceiveCount} attempts in all`, async () => {
    const token = await stack.token('direct-dlq-owner');
    const trigger = await createTrigger(stack, token, { flow: 'always-fails' });
    await deliver(trigger.url, JSON.stringify({ id: 'evt_direct_dead' }));
    const [execution] = await waitForExecutions(stack, token, trigger.id, (e) => e[0]?.status === 'failed', 120_000);
    expect(execution).toMatchObject({ status: 'failed', attempts: QUEUES.flowEvents.maxReceiveCount, error: 'Fixture.AlwaysFails' });
    // Each retry waited out its backoff (1 s base here: 1, 2, 4, 8 s), the direct attempt's as the queued ones'.
    const timeline = execution.timeline as { attempt: number; started_at: string; finished_at: string }[];
    expect(timeline.map((a) => a.attempt)).toEqual([1, 2, 3, 4, 5]);
    for (let k = 1; k < timeline.length; k++) {
      const waited = Date.parse(timeline[k]!.started_at) - Date.parse(timeline[k - 1]!.finished_at);
      expect(waited, `before attempt ${k + 1}`).toBeGreaterThanOrEqual(retryDelaySeconds(k, 1) * 1000 - 100);
    }
    expect(direct('evt_direct_dead')).toHaveLength(1);
    const sqs = sqsClient(stack.aws);
    let body: string | undefined;
    for (let i = 0; i < 30 && !body; i++) {
      const received = await sqs.send(new ReceiveMessageCommand({ QueueUrl: stack.engines.env.FLOW_QUEUE_DLQ_URL, WaitTimeSeconds: 1, MaxNumberOfMessages: 10 }));
      body = received.Messages?.map((m) => m.Body!).find((b) => b.includes('evt_direct_dead'));
    }
    // Dead-lettered by the worker with all its attempts counted, none of them left to count against a redrive's.
    expect(JSON.parse(body!)).toMatchObject({ flow: 'always-fails', attempts_before: QUEUES.flowEvents.maxReceiveCount, input: { trigger: { event_id: 'evt_direct_dead' } } });
    expect(JSON.parse(body!)).not.toHaveProperty('direct_attempts');
    // The other attempts came from the queue, and no receive after the last.
    expect(batched('evt_direct_dead').length).toBe(QUEUES.flowEvents.maxReceiveCount - 1);
  }, 150_000);

  it('a worker that throws on a direct invocation: Lambda\'s destination record reaches the queue, and runs as the retry', async () => {
    crashOn.add('evt_worker_crash');
    const token = await stack.token('crash-owner');
    const trigger = await createTrigger(stack, token, { flow: 'echo' });
    await deliver(trigger.url, JSON.stringify({ id: 'evt_worker_crash' }));
    const [execution] = await waitForExecutions(stack, token, trigger.id, (e) => e[0]?.status === 'succeeded', 60_000);
    // The crashed invocation was attempt 1 (it may have run the flow: at least once, as SQS allows).
    expect(execution).toMatchObject({ status: 'succeeded', attempts: 2 });
    expect(direct('evt_worker_crash')).toHaveLength(1);
    const retried = batched('evt_worker_crash');
    expect(retried).toHaveLength(1);
    const record = JSON.parse((retried[0] as { bodies: string[] }).bodies.find((body) => body.includes('evt_worker_crash'))!);
    expect(record).toMatchObject({ requestContext: { condition: 'RetriesExhausted', approximateInvokeCount: 1 }, requestPayload: { flow: 'echo' } });
  }, 90_000);

});

describe('threats: who may invoke the flow worker', () => {
  const arn = 'arn:aws:lambda:us-east-1:000000000000:function:flowWorker';
  const message = JSON.stringify({ v: 1, trigger_id: 't', flow: 'echo', ref: { triggerId: 't', executionId: '20260101T000000000Z_x' }, input: { trigger: { event: {} } } });

  it('a caller without the stack\'s credentials is refused (403), as IAM refuses all but the receiver\'s role', async () => {
    const stranger = new LambdaEventInvoker(arn, { endpoint: stack.engines.env.AWS_ENDPOINT_URL_LAMBDA!, region: 'us-east-1', credentials: async () => ({ accessKeyId: 'local', secretAccessKey: 'guessed' }) });
    await expect(stranger.invoke(message)).rejects.toThrow(/answered 403/);
    const unsigned = await fetch(`${stack.engines.env.AWS_ENDPOINT_URL_LAMBDA}/2015-03-31/functions/${encodeURIComponent(arn)}/invocations`, { method: 'POST', headers: { 'x-amz-invocation-type': 'Event' }, body: message });
    expect(unsigned.status).toBe(403);
  });

  it('a payload that is not a flow message runs nothing and is not retried (no destination record)', async () => {
    const before = invocations.length;
    const insider = new LambdaEventInvoker(arn, { endpoint: stack.engines.env.AWS_ENDPOINT_URL_LAMBDA!, region: 'us-east-1', credentials: async () => ({ accessKeyId: 'local', secretAccessKey: 'local' }) });
    await insider.invoke(JSON.stringify({ hostile: true, requestPayload: { v: 1 } }));
    for (let i = 0; i < 50 && invocations.length === before; i++) await new Promise((r) => setTimeout(r, 50));
    const batchesBefore = invocations.filter((i) => i.kind === 'batch' && i.bodies.some((b) => b.includes('hostile'))).length;
    await new Promise((r) => setTimeout(r, 1500));
    expect(invocations.filter((i) => i.kind === 'batch' && i.bodies.some((b) => b.includes('hostile'))).length).toBe(batchesBefore);
    expect(batchesBefore).toBe(0);
  });
});

describe('the local stack\'s ledger', () => {
  it('GET /health\'s backlog empties once direct deliveries, their retries and their destination records have all settled', async () => {
    const token = await stack.token('health-owner');
    const trigger = await createTrigger(stack, token, { flow: 'echo' });
    await deliver(trigger.url, JSON.stringify({ id: 'evt_health' }));
    await waitForExecutions(stack, token, trigger.id, (e) => e[0]?.status === 'succeeded');
    const backlog = async () => (await call(stack, 'GET', '/health')).json.backlog as { waiting: number };
    const deadline = Date.now() + 20_000;
    while ((await backlog()).waiting !== 0 && Date.now() < deadline) await new Promise((done) => setTimeout(done, 100));
    expect(await backlog()).toEqual({ waiting: 0, oldest_age_seconds: null });
  });
});
