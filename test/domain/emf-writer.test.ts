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

  it('keeps each dimension value in its own directive, and two values of one dimension on lines of their own, so no metric takes another\'s dimension', () => {
    const lines = linesOf([
      { name: 'WebhooksAccepted', unit: 'count', value: 1 } as StoredMetric,
      { name: 'FlowRunsFailed', unit: 'count', value: 1, dimension: { name: 'flow', value: 'a' } } as StoredMetric,
      { name: 'FlowRunsFailed', unit: 'count', value: 1, dimension: { name: 'flow', value: 'b' } } as StoredMetric,
    ]);
    expect(lines.map((line) => [line.flow, line.WebhooksAccepted, line.FlowRunsFailed])).toEqual([['a', 1, 1], ['b', undefined, 1]]);
    expect(lines[0]!._aws.CloudWatchMetrics).toEqual([
      { Namespace: 'Flowgate', Dimensions: [['service']], Metrics: [{ Name: 'WebhooksAccepted', Unit: 'Count' }] },
      { Namespace: 'Flowgate', Dimensions: [['service', 'flow']], Metrics: [{ Name: 'FlowRunsFailed', Unit: 'Count' }] },
    ]);
    expect(lines[1]!._aws.CloudWatchMetrics).toEqual([{ Namespace: 'Flowgate', Dimensions: [['service', 'flow']], Metrics: [{ Name: 'FlowRunsFailed', Unit: 'Count' }] }]);
  });

  it('writes a refused delivery\'s metrics (received, not recorded, refused by reason) as one line of two directives', () => {
    const lines = linesOf([
      { name: 'WebhookRefusalsNotRecorded', unit: 'count', value: 1 } as StoredMetric,
      { name: 'WebhooksReceived', unit: 'count', value: 1 } as StoredMetric,
      { name: 'WebhooksRefused', unit: 'count', value: 1, dimension: { name: 'reason', value: 'invalid_signature' } } as StoredMetric,
    ]);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ service: 'flowgate', reason: 'invalid_signature', WebhooksReceived: 1, WebhookRefusalsNotRecorded: 1, WebhooksRefused: 1 });
    expect(lines[0]!._aws.CloudWatchMetrics.map((d: { Dimensions: string[][]; Metrics: { Name: string }[] }) => [d.Dimensions, d.Metrics.map((m) => m.Name)])).toEqual([
      [[['service']], ['WebhookRefusalsNotRecorded', 'WebhooksReceived']],
      [[['service', 'reason']], ['WebhooksRefused']],
    ]);
  });
});
