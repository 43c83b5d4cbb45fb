import { describe, expect, it } from 'vitest';
import { batchedRunners, MAX_BATCH_MEMBERS } from '../../functions/domain/flows/batch-runs.js';
import type { BatchFlowRunner, FlowRunner } from '../../functions/domain/flows/ports.js';

const record = (i: number, flow = 'echo') => ({
  id: `m${i}`,
  receiveCount: 1,
  body: JSON.stringify({ v: 1, trigger_id: 't', flow, ref: { triggerId: 't', executionId: `e${i}` }, input: { trigger: { event: { n: i } } } }),
});
const single: FlowRunner = { run: async () => ({ status: 'succeeded', output: null }) as never };

describe('batchedRunners', () => {
  it(`a worker batch of 100 events of one flow runs in executions of at most ${MAX_BATCH_MEMBERS}: an inline Map runs 40 iterations at once`, async () => {
    const batches: number[] = [];
    const batch: BatchFlowRunner = { runBatch: async (_flow, inputs) => (batches.push(inputs.length), inputs.map(() => ({ status: 'succeeded', output: null }) as never)) };
    const runners = batchedRunners(Array.from({ length: 100 }, (_, i) => record(i)), single, batch, 1000);
    expect(runners.size).toBe(100);
    expect(batches).toEqual([40, 40, 20]);
  });

  it('each flow has executions of its own, a last lone event runs alone', () => {
    const batches: [string, number][] = [];
    const batch: BatchFlowRunner = { runBatch: async (flow, inputs) => (batches.push([flow, inputs.length]), undefined) };
    const records = [...Array.from({ length: 41 }, (_, i) => record(i, 'a')), ...Array.from({ length: 3 }, (_, i) => record(100 + i, 'b'))];
    const runners = batchedRunners(records, single, batch, 1000);
    expect(batches).toEqual([['a', 40], ['b', 3]]);
    // The 41st event of flow a is a group of one: it runs through `single`, so it has no batch runner.
    expect(runners.has('m40')).toBe(false);
  });
});
