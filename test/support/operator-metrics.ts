import type { Template } from 'aws-cdk-lib/assertions';
import { METRICS_NAMESPACE } from '../../functions/shared/metric-names.js';

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
