import { afterEach, describe, expect, it, vi } from 'vitest';
import { metricFiltersOf, metricsFromLine } from '../../functions/shared/metric-filters.js';
import { createMetricLineWriter, METRIC_LINE_PREFIX } from '../../functions/shared/metric-line-writer.js';
import type { LineField, StoredMetric, StoredNote } from '../../functions/shared/metrics.js';

/** Metric lines are log lines, billed by the byte: as few and as small as the metric filters that read them allow. */
describe('metric line writer', () => {
  afterEach(() => vi.restoreAllMocks());

  /** What one invocation of `fn` writes, each line read by the metric filters on `fn`'s log group, as CloudWatch reads it. */
  function written(fn: string, batch: StoredMetric[], fields: Partial<Record<LineField, string>> = {}) {
    const lines: string[] = [];
    // Notes are kept with the metrics, in the order the invocation made them.
    const notes = Object.entries(fields).map(([name, value]) => ({ name, unit: 'note', value }) as StoredNote);
    createMetricLineWriter('flowgate').writeMetrics([...notes, ...batch], (line) => void lines.push(line));
    return lines.map((line) => ({ line, fields: JSON.parse(line) as Record<string, unknown>, datapoints: metricsFromLine(metricFiltersOf(fn), line) }));
  }

  it('writes to stdout, one line a log event, each starting with the service', () => {
    const out: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => (out.push(String(chunk)), true));
    createMetricLineWriter('flowgate').writeMetrics([{ name: 'WebhooksReceived', unit: 'count', value: 1 }]);
    expect(out).toEqual(['{"service":"flowgate","WebhooksReceived":1}\n']);
    expect(out[0]!.startsWith(METRIC_LINE_PREFIX)).toBe(true);
  });

  it('a refused delivery is one line: received, not recorded and refused by reason, with the reason, trigger and request id logged', () => {
    const [line, ...more] = written('webhook', [
      { name: 'WebhooksReceived', unit: 'count', value: 1 },
      { name: 'WebhookRefusalsNotRecorded', unit: 'count', value: 1 },
      { name: 'WebhooksRefused', unit: 'count', value: 1, dimension: { name: 'reason', value: 'invalid_signature' } },
    ], { trigger: '9a298f0c5a0864ea5856c737a83d0749', requestId: 'Jk2pLhAboAMEbYw=' });
    expect(more).toEqual([]);
    expect(line!.datapoints).toEqual([
      { namespace: 'Flowgate', name: 'WebhooksReceived', unit: 'Count', dimensions: { service: 'flowgate' }, value: 1 },
      { namespace: 'Flowgate', name: 'WebhooksRefused', unit: 'Count', dimensions: { service: 'flowgate', reason: 'invalid_signature' }, value: 1 },
      { namespace: 'Flowgate', name: 'WebhookRefusalsNotRecorded', unit: 'Count', dimensions: { service: 'flowgate' }, value: 1 },
    ]);
    // Log-only members: in the log event, never a dimension (each value would be a metric of its own).
    expect(line!.fields).toMatchObject({ reason: 'invalid_signature', trigger: '9a298f0c5a0864ea5856c737a83d0749', requestId: 'Jk2pLhAboAMEbYw=' });
    // What it costs: the bytes CloudWatch Logs bills for it (without its 26 bytes of event overhead); 531 as EMF.
    expect(Buffer.byteLength(line!.line)).toBeLessThanOrEqual(200);
  });

  it('an accepted delivery is one line of two counts, nothing logged beside them', () => {
    const lines = written('webhook', [{ name: 'WebhooksReceived', unit: 'count', value: 1 }, { name: 'WebhooksAccepted', unit: 'count', value: 1 }]);
    expect(lines.map((l) => l.line)).toEqual(['{"service":"flowgate","WebhooksReceived":1,"WebhooksAccepted":1}']);
    expect(lines[0]!.datapoints.map((d) => [d.name, d.unit, d.dimensions, d.value])).toEqual([
      ['WebhooksReceived', 'Count', { service: 'flowgate' }, 1],
      ['WebhooksAccepted', 'Count', { service: 'flowgate' }, 1],
    ]);
  });

  it('a batch of seven runs of one flow: the outcomes summed on the first line, one duration a line, every duration kept', () => {
    const flow = { name: 'flow', value: 'noop' };
    const batch: StoredMetric[] = Array.from({ length: 7 }, (_, i) => [
      { name: 'FlowRunsSucceeded', unit: 'count', value: 1, dimension: flow } as StoredMetric,
      { name: 'FlowRunDuration', unit: 'milliseconds', value: 10 + i, dimension: flow } as StoredMetric,
    ]).flat();
    const lines = written('flowWorker', batch);
    expect(lines.map((l) => l.fields)).toEqual([
      { service: 'flowgate', flow: 'noop', FlowRunsSucceeded: 7, FlowRunDuration: 10 },
      ...Array.from({ length: 6 }, (_, i) => ({ service: 'flowgate', flow: 'noop', FlowRunDuration: 11 + i })),
    ]);
    const points = lines.flatMap((l) => l.datapoints);
    expect(points.filter((p) => p.name === 'FlowRunsSucceeded')).toEqual([{ namespace: 'Flowgate', name: 'FlowRunsSucceeded', unit: 'Count', dimensions: { service: 'flowgate', flow: 'noop' }, value: 7 }]);
    const durations = points.filter((p) => p.name === 'FlowRunDuration');
    expect(durations.map((p) => p.value)).toEqual([10, 11, 12, 13, 14, 15, 16]);
    for (const point of durations) expect(point).toMatchObject({ unit: 'Milliseconds', dimensions: { service: 'flowgate', flow: 'noop' } });
  });

  it('keeps each dimension value on a line of its own, so no metric takes another\'s dimension', () => {
    const lines = written('webhook', [
      { name: 'WebhooksAccepted', unit: 'count', value: 1 } as StoredMetric,
      { name: 'FlowRunsFailed', unit: 'count', value: 1, dimension: { name: 'flow', value: 'a' } } as StoredMetric,
      { name: 'FlowRunsFailed', unit: 'count', value: 1, dimension: { name: 'flow', value: 'b' } } as StoredMetric,
    ]);
    expect(lines.map((l) => l.fields)).toEqual([
      { service: 'flowgate', WebhooksAccepted: 1, flow: 'a', FlowRunsFailed: 1 },
      { service: 'flowgate', flow: 'b', FlowRunsFailed: 1 },
    ]);
    expect(lines.flatMap((l) => l.datapoints).map((d) => [d.name, d.dimensions])).toEqual([
      ['WebhooksAccepted', { service: 'flowgate' }],
      ['FlowRunsFailed', { service: 'flowgate', flow: 'a' }],
      ['FlowRunsFailed', { service: 'flowgate', flow: 'b' }],
    ]);
  });

  it('counts of one name are summed: the sweeper\'s items reclaimed', () => {
    const lines = written('kvSweeper', [{ name: 'KvItemsReclaimed', unit: 'count', value: 3 }, { name: 'KvItemsReclaimed', unit: 'count', value: 4 }]);
    expect(lines.flatMap((l) => l.datapoints).map((d) => [d.name, d.value])).toEqual([['KvItemsReclaimed', 7]]);
  });

  it('log-only fields never replace a dimension or a metric of the line, and nothing is written when nothing was counted', () => {
    const [line] = written('webhook', [{ name: 'WebhooksReceived', unit: 'count', value: 1 }], { trigger: 't1' });
    expect(line!.fields).toEqual({ service: 'flowgate', WebhooksReceived: 1, trigger: 't1' });
    expect(written('webhook', [], { trigger: 't1', requestId: 'r' })).toEqual([]);
  });
});
