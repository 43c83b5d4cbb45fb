import type { CfnElement } from 'aws-cdk-lib';
import { FilterPattern } from 'aws-cdk-lib/aws-logs';
import { beforeAll, describe, expect, it } from 'vitest';
import { FUNCTIONS, type FunctionName } from '../../functions/manifest.js';
import { METRIC_TABLE, metricFilterOf, metricFiltersOf, parseFilterPattern } from '../../functions/shared/metric-filters.js';
import type { MetricName } from '../../functions/shared/metric-names.js';
import { metricsReadByOperators } from '../support/operator-metrics.js';
import { synth, type Synthesized } from '../support/synth.js';

/**
 * The metric filters that make the Flowgate metrics of the functions' lines, checked against
 * CloudWatch Logs' documented rules, which a deploy would only report (or, for a pattern that
 * cannot match, never report):
 * https://docs.aws.amazon.com/AmazonCloudWatchLogs/latest/APIReference/API_PutMetricFilter.html
 * https://docs.aws.amazon.com/AmazonCloudWatchLogs/latest/APIReference/API_MetricTransformation.html
 * https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/aws-properties-logs-metricfilter-metrictransformation.html
 */
/** "The maximum number of metric filters that can be associated with a log group is 100." */
const MAX_FILTERS_PER_LOG_GROUP = 100;
/** "One metric filter can include as many as three dimensions." */
const MAX_DIMENSIONS_PER_FILTER = 3;

interface Transformation { MetricName: string; MetricNamespace: string; MetricValue: string; Unit?: string; DefaultValue?: number; Dimensions?: { Key: string; Value: string }[] }
interface Filter { LogGroupName: { Ref: string }; FilterPattern: string; MetricTransformations: Transformation[] }

describe('metric filters in the synthesized template', () => {
  let s: Synthesized;
  let filters: [string, Filter][];
  beforeAll(() => {
    s = synth();
    filters = Object.entries(s.template.findResources('AWS::Logs::MetricFilter')).map(([id, r]) => [id, r.Properties as Filter]);
  });
  const logGroupIdOf = (fn: FunctionName) => s.stack.getLogicalId(s.stack.functions[fn].logGroup.node.defaultChild as CfnElement);

  it(`at most ${MAX_FILTERS_PER_LOG_GROUP} filters a log group, one transformation each`, () => {
    const byGroup = new Map<string, number>();
    for (const [id, filter] of filters) {
      expect(filter.MetricTransformations, id).toHaveLength(1);
      byGroup.set(filter.LogGroupName.Ref, (byGroup.get(filter.LogGroupName.Ref) ?? 0) + 1);
    }
    expect(Math.max(...byGroup.values())).toBeLessThanOrEqual(MAX_FILTERS_PER_LOG_GROUP);
  });

  it(`each filter: at most ${MAX_DIMENSIONS_PER_FILTER} dimensions, each a $.member its pattern requires; a metric value its pattern requires to be a number; no default value; a unit`, () => {
    for (const [id, filter] of filters) {
      const terms = parseFilterPattern(filter.FilterPattern);
      const [t] = filter.MetricTransformations as [Transformation];
      expect(t.Dimensions?.length ?? 0, id).toBeLessThanOrEqual(MAX_DIMENSIONS_PER_FILTER);
      for (const dimension of t.Dimensions ?? []) {
        const member = /^\$\.(\w+)$/.exec(dimension.Value)?.[1];
        expect(member, `${id} ${dimension.Key}`).toBeDefined();
        expect(terms.some((term) => term.field === member && term.op === '='), `${id}: ${dimension.Value} is not required by ${filter.FilterPattern}`).toBe(true);
      }
      const value = /^\$\.(\w+)$/.exec(t.MetricValue)?.[1];
      expect(terms.some((term) => term.field === value && term.op === '>='), `${id}: ${t.MetricValue} is not required to be a number by ${filter.FilterPattern}`).toBe(true);
      // CloudWatch takes no default value with dimensions; and an event that does not match must publish nothing.
      expect(t.DefaultValue, id).toBeUndefined();
      expect(['Count', 'Milliseconds'], id).toContain(t.Unit);
    }
  });

  it('each function\'s log group holds exactly the filters the table makes for it, and each filter is on the log group the function writes to', () => {
    const lambdas = s.template.findResources('AWS::Lambda::Function');
    for (const fn of Object.keys(FUNCTIONS) as FunctionName[]) {
      const group = logGroupIdOf(fn);
      const handler = s.stack.getLogicalId(s.stack.functions[fn].function.node.defaultChild as CfnElement);
      expect(lambdas[handler]!.Properties.LoggingConfig.LogGroup, fn).toEqual({ Ref: group });
      const onGroup = filters.filter(([, f]) => f.LogGroupName.Ref === group).map(([, f]) => {
        const [t] = f.MetricTransformations as [Transformation];
        return { metricName: t.MetricName, metricNamespace: t.MetricNamespace, filterPattern: f.FilterPattern, metricValue: t.MetricValue, unit: t.Unit, dimensions: Object.fromEntries((t.Dimensions ?? []).map((d) => [d.Key, d.Value])) };
      });
      expect(onGroup.sort((a, b) => a.metricName.localeCompare(b.metricName)), fn).toEqual(metricFiltersOf(fn).sort((a, b) => a.metricName.localeCompare(b.metricName)));
    }
    // Nothing else carries one: every filter is on a function's own log group.
    const groups = new Set((Object.keys(FUNCTIONS) as FunctionName[]).map(logGroupIdOf));
    expect(filters.filter(([, f]) => !groups.has(f.LogGroupName.Ref)).map(([id]) => id)).toEqual([]);
    expect(filters).toHaveLength(Object.values(METRIC_TABLE).reduce((sum, row) => sum + row.writers.length, 0));
  });

  it('every log group a filter reads is in the Standard class: metric filters are supported only there', () => {
    // https://docs.aws.amazon.com/AmazonCloudWatch/latest/logs/MonitoringLogData.html
    const groups = s.template.findResources('AWS::Logs::LogGroup');
    for (const [id, filter] of filters) {
      const group = groups[filter.LogGroupName.Ref];
      expect(group, id).toBeDefined();
      expect(group!.Properties.LogGroupClass ?? 'STANDARD', id).toBe('STANDARD');
    }
  });

  it('each pattern is the one CDK\'s FilterPattern renders for its terms (the service, the metric a number, the dimension present)', () => {
    for (const name of Object.keys(METRIC_TABLE) as MetricName[]) {
      const { dimension } = METRIC_TABLE[name];
      const cdk = FilterPattern.all(
        FilterPattern.stringValue('$.service', '=', 'flowgate'),
        FilterPattern.numberValue(`$.${name}`, '>=', 0),
        ...(dimension ? [FilterPattern.exists(`$.${dimension}`)] : []),
      );
      expect(metricFilterOf(name).filterPattern, name).toBe(cdk.logPatternString);
    }
  });

  it('every metric the alarms and the dashboard read is made by some filter, under the dimensions they read it by', () => {
    const made = new Set(filters.map(([, f]) => {
      const [t] = f.MetricTransformations as [Transformation];
      return `${t.MetricNamespace}|${t.MetricName}|${(t.Dimensions ?? []).map((d) => d.Key).sort().join()}`;
    }));
    const read = metricsReadByOperators(s.template);
    expect(read.length).toBeGreaterThanOrEqual(15);
    expect(read.filter((m) => !made.has(`Flowgate|${m.name}|${m.dimensions.join()}`)).map((m) => `${m.name} {${m.dimensions}} (${m.by})`)).toEqual([]);
  });
});
