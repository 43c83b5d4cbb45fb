import { describe, expect, it } from 'vitest';
import type { ExecutionChange, ExecutionStatus, ExecutionStore, ExecutionUpdate, FlowResult } from '../../functions/domain/flows/ports.js';
import { FlowAttemptFailed, RUNNING_MARK_AFTER_MS, runQueuedFlow, type WorkerDeps } from '../../functions/domain/flows/run-queued-flow.js';

/** The worker's writes per attempt: a run that ends quickly costs one (its outcome); a long one shows `running` first. */
const REF = { triggerId: 't1', executionId: '20261124T105204000Z_abc' };
const MESSAGE = JSON.stringify({ v: 1, trigger_id: 't1', flow: 'echo', ref: REF, input: { trigger: { event: {} } } });

function setup(run: () => Promise<FlowResult>) {
  const updates: ExecutionChange['status'][] = [];
  let fireMark: (() => void) | undefined;
  let markWrite: (() => void) | undefined;
  const executions = {
    update: async (_ref: unknown, change: ExecutionChange) => {
      // The running mark's write may be slow: it must still land before the outcome.
      if (change.status === 'running') await new Promise<void>((resolve) => { markWrite = resolve; });
      updates.push(change.status);
    },
  } as unknown as ExecutionStore;
  const deps: WorkerDeps = {
    executions,
    flows: { run },
    redelivery: { delay: async () => undefined },
    maxReceiveCount: 5,
    retryBaseSeconds: 15,
    now: () => Date.parse('2026-11-24T10:52:04.000Z'),
    after: (ms, then) => {
      expect(ms).toBe(RUNNING_MARK_AFTER_MS);
      fireMark = then;
      return () => { fireMark = undefined; };
    },
  };
  return { deps, updates, fireMark: () => fireMark?.(), finishMarkWrite: () => markWrite?.() };
}

describe('runQueuedFlow: the status writes of one attempt', () => {
  it('writes only the outcome when the run ends before the running mark is due', async () => {
    const { deps, updates } = setup(async () => ({ status: 'succeeded', output: {} }));
    await runQueuedFlow(deps, { body: MESSAGE, receiptHandle: 'r', receiveCount: 1, timeoutMs: 1000 });
    expect(updates).toEqual(['succeeded']);
  });

  it('marks a long run running, and the outcome waits for that write so it can never be overwritten by it', async () => {
    let endRun: (result: FlowResult) => void = () => undefined;
    const harness = setup(() => new Promise<FlowResult>((resolve) => { endRun = resolve; }));
    const attempt = runQueuedFlow(harness.deps, { body: MESSAGE, receiptHandle: 'r', receiveCount: 1, timeoutMs: 1000 });
    await Promise.resolve();
    harness.fireMark();
    endRun({ status: 'succeeded', output: {} });
    await new Promise((resolve) => setImmediate(resolve));
    expect(harness.updates).toEqual([]);
    harness.finishMarkWrite();
    await attempt;
    expect(harness.updates).toEqual(['running', 'succeeded']);
  });
});

/**
 * Copies of one event (a lost direct answer and its queued fallback, a redelivery while a run went
 * on): the store says when the record is `succeeded` already (`ExecutionStore.update`, `statusOf`),
 * and the worker then stops the copy without running the flow again.
 */
describe('runQueuedFlow: a copy of an event that has succeeded already', () => {
  function copies(options: { status?: () => Promise<ExecutionStatus | undefined>; recorded?: ExecutionUpdate; run?: FlowResult }) {
    const reads: number[] = [];
    const updates: ExecutionChange[] = [];
    const delays: number[] = [];
    let runs = 0;
    const executions = {
      statusOf: async () => { reads.push(1); return (options.status ?? (async () => 'queued' as const))(); },
      update: async (_ref: unknown, change: ExecutionChange) => { updates.push(change); return options.recorded ?? 'written'; },
    } as unknown as ExecutionStore;
    const deps: WorkerDeps = {
      executions,
      flows: { run: async () => { runs++; return options.run ?? { status: 'succeeded', output: {} }; } },
      redelivery: { delay: async (_handle, seconds) => void delays.push(seconds) },
      maxReceiveCount: 5,
      retryBaseSeconds: 15,
      now: () => Date.parse('2026-11-24T10:52:04.000Z'),
      after: () => () => undefined,
    };
    return { deps, reads, updates, delays, runs: () => runs };
  }

  it('a retry whose record says succeeded is acknowledged unrun, and writes nothing', async () => {
    const h = copies({ status: async () => 'succeeded' });
    await expect(runQueuedFlow(h.deps, { body: MESSAGE, receiptHandle: 'r', receiveCount: 2, timeoutMs: 1000 })).resolves.toBeUndefined();
    expect([h.runs(), h.updates, h.delays]).toEqual([0, [], []]);
  });

  it('so is a retry past its last attempt: acknowledged, not sent to the dead-letter queue', async () => {
    const h = copies({ status: async () => 'succeeded' });
    await expect(runQueuedFlow(h.deps, { body: MESSAGE, receiptHandle: 'r', receiveCount: 6, timeoutMs: 1000 })).resolves.toBeUndefined();
    expect([h.runs(), h.delays]).toEqual([0, []]);
  });

  it('a retry whose record says anything else runs; a first attempt runs without reading', async () => {
    const retry = copies({ status: async () => 'queued' });
    await runQueuedFlow(retry.deps, { body: MESSAGE, receiptHandle: 'r', receiveCount: 2, timeoutMs: 1000 });
    expect([retry.reads.length, retry.runs(), retry.updates.map((u) => u.status)]).toEqual([1, 1, ['succeeded']]);
    const first = copies({ status: async () => 'succeeded' });
    await runQueuedFlow(first.deps, { body: MESSAGE, receiptHandle: 'r', receiveCount: 1, timeoutMs: 1000 });
    expect([first.reads.length, first.runs()]).toEqual([0, 1]);
  });

  it('a retry whose record cannot be read runs (at least once)', async () => {
    const h = copies({ status: async () => { throw new Error('ProvisionedThroughputExceededException'); } });
    await runQueuedFlow(h.deps, { body: MESSAGE, receiptHandle: 'r', receiveCount: 3, timeoutMs: 1000 });
    expect(h.runs()).toBe(1);
  });

  it('a failed run whose record says succeeded already is acknowledged, not retried', async () => {
    const h = copies({ run: { status: 'failed', error: 'Boom' }, recorded: 'succeeded_already' });
    await expect(runQueuedFlow(h.deps, { body: MESSAGE, receiptHandle: 'r', receiveCount: 1, timeoutMs: 1000 })).resolves.toBeUndefined();
    expect(h.updates.map((u) => u.status)).toEqual(['queued']);
  });

  it('a failed run whose record has a later attempt (not a success) is retried as before', async () => {
    const h = copies({ run: { status: 'failed', error: 'Boom' }, recorded: 'outdated' });
    await expect(runQueuedFlow(h.deps, { body: MESSAGE, receiptHandle: 'r', receiveCount: 1, timeoutMs: 1000 })).rejects.toBeInstanceOf(FlowAttemptFailed);
  });
});

describe('runQueuedFlow: the last failed attempt', () => {
  const failing = async (): Promise<FlowResult> => ({ status: 'failed', error: 'Fixture.Broken' });

  it('sends the message to the dead-letter queue with its attempts counted and returns, so the event source deletes the original', async () => {
    const { deps, updates } = setup(failing);
    const sent: [string, number][] = [];
    const delays: number[] = [];
    const direct = JSON.stringify({ ...JSON.parse(MESSAGE), attempts_before: 1, direct_attempts: 1 });
    const failure = await runQueuedFlow({ ...deps, redelivery: { delay: async (_r, s) => { delays.push(s); } }, deadLetters: { requeue: async (body, s) => { sent.push([body, s]); } } },
      { body: direct, receiptHandle: 'r', receiveCount: 4, timeoutMs: 1000 });
    // The last attempt's failure, for the worker's log; nothing thrown, so the event source deletes the original.
    expect(failure).toMatchObject({ name: 'FlowAttemptFailed', attempt: 5, reason: 'Fixture.Broken' });
    expect(updates).toEqual(['failed']);
    expect(delays).toEqual([]);
    expect(sent.map(([body, s]) => [JSON.parse(body), s])).toEqual([[{ ...JSON.parse(MESSAGE), attempts_before: 5 }, 0]]);
  });

  it('when the dead-letter queue will not take it, hands the message back at once for the queue to move, as before', async () => {
    const { deps, updates } = setup(failing);
    const delays: number[] = [];
    const attempt = runQueuedFlow({ ...deps, redelivery: { delay: async (_r, s) => { delays.push(s); } }, deadLetters: { requeue: async () => { throw new Error('unreachable'); } } },
      { body: MESSAGE, receiptHandle: 'r', receiveCount: 5, timeoutMs: 1000 });
    await expect(attempt).rejects.toMatchObject({ name: 'FlowAttemptFailed', attempt: 5 });
    expect(updates).toEqual(['failed']);
    expect(delays).toEqual([0]);
  });

  it('dead-letters unrun a message received after its last attempt (its dead-letter send had failed), counting only the attempts made', async () => {
    const { deps, updates } = setup(async () => { throw new Error('must not run'); });
    const sent: string[] = [];
    const direct = JSON.stringify({ ...JSON.parse(MESSAGE), attempts_before: 1, direct_attempts: 1 });
    const failure = await runQueuedFlow({ ...deps, deadLetters: { requeue: async (body) => { sent.push(body); } } }, { body: direct, receiptHandle: 'r', receiveCount: 5, timeoutMs: 1000 });
    expect(failure).toMatchObject({ attempt: 5, reason: 'attempts_exhausted' });
    expect(updates).toEqual([]);
    expect(sent.map((body) => JSON.parse(body))).toEqual([{ ...JSON.parse(MESSAGE), attempts_before: 5 }]);
  });

  it('is not dead-lettered when its failure finds another copy of the event succeeded', async () => {
    const { deps } = setup(failing);
    const sent: string[] = [];
    const executions = { statusOf: async () => 'queued', update: async () => 'succeeded_already' } as unknown as ExecutionStore;
    await expect(runQueuedFlow({ ...deps, executions, deadLetters: { requeue: async (body) => { sent.push(body); } } }, { body: MESSAGE, receiptHandle: 'r', receiveCount: 5, timeoutMs: 1000 }))
      .resolves.toBeUndefined();
    expect(sent).toEqual([]);
  });

  it('sends nothing more on an attempt before the last', async () => {
    const { deps } = setup(failing);
    const sent: string[] = [];
    await expect(runQueuedFlow({ ...deps, deadLetters: { requeue: async (body) => { sent.push(body); } } }, { body: MESSAGE, receiptHandle: 'r', receiveCount: 4, timeoutMs: 1000 }))
      .rejects.toMatchObject({ attempt: 4 });
    expect(sent).toEqual([]);
  });
});
