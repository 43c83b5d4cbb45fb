import type { FunctionName } from '../manifest.js';
import { METRIC, METRIC_DIMENSION, METRICS_NAMESPACE, METRICS_SERVICE, type MetricName } from './metric-names.js';

/**
 * How the service's metric lines become CloudWatch metrics: one table, read by the CDK stack (an
 * `AWS::Logs::MetricFilter` per metric on the log group of each function that writes it,
 * `lib/constructs/service-function.ts`) and by the local stack (`local/metric-lines.ts`, which
 * applies the same filters to the same lines with `metricsFromLine`), so local metrics are the
 * deployed ones. Not imported by any function's code: the writer (`metric-line-writer.ts`) needs
 * none of it, and every function's init stays as small as it is.
 *
 * A metric line is one JSON object a log event (Lambda sends each line a function writes with
 * `process.stdout.write` to its log group as one event, the line itself its message):
 * `{"service":"flowgate","reason":"invalid_signature","WebhooksReceived":1,"WebhooksRefused":1,…}`.
 * Each metric is a member named as the metric, its value a number; its one extra dimension, if
 * any, a member of its own (`reason`, `flow`); `service` names the service. A filter publishes one
 * value per matching event, so a duration has a line of its own per run (see the writer).
 * https://docs.aws.amazon.com/AmazonCloudWatch/latest/logs/MonitoringPolicyExamples.html
 */

/** CloudWatch's unit of each kind of metric. */
export type MetricUnit = 'Count' | 'Milliseconds';

export interface MetricTableRow {
  unit: MetricUnit;
  /** The one extra dimension, besides `service`, from a bounded set of values (never an id). */
  dimension?: (typeof METRIC_DIMENSION)[keyof typeof METRIC_DIMENSION];
  /** The functions that write it: each of their log groups gets its filter. */
  writers: readonly FunctionName[];
}

const count = (writers: readonly FunctionName[], dimension?: MetricTableRow['dimension']): MetricTableRow => ({ unit: 'Count', writers, ...(dimension && { dimension }) });
/** A flow run's metrics are counted where it runs: the receiver (wait mode) and the flow worker. */
const FLOW_RUNNERS: readonly FunctionName[] = ['webhook', 'flowWorker'];

/** Every metric the functions write: its unit, its dimension, who writes it. */
export const METRIC_TABLE: Readonly<Record<MetricName, MetricTableRow>> = {
  [METRIC.webhooksReceived]: count(['webhook']),
  [METRIC.webhooksAccepted]: count(['webhook']),
  [METRIC.webhooksIgnored]: count(['webhook']),
  [METRIC.webhooksDuplicate]: count(['webhook']),
  [METRIC.webhooksRefused]: count(['webhook'], METRIC_DIMENSION.reason),
  [METRIC.webhookRefusalsNotRecorded]: count(['webhook']),
  [METRIC.deliveriesReplayed]: count(['triggers']),
  [METRIC.flowRunsSucceeded]: count(FLOW_RUNNERS, METRIC_DIMENSION.flow),
  [METRIC.flowRunsFailed]: count(FLOW_RUNNERS, METRIC_DIMENSION.flow),
  [METRIC.flowRunsTimedOut]: count(FLOW_RUNNERS, METRIC_DIMENSION.flow),
  [METRIC.flowRunDuration]: { unit: 'Milliseconds', dimension: METRIC_DIMENSION.flow, writers: FLOW_RUNNERS },
  [METRIC.kvPurges]: count(['kv']),
  [METRIC.kvItemsReclaimed]: count(['kvSweeper']),
  [METRIC.totpConfirmationsFailed]: count(['accounts']),
  [METRIC.totpLockouts]: count(['accounts']),
};

/** One metric filter, as CloudFormation's `AWS::Logs::MetricFilter` takes it. */
export interface MetricFilterSpec {
  metricName: MetricName;
  metricNamespace: string;
  filterPattern: string;
  /** `$.<metric>`: the member the pattern requires to be a number. */
  metricValue: string;
  unit: MetricUnit;
  /** Dimension name to `$.<member>`, each a member the pattern requires. */
  dimensions: Record<string, string>;
}

/** The terms of the one pattern shape the table makes: every term required (`&&`). */
type Term = { field: string; op: '='; value: string } | { field: string; op: '>='; value: number };

const renderTerm = (term: Term) => `$.${term.field} ${term.op} ${typeof term.value === 'number' ? term.value : JSON.stringify(term.value)}`;

/**
 * The filter of one metric: its line must name the service, carry the metric as a number (a
 * comparison matches only a number) and, for a dimension, the dimension's member (`"*"`: any
 * value). Every member the filter reads is one its pattern requires, as CloudWatch requires of a
 * `metricValue` and of dimensions; no default value (CloudWatch takes none with dimensions, and
 * an unmatched event must publish nothing).
 */
export function metricFilterOf(name: MetricName): MetricFilterSpec {
  const row = METRIC_TABLE[name];
  const terms: Term[] = [{ field: 'service', op: '=', value: METRICS_SERVICE }, { field: name, op: '>=', value: 0 }];
  if (row.dimension) terms.push({ field: row.dimension, op: '=', value: '*' });
  return {
    metricName: name,
    metricNamespace: METRICS_NAMESPACE,
    // The form CDK's `FilterPattern.all(...)` renders (each term in parentheses): the test/infra test holds them equal.
    filterPattern: `{ ${terms.map((term) => `(${renderTerm(term)})`).join(' && ')} }`,
    metricValue: `$.${name}`,
    unit: row.unit,
    dimensions: { service: '$.service', ...(row.dimension && { [row.dimension]: `$.${row.dimension}` }) },
  };
}

/** The filters on one function's log group: one per metric it writes (none for a function that writes none). */
export const metricFiltersOf = (fn: string): MetricFilterSpec[] =>
  (Object.keys(METRIC_TABLE) as MetricName[]).filter((name) => (METRIC_TABLE[name].writers as readonly string[]).includes(fn)).map(metricFilterOf);

/**
 * Reads a filter pattern of the shape `metricFilterOf` makes: `{ (term) && (term) … }`, each term
 * `$.<member> = "<text>"` (`"*"`: any value), or `$.<member> >= <number>`. Throws on anything
 * else, so a filter the table makes that this evaluator cannot read fails its tests, not silently.
 */
export function parseFilterPattern(pattern: string): Term[] {
  const body = /^\{ (.+) \}$/.exec(pattern)?.[1];
  if (!body) throw new Error(`not a JSON filter pattern this evaluator reads: ${pattern}`);
  return body.split(' && ').map((text) => {
    const match = /^\(\$\.([A-Za-z]\w*) (=|>=) ("[^"\\]*"|-?\d+(?:\.\d+)?)\)$/.exec(text);
    if (!match) throw new Error(`not a term this evaluator reads: ${text} (in ${pattern})`);
    const [, field, op, value] = match;
    return op === '=' ? { field: field!, op: '=', value: JSON.parse(value!) as string } : { field: field!, op: '>=', value: Number(value) };
  });
}

/**
 * Whether a log event's message matches a pattern, as CloudWatch matches a JSON pattern: the
 * message must be a JSON object; `= "text"` matches a string member equal to it (`"*"` any string),
 * `>= n` a number member at least n. A missing member matches no term.
 */
export function patternMatches(terms: readonly Term[], event: Readonly<Record<string, unknown>>): boolean {
  return terms.every((term) => {
    const value = event[term.field];
    if (term.op === '>=') return typeof value === 'number' && Number.isFinite(value) && value >= term.value;
    return typeof value === 'string' && (term.value === '*' || value === term.value);
  });
}

/** A metric datapoint as a filter publishes it from one log event. */
export interface FilterDatapoint {
  namespace: string;
  name: string;
  unit: MetricUnit;
  dimensions: Record<string, string>;
  value: number;
}

/** The JSON object a log event's message is, or undefined (a filter's JSON pattern matches no other event). */
function asObject(message: string): Record<string, unknown> | undefined {
  try {
    const parsed = JSON.parse(message) as unknown;
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** Each pattern read once: a local stack applies the same few patterns to thousands of lines. */
const parsed = new Map<string, Term[]>();
const termsOf = (pattern: string): Term[] => {
  let terms = parsed.get(pattern);
  if (!terms) parsed.set(pattern, terms = parseFilterPattern(pattern));
  return terms;
};

/** What the given filters publish from one log event (a line a function wrote): a datapoint per filter that matches. */
export function metricsFromLine(filters: readonly MetricFilterSpec[], message: string): FilterDatapoint[] {
  const event = asObject(message);
  if (!event) return [];
  const field = (reference: string) => event[reference.replace(/^\$\./, '')];
  return filters.filter((filter) => patternMatches(termsOf(filter.filterPattern), event)).map((filter) => ({
    namespace: filter.metricNamespace,
    name: filter.metricName,
    unit: filter.unit,
    dimensions: Object.fromEntries(Object.entries(filter.dimensions).map(([name, reference]) => [name, field(reference) as string])),
    value: field(filter.metricValue) as number,
  }));
}
