import type { Template } from 'aws-cdk-lib/assertions';
import { METRICS_NAMESPACE } from '../../functions/shared/metric-names.js';

/** One metric datapoint as CloudWatch extracts it from an EMF log event. */
export interface EmfDatapoint {
  namespace: string;
  name: string;
  unit?: string;
  dimensions: Record<string, string>;
  values: number[];
}

/** CloudWatch's units (a metric's `Unit` must be one of them). */
const UNITS = new Set(['Seconds', 'Microseconds', 'Milliseconds', 'Bytes', 'Kilobytes', 'Megabytes', 'Gigabytes', 'Terabytes', 'Bits', 'Kilobits', 'Megabits', 'Gigabits', 'Terabits', 'Percent', 'Count', 'Bytes/Second', 'Kilobytes/Second', 'Megabytes/Second', 'Gigabytes/Second', 'Terabytes/Second', 'Bits/Second', 'Kilobits/Second', 'Megabits/Second', 'Gigabits/Second', 'Terabits/Second', 'Count/Second', 'None']);

const fail = (line: string, why: string): never => {
  throw new Error(`not an EMF log event CloudWatch would extract (${why}): ${line}`);
};

/**
 * Reads one log event as CloudWatch reads embedded metric format, following its specification
 * (https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch_Embedded_Metric_Format_Specification.html):
 * a JSON object whose `_aws` holds a numeric `Timestamp` and `CloudWatchMetrics`, an array of
 * directives (a `Namespace`, `Dimensions` as arrays of at most 30 keys, `Metrics` of at most 100
 * with a `Name` and an optional `Unit`), every key they name present at the root (a dimension a
 * string, a metric a number or an array of at most 100 numbers). Throws where CloudWatch would
 * reject the event; returns its datapoints (one per dimension set of each metric) and the members
 * no directive names, which CloudWatch keeps in the log event only.
 */
export function parseEmf(line: string): { timestamp: number; datapoints: EmfDatapoint[]; logOnly: Record<string, unknown> } {
  let root: unknown;
  try {
    root = JSON.parse(line);
  } catch {
    return fail(line, 'not JSON');
  }
  if (typeof root !== 'object' || root === null || Array.isArray(root)) return fail(line, 'not an object');
  const members = root as Record<string, unknown>;
  const aws = members._aws as { Timestamp?: unknown; CloudWatchMetrics?: unknown } | undefined;
  if (typeof aws !== 'object' || aws === null) return fail(line, 'no _aws');
  if (typeof aws.Timestamp !== 'number' || !Number.isInteger(aws.Timestamp)) return fail(line, '_aws.Timestamp is not epoch milliseconds');
  if (!Array.isArray(aws.CloudWatchMetrics)) return fail(line, 'no _aws.CloudWatchMetrics');
  const named = new Set<string>(['_aws']);
  const datapoints: EmfDatapoint[] = [];
  for (const directive of aws.CloudWatchMetrics as { Namespace?: unknown; Dimensions?: unknown; Metrics?: unknown }[]) {
    if (typeof directive.Namespace !== 'string' || directive.Namespace.length === 0) return fail(line, 'a directive without Namespace');
    if (!Array.isArray(directive.Dimensions) || !Array.isArray(directive.Metrics)) return fail(line, 'a directive without Dimensions or Metrics');
    if (directive.Metrics.length > 100) return fail(line, 'over 100 metrics in a directive');
    const sets = directive.Dimensions as unknown[];
    for (const set of sets) {
      if (!Array.isArray(set) || set.length > 30) return fail(line, 'a dimension set that is not an array of at most 30 keys');
      for (const key of set) {
        if (typeof members[key] !== 'string') return fail(line, `dimension ${String(key)} is not a string at the root`);
        named.add(key);
      }
    }
    for (const metric of directive.Metrics as { Name?: unknown; Unit?: unknown }[]) {
      if (typeof metric.Name !== 'string') return fail(line, 'a metric without Name');
      if (metric.Unit !== undefined && (typeof metric.Unit !== 'string' || !UNITS.has(metric.Unit))) return fail(line, `unit ${String(metric.Unit)}`);
      const value = members[metric.Name];
      const values = Array.isArray(value) ? value : [value];
      if (values.length === 0 || values.length > 100 || values.some((v) => typeof v !== 'number')) return fail(line, `${metric.Name} is not a number or an array of at most 100`);
      named.add(metric.Name);
      for (const set of sets as string[][]) {
        datapoints.push({
          namespace: directive.Namespace, name: metric.Name, ...(metric.Unit !== undefined && { unit: metric.Unit as string }),
          dimensions: Object.fromEntries(set.map((key) => [key, members[key] as string])), values: values as number[],
        });
      }
    }
  }
  const logOnly = Object.fromEntries(Object.entries(members).filter(([key]) => !named.has(key)));
  return { timestamp: aws.Timestamp, datapoints, logOnly };
}

/** A service metric an operator reads: its name and the dimension keys it is read with. */
export interface ReadMetric {
  name: string;
  dimensions: string[];
  by: string;
}

/**
 * The service's own metrics (namespace `Flowgate`) that the template's alarms and dashboard read,
 * with the dimension keys each reads them by: an alarm's metric (or the metrics of its expression),
 * a dashboard graph's metric, or a dashboard `SEARCH` (`{Flowgate,service,reason} MetricName="…"`).
 */
export function metricsReadByOperators(template: Template): ReadMetric[] {
  const read = new Map<string, ReadMetric>();
  const add = (name: string, dimensions: string[], by: string) => {
    const sorted = [...dimensions].sort();
    const key = `${name}|${sorted.join()}`;
    if (!read.has(key)) read.set(key, { name, dimensions: sorted, by });
  };
  for (const [id, alarm] of Object.entries(template.findResources('AWS::CloudWatch::Alarm'))) {
    const properties = alarm.Properties as { Namespace?: string; MetricName?: string; Dimensions?: { Name: string }[]; Metrics?: { MetricStat?: { Metric: { Namespace: string; MetricName: string; Dimensions?: { Name: string }[] } } }[] };
    if (properties.Namespace === METRICS_NAMESPACE) add(properties.MetricName!, (properties.Dimensions ?? []).map((d) => d.Name), `alarm ${id}`);
    for (const metric of properties.Metrics ?? []) {
      const stat = metric.MetricStat?.Metric;
      if (stat?.Namespace === METRICS_NAMESPACE) add(stat.MetricName, (stat.Dimensions ?? []).map((d) => d.Name), `alarm ${id}`);
    }
  }
  for (const [id, dashboard] of Object.entries(template.findResources('AWS::CloudWatch::Dashboard'))) {
    // The body is a Fn::Join of strings and tokens: its strings, joined, hold every widget's metrics.
    const strings: string[] = [];
    const walk = (value: unknown): void => {
      if (typeof value === 'string') strings.push(value);
      else if (Array.isArray(value)) value.forEach(walk);
      else if (value && typeof value === 'object') Object.values(value).forEach(walk);
    };
    walk(dashboard.Properties.DashboardBody);
    const body = strings.join('');
    // A graphed metric: ["Flowgate","<name>","<dimension>","<value>",…(, {options})]
    for (const match of body.matchAll(/\["Flowgate","(\w+)"((?:,"[^"]*")*)/g)) {
      const rest = [...match[2]!.matchAll(/,"([^"]*)"/g)].map((m) => m[1]!);
      add(match[1]!, rest.filter((_, i) => i % 2 === 0), `dashboard ${id}`);
    }
    for (const match of body.matchAll(/SEARCH\('\{Flowgate,([\w,]+)\} MetricName=\\?"(\w+)\\?"/g)) add(match[2]!, match[1]!.split(','), `dashboard ${id}`);
  }
  return [...read.values()];
}
