import { afterEach, describe, expect, it, vi } from 'vitest';
import { createEmfWriter } from '../../functions/shared/emf-writer.js';
import type { StoredMetric } from '../../functions/shared/metrics.js';

/** EMF lines are log lines, billed by the byte: one invocation writes one line per dimension, not one per metric. */
describe('EMF writer', () => {
  afterEach(() => vi.restoreAllMocks());

  function linesOf(batch: StoredMetric[]): Record<string, any>[] {
    const written: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => (written.push(String(chunk)), true));
    createEmfWriter('Flowgate', 'flowgate').writeMetrics(batch);
    return written.join('').split('\n').filter(Boolean).map((line) => JSON.parse(line));
  }

  it('writes a batch of ten flow runs as one line: counts summed, every duration kept', () => {
    const flow = { name: 'flow', value: 'noop' };
    const batch: StoredMetric[] = Array.from({ length: 10 }, (_, i) => [
      { name: 'FlowRunsSucceeded', unit: 'count', value: 1, dimension: flow } as StoredMetric,
      { name: 'FlowRunDuration', unit: 'milliseconds', value: 10 + i, dimension: flow } as StoredMetric,
    ]).flat();
    const lines = linesOf(batch);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ service: 'flowgate', flow: 'noop', FlowRunsSucceeded: 10, FlowRunDuration: Array.from({ length: 10 }, (_, i) => 10 + i) });
    expect(lines[0]!._aws.CloudWatchMetrics[0].Dimensions).toEqual([['service', 'flow']]);
  });

  it('keeps each dimension value on its own line, so no metric takes another\'s dimension', () => {
    const lines = linesOf([
      { name: 'WebhooksAccepted', unit: 'count', value: 1 } as StoredMetric,
      { name: 'FlowRunsFailed', unit: 'count', value: 1, dimension: { name: 'flow', value: 'a' } } as StoredMetric,
      { name: 'FlowRunsFailed', unit: 'count', value: 1, dimension: { name: 'flow', value: 'b' } } as StoredMetric,
    ]);
    expect(lines.map((line) => [line.flow, line.WebhooksAccepted, line.FlowRunsFailed])).toEqual([[undefined, 1, undefined], ['a', undefined, 1], ['b', undefined, 1]]);
  });
});
