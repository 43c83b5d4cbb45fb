import type { Context } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { createFlowWorkerHandler } from '../../functions/handlers/flow-worker.js';
import type { DeliveryStatsStore } from '../../functions/domain/stats/ports.js';
import { DirectFirstQueue, MAX_DIRECT_MESSAGE_BYTES } from '../../functions/domain/flows/direct-first-queue.js';
import { retryOfDestinationRecord } from '../../functions/domain/flows/direct-retry.js';
import { parseFlowMessage } from '../../functions/domain/flows/message.js';
import type { ExecutionChange, ExecutionStore, FlowResult } from '../../functions/domain/flows/ports.js';
import { QUIET_MAX_DELIVERIES, QUIET_WINDOW_MS, QuietRule } from '../../functions/domain/flows/quiet-rule.js';
import { ATTEMPTS_EXHAUSTED, FlowAttemptFailed, retryDelaySeconds, runQueuedFlow, type WorkerDeps } from '../../functions/domain/flows/run-queued-flow.js';

const REF = { triggerId: 't1', executionId: '20261124T105204000Z_abc' };
const MESSAGE = { v: 1, trigger_id: 't1', flow: 'echo', ref: REF, input: { trigger: { event: {} } } };
const BODY = JSON.stringify(MESSAGE);

describe('QuietRule: a trigger is quiet in an environment until it gets busy there', () => {
  it(`takes up to ${QUIET_MAX_DELIVERIES} deliveries of a trigger within ${QUIET_WINDOW_MS} ms as quiet, then the next as busy`, () => {
    let now = 0;
    const rule = new QuietRule(() => now);
    const verdicts = Array.from({ length: QUIET_MAX_DELIVERIES + 2 }, () => { now += 10; return rule.arrive('t1'); });
    expect(verdicts).toEqual([...Array(QUIET_MAX_DELIVERIES).fill(true), false, false]);
  });

  it('is quiet again once the window has passed', () => {
    let now = 0;
    const rule = new QuietRule(() => now);
    for (let i = 0; i < QUIET_MAX_DELIVERIES + 5; i++) rule.arrive('t1');
    expect(rule.arrive('t1')).toBe(false);
    now += QUIET_WINDOW_MS;
    expect(rule.arrive('t1')).toBe(true);
  });

  it('events one at a time, a batch\'s length apart (125 ms and more), stay quiet for ever', () => {
    let now = 0;
    const rule = new QuietRule(() => now);
    for (let i = 0; i < 100; i++) {
      now += 1000 / QUIET_MAX_DELIVERIES;
      expect(rule.arrive('t1')).toBe(true);
    }
  });

  it('threat: flooding one trigger makes that trigger busy (its events go through the queue, as before) and no other', () => {
    const rule = new QuietRule(() => 0);
    for (let i = 0; i < 10_000; i++) rule.arrive('flooded');
    expect(rule.arrive('flooded')).toBe(false);
    expect(rule.arrive('other')).toBe(true);
  });

  it('threat: deliveries over many triggers keep what it remembers bounded (the oldest trigger is forgotten, so counts as quiet)', () => {
    const rule = new QuietRule(() => 0, { maxTriggers: 100 });
    for (let i = 0; i < 10; i++) rule.arrive('first');
    for (let i = 0; i < 5_000; i++) rule.arrive(`t${i}`);
    expect(rule.size).toBe(100);
    expect(rule.arrive('first')).toBe(true);
  });
});

function queueHarness(invoke: (body: string) => Promise<void>) {
  const queued: string[] = [];
  const invoked: string[] = [];
  const fallbacks: unknown[] = [];
  const queue = new DirectFirstQueue({
    queue: { send: async (body) => void queued.push(body) },
    worker: { invoke: async (body) => { await invoke(body); invoked.push(body); } },
    rule: new QuietRule(() => 0),
    onFallback: (error) => fallbacks.push(error),
  });
  return { queue, queued, invoked, fallbacks };
}

describe('DirectFirstQueue: a quiet trigger\'s event goes to the worker, else (and whenever that fails) to the queue', () => {
  it('a quiet delivery is invoked and never queued', async () => {
    const h = queueHarness(async () => undefined);
    await h.queue.send(BODY, { triggerId: 't1' });
    expect([h.invoked, h.queued]).toEqual([[BODY], []]);
  });

  it('a busy trigger\'s deliveries go to the queue, to be batched', async () => {
    const h = queueHarness(async () => undefined);
    for (let i = 0; i < QUIET_MAX_DELIVERIES + 3; i++) await h.queue.send(BODY, { triggerId: 't1' });
    expect([h.invoked.length, h.queued.length]).toEqual([QUIET_MAX_DELIVERIES, 3]);
  });

  it('an invocation that fails falls back to the queue; send resolves only once the queue holds it', async () => {
    const h = queueHarness(async () => { throw new Error('Lambda Invoke answered 429'); });
    await h.queue.send(BODY, { triggerId: 't1' });
    expect([h.invoked, h.queued, h.fallbacks.length]).toEqual([[], [BODY], 1]);
    const refused = new DirectFirstQueue({
      queue: { send: async () => { throw new Error('queue down'); } },
      worker: { invoke: async () => { throw new Error('lambda down'); } },
      rule: new QuietRule(() => 0),
    });
    await expect(refused.send(BODY, { triggerId: 't1' })).rejects.toThrow('queue down');
  });

  it('a message too large for a destination record, or sent without its trigger (a replay), goes to the queue', async () => {
    const h = queueHarness(async () => undefined);
    const large = JSON.stringify({ ...MESSAGE, input: { trigger: { event: { text: 'x'.repeat(MAX_DIRECT_MESSAGE_BYTES) } } } });
    await h.queue.send(large, { triggerId: 't1' });
    await h.queue.send(BODY);
    expect([h.invoked.length, h.queued.length]).toEqual([0, 2]);
  });
});

function workerHarness(run: () => Promise<FlowResult>, options: { requeue?: (body: string, seconds: number) => Promise<void>; update?: (change: ExecutionChange) => Promise<void> } = {}) {
  const updates: ExecutionChange[] = [];
  const requeued: { body: string; seconds: number }[] = [];
  const delays: { handle: string; seconds: number }[] = [];
  let runs = 0;
  const deps: WorkerDeps = {
    executions: { update: options.update ?? (async (_ref: unknown, change: ExecutionChange) => void updates.push(change)) } as unknown as ExecutionStore,
    flows: { run: async () => { runs++; return run(); } },
    redelivery: { delay: async (handle, seconds) => void delays.push({ handle, seconds }) },
    retries: { requeue: options.requeue ?? (async (body, seconds) => void requeued.push({ body, seconds })) },
    maxReceiveCount: 5,
    retryBaseSeconds: 15,
    now: () => 0,
    after: () => () => undefined,
  };
  return { deps, updates, requeued, delays, runs: () => runs };
}

describe('runQueuedFlow on the direct path: a failed attempt is retried through the queue', () => {
  const fails = async (): Promise<FlowResult> => ({ status: 'failed', error: 'Boom' });

  it('a failed direct attempt is requeued with the backoff of attempt 1 and counted, and recorded queued with when', async () => {
    const h = workerHarness(fails);
    const error = await runQueuedFlow(h.deps, { body: BODY, receiveCount: 1, timeoutMs: 1000 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FlowAttemptFailed);
    expect((error as FlowAttemptFailed).handedBack).toBe(true);
    expect(h.requeued).toHaveLength(1);
    expect(h.requeued[0]!.seconds).toBe(retryDelaySeconds(1, 15));
    expect(JSON.parse(h.requeued[0]!.body)).toEqual({ ...MESSAGE, attempts_before: 1, direct_attempts: 1 });
    expect(h.updates).toEqual([expect.objectContaining({ status: 'queued', attempts: 1, error: 'Boom', nextAttemptAt: new Date(15_000).toISOString() })]);
  });

  it('from the queue, the retry goes on at attempt 2 with the backoff of attempt 2, and the fifth attempt in all is the last', async () => {
    const retry = JSON.stringify({ ...MESSAGE, attempts_before: 1, direct_attempts: 1 });
    const h = workerHarness(fails);
    await runQueuedFlow(h.deps, { body: retry, receiptHandle: 'r', receiveCount: 1, timeoutMs: 1000 }).catch(() => undefined);
    expect(h.delays).toEqual([{ handle: 'r', seconds: retryDelaySeconds(2, 15) }]);
    expect(h.updates.at(-1)).toMatchObject({ status: 'queued', attempts: 2 });
    await runQueuedFlow(h.deps, { body: retry, receiptHandle: 'r', receiveCount: 4, timeoutMs: 1000 }).catch(() => undefined);
    expect(h.updates.at(-1)).toMatchObject({ status: 'failed', attempts: 5 });
    expect(h.delays.at(-1)).toEqual({ handle: 'r', seconds: 0 });
  });

  it('a receive past the last attempt runs nothing and hands the message back at once, for the dead-letter queue', async () => {
    const retry = JSON.stringify({ ...MESSAGE, attempts_before: 1, direct_attempts: 1 });
    const h = workerHarness(fails);
    const error = await runQueuedFlow(h.deps, { body: retry, receiptHandle: 'r', receiveCount: 5, timeoutMs: 1000 }).catch((e: unknown) => e);
    expect((error as FlowAttemptFailed).reason).toBe(ATTEMPTS_EXHAUSTED);
    expect([h.runs(), h.updates, h.delays]).toEqual([0, [], [{ handle: 'r', seconds: 0 }]]);
  });

  it('when the retry cannot be requeued, the attempt is not handed back (the worker throws, and Lambda\'s destination takes it)', async () => {
    const h = workerHarness(fails, { requeue: async () => { throw new Error('queue down'); } });
    const error = await runQueuedFlow(h.deps, { body: BODY, receiveCount: 1, timeoutMs: 1000 }).catch((e: unknown) => e);
    expect((error as FlowAttemptFailed).handedBack).toBe(false);
    expect(h.updates).toEqual([expect.objectContaining({ status: 'queued', attempts: 1, nextAttemptAt: undefined })]);
  });
});

describe('retryOfDestinationRecord: Lambda\'s record of a failed direct invocation, read as the retry it stands for', () => {
  const record = (invokeCount: unknown, payload: unknown = MESSAGE) => JSON.stringify({
    version: '1.0', timestamp: '2026-11-28T00:00:00.000Z',
    requestContext: { requestId: 'r', functionArn: 'arn:aws:lambda:eu-west-1:1:function:w', condition: 'RetriesExhausted', approximateInvokeCount: invokeCount },
    requestPayload: payload, responseContext: { statusCode: 200, functionError: 'Unhandled' }, responsePayload: { errorMessage: 'Task timed out' },
  });

  it('counts the invocation as an attempt made outside the queue', () => {
    expect(parseFlowMessage(retryOfDestinationRecord(record(1))!)).toEqual({ ...MESSAGE, attempts_before: 1, direct_attempts: 1 });
  });

  it('an event that expired unrun (EventAgeExceeded, no invocation) has made no attempt', () => {
    expect(parseFlowMessage(retryOfDestinationRecord(record(0))!)).toEqual({ ...MESSAGE, attempts_before: 0, direct_attempts: 0 });
  });

  it('a flow message, or a record whose payload is not one, is not taken for a retry', () => {
    expect(retryOfDestinationRecord(BODY)).toBeUndefined();
    expect(retryOfDestinationRecord(record(1, { v: 2 }))).toBeUndefined();
    expect(retryOfDestinationRecord('{"version":')).toBeUndefined();
  });

  it('a message claiming more direct attempts than attempts is refused', () => {
    expect(() => parseFlowMessage(JSON.stringify({ ...MESSAGE, direct_attempts: 2, attempts_before: 1 }))).toThrow('not a flow message');
  });
});

describe('the flow worker invoked directly', () => {
  const context = { getRemainingTimeInMillis: () => 60_000 } as unknown as Context;
  const stats = { add: async () => undefined, markHourChanged: async () => undefined } as unknown as DeliveryStatsStore;

  it('drops a payload that is not a flow message, running nothing', async () => {
    const h = workerHarness(async () => ({ status: 'succeeded', output: null }));
    await expect(createFlowWorkerHandler({ ...h.deps, stats })({ not: 'a flow message' }, context)).resolves.toEqual({ batchItemFailures: [] });
    expect(h.runs()).toBe(0);
  });

  it('throws, for Lambda\'s destination to take the retry, when a flow message fails in a way the run did not record (even a SyntaxError from deep inside)', async () => {
    const h = workerHarness(async () => { throw new SyntaxError('Unexpected token < in JSON at position 0'); });
    await expect(createFlowWorkerHandler({ ...h.deps, stats })(MESSAGE, context)).rejects.toThrow(SyntaxError);
    expect(h.runs()).toBe(1);
    expect(h.requeued).toEqual([]);
  });

  it('a failed run whose retry is on the queue succeeds even when its record cannot be written: Lambda\'s destination would queue a second retry (the event would run twice)', async () => {
    const h = workerHarness(async () => ({ status: 'failed', error: 'Boom' }), { update: async () => { throw new Error('ProvisionedThroughputExceededException'); } });
    await expect(createFlowWorkerHandler({ ...h.deps, stats })(MESSAGE, context)).resolves.toEqual({ batchItemFailures: [] });
    expect(h.requeued).toHaveLength(1);
  });

  it('a failed run whose retry could not be queued, nor its record written, still throws for Lambda\'s destination (the event is not lost)', async () => {
    const h = workerHarness(async () => ({ status: 'failed', error: 'Boom' }), {
      requeue: async () => { throw new Error('queue down'); },
      update: async () => { throw new Error('table down'); },
    });
    await expect(createFlowWorkerHandler({ ...h.deps, stats })(MESSAGE, context)).rejects.toThrow();
  });
});
