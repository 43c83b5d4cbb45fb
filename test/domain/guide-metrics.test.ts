import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { METRIC } from '../../functions/shared/metric-names.js';

const GUIDE = readFileSync(resolve(import.meta.dirname, '../../docs/operating.md'), 'utf8');

/** The names in the first column of the metrics table in docs/operating.md's "Metrics and alarms". */
function documentedMetrics(): Set<string> {
  const section = GUIDE.slice(GUIDE.indexOf('### Metrics and alarms'));
  const table = section.slice(section.indexOf('| Metric |'), section.indexOf('\n\n', section.indexOf('| Metric |')));
  return new Set(table.split('\n').slice(2).flatMap((row) => [...(row.split('|')[1] ?? '').matchAll(/`([A-Za-z]+)`/g)].map((m) => m[1]!)));
}

describe('docs/operating.md: Metrics and alarms', () => {
  it('the metrics table names every metric the functions write, and nothing else', () => {
    expect([...documentedMetrics()].sort()).toEqual(Object.values(METRIC).sort());
  });
});
