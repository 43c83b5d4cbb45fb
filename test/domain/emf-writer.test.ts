import { afterEach, describe, expect, it, vi } from 'vitest';
import { createEmfWriter } from '../../functions/shared/emf-writer.js';
import type { LineField, StoredMetric, StoredNote } from '../../functions/shared/metrics.js';
import { parseEmf } from '../support/emf.js';

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

  /** What one batch writes, each line read as CloudWatch reads it. */
  function parsedLines(batch: StoredMetric[], fields: Partial<Record<LineField, string>> = {}, now = 1_795_839_470_370) {
    const written: string[] = [];
    // Notes are kept with the metrics, in the order the invocation made them.
    const notes = Object.entries(fields).map(([name, value]) => ({ name, unit: 'note', value }) as StoredNote);
    createEmfWriter('Flowgate', 'flowgate', () => now).writeMetrics([...notes, ...batch], (line) => void written.push(line));
    return written.map((line) => ({ line, ...parseEmf(line) }));
  }

  it('a refused delivery\'s line, read as CloudWatch reads it: three metrics with their units and dimensions, and the reason, trigger and request id logged', () => {
    const [line, ...more] = parsedLines([
      { name: 'WebhooksReceived', unit: 'count', value: 1 },
      { name: 'WebhookRefusalsNotRecorded', unit: 'count', value: 1 },
      { name: 'WebhooksRefused', unit: 'count', value: 1, dimension: { name: 'reason', value: 'invalid_signature' } },
    ], { trigger: '9a298f0c5a0864ea5856c737a83d0749', requestId: 'Jk2pLhAboAMEbYw=' });
    expect(more).toEqual([]);
    expect(line!.timestamp).toBe(1_795_839_470_370);
    expect(line!.datapoints).toEqual([
      { namespace: 'Flowgate', name: 'WebhooksReceived', unit: 'Count', dimensions: { service: 'flowgate' }, values: [1] },
      { namespace: 'Flowgate', name: 'WebhookRefusalsNotRecorded', unit: 'Count', dimensions: { service: 'flowgate' }, values: [1] },
      { namespace: 'Flowgate', name: 'WebhooksRefused', unit: 'Count', dimensions: { service: 'flowgate', reason: 'invalid_signature' }, values: [1] },
    ]);
    // Log-only members: in the log event, never a dimension (each value would be a metric of its own).
    expect(line!.logOnly).toEqual({ trigger: '9a298f0c5a0864ea5856c737a83d0749', requestId: 'Jk2pLhAboAMEbYw=' });
    // What it costs: the bytes CloudWatch Logs bills for it (without its 26 bytes of event overhead).
    expect(Buffer.byteLength(line!.line)).toBeLessThanOrEqual(531);
  });

  it('an accepted delivery is one line of two counts, nothing logged beside them', () => {
    const [line, ...more] = parsedLines([{ name: 'WebhooksReceived', unit: 'count', value: 1 }, { name: 'WebhooksAccepted', unit: 'count', value: 1 }]);
    expect(more).toEqual([]);
    expect(line!.datapoints.map((d) => [d.name, d.unit, d.dimensions, d.values])).toEqual([
      ['WebhooksReceived', 'Count', { service: 'flowgate' }, [1]],
      ['WebhooksAccepted', 'Count', { service: 'flowgate' }, [1]],
    ]);
    expect(line!.logOnly).toEqual({});
  });

  it('durations in Milliseconds, at most 100 values an array as the format allows: 150 runs are two lines, every value kept', () => {
    const flow = { name: 'flow', value: 'noop' };
    const lines = parsedLines(Array.from({ length: 150 }, (_, i) => ({ name: 'FlowRunDuration', unit: 'milliseconds', value: i, dimension: flow }) as StoredMetric));
    expect(lines).toHaveLength(2);
    const points = lines.flatMap((l) => l.datapoints);
    for (const point of points) expect(point).toMatchObject({ namespace: 'Flowgate', name: 'FlowRunDuration', unit: 'Milliseconds', dimensions: { service: 'flowgate', flow: 'noop' } });
    expect(points.flatMap((p) => p.values)).toEqual(Array.from({ length: 150 }, (_, i) => i));
  });

  it('log-only fields never replace a dimension or a metric of the line', () => {
    const [line] = parsedLines([{ name: 'WebhooksReceived', unit: 'count', value: 1 }], { trigger: 't1' });
    expect(line!.logOnly).toEqual({ trigger: 't1' });
    expect(line!.datapoints).toHaveLength(1);
  });
});

