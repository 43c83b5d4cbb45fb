import { describe, expect, it } from 'vitest';
import type { ExecutionChange, ExecutionStore, FlowResult } from '../../functions/domain/flows/ports.js';
import { RUNNING_MARK_AFTER_MS, runQueuedFlow, type WorkerDeps } from '../../functions/domain/flows/run-queued-flow.js';

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
