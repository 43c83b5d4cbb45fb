import type { Context, SQSEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ExecutionChange, ExecutionRef, ExecutionStore, FlowResult } from '../../functions/domain/flows/ports.js';
import type { DeliveryStatsStore } from '../../functions/domain/stats/ports.js';
import { createFlowWorkerHandler } from '../../functions/handlers/flow-worker.js';
import type { LogLevel } from '../../functions/settings.js';
import { configureLogging, logLevelName } from '../../functions/shared/logger.js';

/*
 * The local stack's poll loops (local/sqs-poller.ts, several, as Lambda runs several pollers)
 * invoke one flow worker handler at once; Lambda runs one invocation at a time in an execution
 * environment. A batch's failed record must be reported by its own invocation whatever the others
 * do: a failed record left out of `batchItemFailures` is deleted from the queue as done, and its
 * event is neither retried nor dead-lettered, its record left `queued`. With
 * FLOW_RETRY_BASE_SECONDS=0 a failed message is back at once, so batches overlap all the time.
 */

const context = { getRemainingTimeInMillis: () => 60_000 } as unknown as Context;
const stats = { add: async () => undefined, markHourChanged: async () => undefined } as unknown as DeliveryStatsStore;

const refOf = (key: string): ExecutionRef => ({ triggerId: 't1', executionId: `20261128T110000000Z_${key}` });
const body = (flow: string, key: string) => JSON.stringify({ v: 1, trigger_id: 't1', flow, ref: refOf(key), input: { trigger: { event: {} } } });
const record = (messageId: string, flow: string) => ({
  messageId,
  receiptHandle: `receipt-${messageId}`,
  body: body(flow, messageId),
  attributes: { ApproximateReceiveCount: '1', SentTimestamp: '0', SenderId: 'test', ApproximateFirstReceiveTimestamp: '0' },
  messageAttributes: {},
  md5OfBody: '',
  eventSource: 'aws:sqs',
  eventSourceARN: 'arn:aws:sqs:us-east-1:000000000000:local-flowEvents',
  awsRegion: 'us-east-1',
});
const batch = (...records: ReturnType<typeof record>[]) => ({ Records: records }) as SQSEvent;
/** Lets every callback already due run (the fakes here answer at once, so a record's handling is only microtasks). */
const settle = () => new Promise((resolve) => setImmediate(resolve));

/** A worker whose flows answer by name: `fails` fails, `ok` succeeds, `held` succeeds once released. */
function harness() {
  const updates: { executionId: string; status: ExecutionChange['status'] }[] = [];
  let release!: () => void;
  const held = new Promise<void>((resolve) => { release = resolve; });
  const run = async (flow: string): Promise<FlowResult> => {
    if (flow === 'fails') return { status: 'failed', error: 'Boom' };
    if (flow === 'held') await held;
    return { status: 'succeeded', output: null };
  };
  const write = (ref: ExecutionRef, change: ExecutionChange) => void updates.push({ executionId: ref.executionId, status: change.status });
  const executions = {
    update: async (ref: ExecutionRef, change: ExecutionChange) => { write(ref, change); return 'written'; },
    updateReplacing: async (ref: ExecutionRef, change: ExecutionChange) => { write(ref, change); return { result: 'written', replaced: { status: 'queued', attempts: 0 } }; },
  } as unknown as ExecutionStore;
  const handler = createFlowWorkerHandler({
    executions, stats, flows: { run }, redelivery: { delay: async () => undefined }, maxReceiveCount: 5, retryBaseSeconds: 0, now: () => Date.parse('2026-11-28T11:00:00.000Z'),
  });
  return { handler, updates, release };
}

describe('the flow worker handling several batches at once', () => {
  // The failed record's warning is written with the logger loaded on first use: silenced here, a
  // record's handling waits on nothing but the fakes.
  let level: LogLevel;
  beforeAll(() => {
    level = logLevelName();
    configureLogging({ logLevel: 'SILENT' });
  });
  afterAll(() => configureLogging({ logLevel: level }));

  it('reports the record that failed in its own batch while another batch starts and ends meanwhile', async () => {
    const h = harness();
    // Batch 1: one record fails at once, the other is still running.
    const first = h.handler(batch(record('fails-1', 'fails'), record('held-1', 'held')), context);
    await settle();
    expect(h.updates).toEqual([{ executionId: refOf('fails-1').executionId, status: 'queued' }]);
    // Batch 2 (another poller's) starts and ends before batch 1 does.
    await expect(h.handler(batch(record('ok-2', 'ok')), context)).resolves.toEqual({ batchItemFailures: [] });
    h.release();
    // Left out, `fails-1` would be deleted from the queue as done.
    await expect(first).resolves.toEqual({ batchItemFailures: [{ itemIdentifier: 'fails-1' }] });
  });

  it('reports only its own failed records, never another batch\'s', async () => {
    const h = harness();
    const first = h.handler(batch(record('held-1', 'held')), context);
    await settle();
    await expect(h.handler(batch(record('fails-2', 'fails')), context)).resolves.toEqual({ batchItemFailures: [{ itemIdentifier: 'fails-2' }] });
    h.release();
    await expect(first).resolves.toEqual({ batchItemFailures: [] });
  });
});
