import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { delimiter, resolve } from 'node:path';
import type { SQSEvent } from 'aws-lambda';
import { dynamoClient } from '../functions/adapters/aws/clients/dynamo.js';
import { sfnClient } from '../functions/adapters/aws/clients/sfn.js';
import { sqsClient } from '../functions/adapters/aws/clients/sqs.js';
import { LocalSecretBox } from '../functions/adapters/local-secret-box.js';
import { FUNCTIONS, type FunctionName } from '../functions/manifest.js';
import { startLocalStack, type LocalStack } from '../local/stack.js';
import { signStripe } from '../test/support/signers.js';
import { synth } from '../test/support/synth.js';
import { writeCostChart } from './support/cost-chart.js';
import type { ChartRow } from './support/chart-row.js';
import { KB, realisticEvent } from './support/payloads.js';
import { fixed } from './support/timing.js';
import { meterWriteUnitsByItem } from './support/write-units-by-item.js';

/**
 * `npm run bench cost`: what one webhook costs on the deployed stack, in dollars per million, by
 * billed line, counted from what the handlers actually do on the local stack (not from a model of
 * them), priced with `bench/prices.json` (us-east-1 list prices, free tiers left out):
 *
 * - API Gateway: every request the bench sends to the API (each 512 KB counts as one). Deliveries go
 *   to each trigger's \`url\`, the receiver's function URL, which is billed as the invocation alone.
 * - Lambda: every invocation of every function, through the local stack's `aroundInvocation` (the
 *   flow queue's batches as batches), its handler's wall time here rounded up to the ms and the
 *   memory the manifest gives it, at the arm64 rate.
 * - SQS: every request the handlers' client sends (each 64 KB chunk counts as one), and per batch
 *   the event source mapping's receive and its delete of the batch.
 * - Step Functions: every express execution the handlers start, its time rounded up to 100 ms, at 64 MB.
 * - DynamoDB: every call with `ReturnConsumedCapacity: TOTAL`, the units the engine reports.
 * - KMS: every secret opened or sealed (locally a process-held key stands in for each KMS call).
 * - CloudWatch Logs: every line each function writes during its invocations, the lines Lambda adds
 *   (START/REPORT) at the system log level the synthesized template sets, the access log line the
 *   stage's format makes, and the events each state machine logs at its template's level; each log
 *   event is billed 26 bytes over its text.
 *
 * The durations are this machine's, with in-process engines: Lambda's and DynamoDB's round trips
 * differ; the counts do not.
 */
const PRICES = JSON.parse(readFileSync(resolve(import.meta.dirname, 'prices.json'), 'utf8')) as PriceTable;
const SECRET = 'whsec_cost_bench';
const FLOWS_DIR = [resolve(import.meta.dirname, '../flows'), resolve(import.meta.dirname, 'flows')].join(delimiter);
/** In flight at once: enough for the flow queue to see batches of several events, as a busy trigger's does. */
const CONCURRENCY = Number(process.env.COST_CONCURRENCY ?? 4);
const LOG_EVENT_OVERHEAD_BYTES = 26;
const debugWrite = process.stderr.write.bind(process.stderr);
const API_GATEWAY_METERING_BYTES = 512 * KB;
const SQS_CHUNK_BYTES = 64 * KB;
/** ReceiveMessage's and DeleteMessageBatch's most messages a call. */
const SQS_MAX_MESSAGES_PER_CALL = 10;
const SFN_BILLING_MS = 100;
const SFN_BILLING_MB = 64;

interface PriceTable {
  prices: Record<string, { usd: number; unit: string; source: string }>;
  monthly: Record<string, { usd: number; unit: string; source: string }>;
  peers: { name: string; usd_per_million: number; basis: string; source: string; checked: string }[];
  checked: string;
  free_tiers: string;
}

interface Scenario {
  name: string;
  bytes: number;
  flow: 'noop' | 'echo';
  mode: 'acknowledge' | 'wait';
  refused?: boolean;
  events: number;
}

/**
 * The bars, dollars per million as deployed: a busy trigger's 1 KB event whose flow returns nothing,
 * the same event on a quiet trigger (each alone in its flow-queue batch and execution), wait mode,
 * and a refused delivery. `npm run bench cost` exits non-zero when one is missed.
 */
const TARGETS: { label: string; scenario: string; row: 'total' | 'quiet'; usd: number }[] = [
  { label: 'busy trigger, 1 KB, flow returns nothing', scenario: '1 KB, flow returns nothing', row: 'total', usd: 3.0 },
  { label: 'quiet trigger, 1 KB, flow returns nothing', scenario: '1 KB, flow returns nothing', row: 'quiet', usd: 4.5 },
  { label: 'wait mode, 1 KB', scenario: '1 KB, wait mode', row: 'total', usd: 4.5 },
  { label: 'refused delivery', scenario: '1 KB, refused (bad signature)', row: 'total', usd: 1.5 },
];

const ALL_SCENARIOS: Scenario[] = [
  { name: '1 KB, flow returns nothing', bytes: 1 * KB, flow: 'noop', mode: 'acknowledge', events: 300 },
  { name: '1 KB, echo flow', bytes: 1 * KB, flow: 'echo', mode: 'acknowledge', events: 200 },
  { name: '10 KB, flow returns nothing', bytes: 10 * KB, flow: 'noop', mode: 'acknowledge', events: 200 },
  { name: '1 KB, wait mode', bytes: 1 * KB, flow: 'noop', mode: 'wait', events: 200 },
  { name: '1 KB, refused (bad signature)', bytes: 1 * KB, flow: 'noop', mode: 'acknowledge', refused: true, events: 300 },
];
/**
 * A quiet trigger, measured rather than computed: the first scenario's events sent one at a time,
 * each once the previous one's flow has run and at least {@link QUIET_SPACING_MS} after it was
 * sent, so the receiver's quiet rule (fewer than 8 deliveries of the trigger within a second,
 * `functions/domain/flows/quiet-rule.ts`) sees them as they arrive on a quiet trigger and sends
 * each straight to the flow worker.
 */
const QUIET_SCENARIO = '1 KB, flow returns nothing';
const QUIET_EVENTS = Number(process.env.COST_QUIET_EVENTS ?? 60);
const QUIET_SPACING_MS = 150;
/**
 * Deliveries sent before a scenario is metered: the trigger cached and every function's code past
 * V8's warm-up, as in an environment under steady traffic, which has served thousands. The first
 * scenario warms the stack (its receiver took 15 to 22 ms a delivery after 10, 10 to 11 ms after
 * a scenario's worth, and a slower receiver is also fewer events a flow-queue batch); the others
 * need only their own trigger read.
 */
const WARM_UP_EVENTS = { stack: 300, scenario: 10 };
/** `COST_SCENARIOS=0,3 npm run bench cost` runs only those (by index), e.g. while cutting one line. */
const SCENARIOS = process.env.COST_SCENARIOS ? process.env.COST_SCENARIOS.split(',').map((i) => ALL_SCENARIOS[Number(i)]!) : ALL_SCENARIOS;

/** What one scenario used, summed over its events. */
class Usage {
  apiRequests = 0;
  accessLogLines = 0;
  lambda = new Map<FunctionName, { invocations: number; billedMs: number; records: number }>();
  sqsRequests = 0;
  sfnExecutions = 0;
  sfnGbSeconds = 0;
  writeUnits = 0;
  /** Write units by the kind of item written (the first part of its key: TRIGGER is a status record, REQUEST a request…). */
  writeUnitsByItem = new Map<string, number>();
  readUnits = 0;
  kmsRequests = 0;
  /** Log bytes by source, each event with its 26 bytes. */
  logBytes = new Map<string, number>();
  workerRecordsDone = 0;
  /** Flow worker invocations that carried one event straight from the receiver. */
  directInvocations = 0;

  addLog(source: string, bytes: number) {
    this.logBytes.set(source, (this.logBytes.get(source) ?? 0) + bytes);
  }
}

/** What the synthesized template says about logging, read rather than assumed. */
interface DeployedLogging {
  /** Lambda's system log level per function (INFO writes START and REPORT on every invocation). */
  systemLogLevel: string;
  /** The HTTP API stage's access log format, `$context.*` variables in it. */
  accessLogFormat: string;
  /** The state machines' log level (ALL, ERROR, FATAL or OFF). */
  flowLogLevel: string;
  alarms: number;
  dashboards: number;
  kmsKeys: number;
  /** SQS event source mappings: each polls its queue whether or not anything arrives. */
  sqsEventSources: number;
}

function readDeployedLogging(): DeployedLogging {
  const resources = Object.values(synth().template.toJSON().Resources as Record<string, { Type: string; Properties: Record<string, any> }>);
  const of = (type: string) => resources.filter((r) => r.Type === type);
  const systemLevels = new Set(of('AWS::Lambda::Function').map((r) => r.Properties.LoggingConfig?.SystemLogLevel ?? 'INFO'));
  const flowLevels = new Set(of('AWS::StepFunctions::StateMachine').map((r) => r.Properties.LoggingConfiguration?.Level ?? 'OFF'));
  if (systemLevels.size !== 1 || flowLevels.size !== 1) throw new Error('functions or flows log at several levels: price them one by one');
  const stage = of('AWS::ApiGatewayV2::Stage')[0]!;
  return {
    systemLogLevel: [...systemLevels][0]!,
    accessLogFormat: stage.Properties.AccessLogSettings?.Format ?? '',
    flowLogLevel: [...flowLevels][0]!,
    alarms: of('AWS::CloudWatch::Alarm').length,
    dashboards: of('AWS::CloudWatch::Dashboard').length,
    kmsKeys: of('AWS::KMS::Key').length,
    sqsEventSources: of('AWS::Lambda::EventSourceMapping').length,
  };
}

/** The access log line the stage writes for one webhook request, its variables given typical values. */
function accessLogLine(format: string): string {
  const values: Record<string, string> = {
    requestId: 'Jk2pLhAboAMEbYw=', requestTime: '24/Nov/2026:10:52:04 +0000', 'identity.sourceIp': '54.187.174.169', httpMethod: 'POST',
    routeKey: 'ANY /webhooks/{webhook_id}', status: '200', protocol: 'HTTP/1.1', responseLength: '52', responseLatency: '23',
    integrationLatency: '21', integrationErrorMessage: '-', 'error.message': '-',
  };
  return format.replace(/\$context\.([A-Za-z.]+)/g, (_, name: string) => values[name] ?? '-');
}

/** Lambda's own lines per invocation at system level INFO (JSON log format), as its docs show them. */
const PLATFORM_LINES = [
  JSON.stringify({ time: '2026-11-24T10:52:04.123Z', type: 'platform.start', record: { requestId: randomUUID(), version: '$LATEST' } }),
  JSON.stringify({ time: '2026-11-24T10:52:04.140Z', type: 'platform.report', record: { requestId: randomUUID(), metrics: { durationMs: 16.49, billedDurationMs: 17, memorySizeMB: 1024, maxMemoryUsedMB: 98 }, status: 'success' } }),
];

/** The events a state machine logs for one successful run of a flow of `states` Pass states at level ALL (without execution data). */
function flowLogLines(states: number): string[] {
  const execution = `arn:aws:states:us-east-1:123456789012:express:flowgate-flow-noop:${randomUUID()}:${randomUUID()}`;
  const line = (id: number, type: string, details: object) => JSON.stringify({ id: String(id), type, details, previous_event_id: String(id - 1), event_timestamp: '1795517543552', execution_arn: execution, redrive_count: '0' });
  const lines = [line(1, 'ExecutionStarted', { roleArn: 'arn:aws:iam::123456789012:role/flowgate-FlowsnoopRole1A2B3C4D-AbCdEfGhIjKl' })];
  for (let i = 0; i < states; i++) lines.push(line(lines.length + 1, 'PassStateEntered', { name: 'Done' }), line(lines.length + 2, 'PassStateExited', { name: 'Done' }));
  lines.push(line(lines.length + 1, 'ExecutionSucceeded', {}));
  return lines;
}

const logBytes = (lines: readonly string[]) => lines.reduce((sum, line) => sum + Buffer.byteLength(line) + LOG_EVENT_OVERHEAD_BYTES, 0);

/** Meters the stack's clients, invocations and output while `usage` is set. */
function meter(stack: LocalStack, invocations: AsyncLocalStorage<FunctionName>, current: () => Usage | undefined) {
  const consumed = (output: unknown) => {
    const capacity = (output as { ConsumedCapacity?: { CapacityUnits?: number } | { CapacityUnits?: number }[] }).ConsumedCapacity;
    return (Array.isArray(capacity) ? capacity : capacity ? [capacity] : []).reduce((sum, c) => sum + (c.CapacityUnits ?? 0), 0);
  };
  dynamoClient(stack.aws).middlewareStack.add((next, context) => async (args) => {
    const usage = current();
    if (!usage || !/^(Get|Query|Scan|BatchGet|TransactGet)/.test(context.commandName ?? '')) return next(args);
    (args.input as { ReturnConsumedCapacity?: string }).ReturnConsumedCapacity = 'TOTAL';
    const result = await next(args);
    usage.readUnits += consumed(result.output);
    return result;
  }, { step: 'initialize', name: 'meterReadCapacity' });
  // Writes item by item: a batch write reports its units per table only.
  meterWriteUnitsByItem(dynamoClient(stack.aws), 'meterWriteCapacity', (pk, units, command) => {
    const usage = current()!;
    usage.writeUnits += units;
    const kind = String(pk ?? command).split('#')[0]!.toLowerCase();
    usage.writeUnitsByItem.set(kind, (usage.writeUnitsByItem.get(kind) ?? 0) + units);
  }, () => current() !== undefined);
  sqsClient(stack.aws).middlewareStack.add((next, context) => async (args) => {
    const usage = current();
    if (usage) {
      const input = args.input as { MessageBody?: string; Entries?: { MessageBody?: string }[] };
      const requests = (body: string | undefined) => Math.max(1, Math.ceil(Buffer.byteLength(body ?? '') / SQS_CHUNK_BYTES));
      // Here concurrent deliveries' sends share a SendMessageBatch; deployed, each invocation sends its own
      // (a Lambda environment serves one request at a time), so each entry is billed as its own send.
      if (input.Entries) usage.sqsRequests += input.Entries.reduce((sum, e) => sum + requests(e.MessageBody), 0);
      else usage.sqsRequests += /^Send/.test(context.commandName ?? '') ? requests(input.MessageBody) : 1;
    }
    return next(args);
  }, { step: 'initialize', name: 'meterRequests' });
  sfnClient(stack.aws).middlewareStack.add((next) => async (args) => {
    const usage = current();
    const startedAt = performance.now();
    const result = await next(args);
    if (usage) {
      usage.sfnExecutions++;
      const billedMs = Math.max(1, Math.ceil((performance.now() - startedAt) / SFN_BILLING_MS)) * SFN_BILLING_MS;
      usage.sfnGbSeconds += (SFN_BILLING_MB / 1024) * (billedMs / 1000);
    }
    return result;
  }, { step: 'initialize', name: 'meterExecutions' });
  for (const method of ['open', 'seal'] as const) {
    const original = LocalSecretBox.prototype[method] as (...args: unknown[]) => Promise<unknown>;
    (LocalSecretBox.prototype as unknown as Record<string, unknown>)[method] = function (this: LocalSecretBox, ...args: unknown[]) {
      const usage = current();
      if (usage) usage.kmsRequests++;
      return original.apply(this, args);
    };
  }
  // Every line a function writes during an invocation is its log; the rest of the process's output passes.
  for (const stream of [process.stdout, process.stderr]) {
    const write = stream.write.bind(stream);
    stream.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
      const fn = invocations.getStore();
      const usage = current();
      if (fn === undefined || usage === undefined) return (write as (...args: unknown[]) => boolean)(chunk, ...rest);
      const lines = Buffer.from(chunk).toString('utf8').split('\n').filter((line) => line.length > 0);
      usage.addLog(`${fn} (its own lines)`, logBytes(lines));
      if (process.env.COST_DEBUG) debugWrite(`[${fn}] ${lines.join('\n')}\n`);
      const done = rest.find((arg) => typeof arg === 'function') as (() => void) | undefined;
      done?.();
      return true;
    }) as typeof stream.write;
  }
}

interface LineItem {
  line: string;
  units: string;
  usd_per_million: number;
}

function price(usage: Usage, events: number): LineItem[] {
  const p = PRICES.prices;
  const perMillion = (usd: number) => (usd / events) * 1e6;
  const items: LineItem[] = [];
  items.push({ line: 'API Gateway requests', units: `${fixed(usage.apiRequests / events)} requests`, usd_per_million: perMillion(usage.apiRequests * p.api_gateway_http_request!.usd) });
  let invocations = 0;
  let gbSeconds = 0;
  const durations: string[] = [];
  for (const [fn, use] of usage.lambda) {
    invocations += use.invocations;
    const fnGbSeconds = (FUNCTIONS[fn].memoryMb / 1024) * (use.billedMs / 1000);
    gbSeconds += fnGbSeconds;
    durations.push(`${fn} ${fixed(use.invocations / events)} × ${fixed(use.billedMs / use.invocations)} ms at ${FUNCTIONS[fn].memoryMb} MB${use.records ? ` (${fixed(use.records / use.invocations)} events a batch)` : ''}`);
  }
  items.push({ line: 'Lambda requests', units: `${fixed(invocations / events)} invocations`, usd_per_million: perMillion(invocations * p.lambda_request!.usd) });
  items.push({ line: 'Lambda duration', units: durations.join('; '), usd_per_million: perMillion(gbSeconds * p.lambda_arm64_gb_second!.usd) });
  items.push({ line: 'SQS requests', units: `${fixed(usage.sqsRequests / events)} requests`, usd_per_million: perMillion(usage.sqsRequests * p.sqs_request!.usd) });
  items.push({ line: 'Step Functions requests', units: `${fixed(usage.sfnExecutions / events)} express executions`, usd_per_million: perMillion(usage.sfnExecutions * p.sfn_express_request!.usd) });
  items.push({ line: 'Step Functions duration', units: `${fixed((usage.sfnGbSeconds / Math.max(1, usage.sfnExecutions)) * 1000)} GB-ms each`, usd_per_million: perMillion(usage.sfnGbSeconds * p.sfn_express_gb_second!.usd) });
  items.push({ line: 'DynamoDB writes', units: `${fixed(usage.writeUnits / events)} write units: ${[...usage.writeUnitsByItem].map(([kind, units]) => `${kind} ${fixed(units / events)}`).join(', ')}`, usd_per_million: perMillion(usage.writeUnits * p.dynamodb_write_request_unit!.usd) });
  items.push({ line: 'DynamoDB reads', units: `${fixed(usage.readUnits / events)} read units`, usd_per_million: perMillion(usage.readUnits * p.dynamodb_read_request_unit!.usd) });
  items.push({ line: 'KMS requests', units: `${fixed(usage.kmsRequests / events, 3)} requests`, usd_per_million: perMillion(usage.kmsRequests * p.kms_request!.usd) });
  const logTotal = [...usage.logBytes.values()].reduce((a, b) => a + b, 0);
  items.push({
    line: 'CloudWatch Logs',
    units: `${Math.round(logTotal / events)} bytes: ${[...usage.logBytes].map(([source, bytes]) => `${source} ${Math.round(bytes / events)}`).join(', ')}`,
    usd_per_million: perMillion((logTotal / 1024 ** 3) * p.cloudwatch_logs_ingested_gb!.usd),
  });
  return items;
}

async function send(url: string, agent: Agent, body: string, headers: Record<string, string>): Promise<number> {
  return new Promise((done, fail) => {
    const req = request(url, { method: 'POST', agent, headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) } }, (res) => {
      res.resume();
      res.on('end', () => done(res.statusCode ?? 0));
    });
    req.on('error', fail);
    req.end(body);
  });
}

/** Stripe's own headers on a delivery, beside its signature. */
const STRIPE_HEADERS = { 'content-type': 'application/json; charset=utf-8', 'user-agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)', accept: '*/*; q=0.5, application/xml', 'cache-control': 'no-cache' };

export default async function costBench() {
  const logging = readDeployedLogging();
  const invocations = new AsyncLocalStorage<FunctionName>();
  let usage: Usage | undefined;
  const flowStates = (flow: string) => Object.keys((JSON.parse(readFileSync(resolve(flow === 'noop' ? resolve(import.meta.dirname, 'flows') : resolve(import.meta.dirname, '../flows'), `${flow}.asl.json`), 'utf8')) as { States: object }).States).length;
  const stack = await startLocalStack({
    port: 0,
    flowsDir: FLOWS_DIR,
    // As deployed by default (context listenApi off): no delivery pays a query for listeners.
    listenApi: false,
    // As Lambda polls the flow queue at this rate: five batches at once, the number it starts an
    // SQS event source mapping with and adds to only while messages wait (they do not: each poller
    // takes what arrives within its window). The local stack's default of 8 is for its throughput.
    flowWorkerPollers: 5,
    // On stdout, as Lambda writes them: their bytes are billed as log ingestion, metered below.
    metrics: 'stdout',
    aroundInvocation: async (fn, event, invoke) => {
      const metered = usage;
      if (!metered) return invoke();
      // As deployed, an environment serves one request at a time, on its own CPU: here every
      // invocation shares one event loop (the receiver's with each other's and with the flow
      // worker's), and each would be billed the others' time. So invocations take turns, whatever
      // their function, and each is timed from its own start.
      const release = await oneAtATime();
      try {
        const startedAt = performance.now();
        const result = await invocations.run(fn, invoke);
        account(metered, fn, event, result, startedAt);
        return result;
      } finally {
        release();
      }
    },
  });
  let turn = Promise.resolve();
  /** Waits for the previous invocation to end; the returned function ends this one's turn. */
  const oneAtATime = async (): Promise<() => void> => {
    const previous = turn;
    let release!: () => void;
    const mine = new Promise<void>((resolve) => (release = resolve));
    turn = previous.then(() => mine);
    await previous;
    return release;
  };
  /** Bills one invocation: its time, Lambda's own log lines, and for a queue batch its receive and delete. */
  const account = (metered: Usage, fn: FunctionName, event: unknown, result: unknown, startedAt: number) => {
    const use = metered.lambda.get(fn) ?? { invocations: 0, billedMs: 0, records: 0 };
    metered.lambda.set(fn, use);
    use.invocations++;
    use.billedMs += Math.max(1, Math.ceil(performance.now() - startedAt));
    if (logging.systemLogLevel === 'INFO') metered.addLog('Lambda START and REPORT', logBytes(PLATFORM_LINES));
    const records = (event as Partial<SQSEvent>).Records;
    if (fn === 'flowWorker' && !records) {
      // A direct invocation (a quiet trigger's event, `direct-first-queue.ts`): one event, no queue request.
      use.records += 1;
      metered.workerRecordsDone += 1;
      metered.directInvocations += 1;
    }
    if (records) {
      use.records += records.length;
      const failed = new Set(((result as { batchItemFailures?: { itemIdentifier: string }[] } | undefined)?.batchItemFailures ?? []).map((f) => f.itemIdentifier));
      // The event source mapping's receives of the batch (10 messages a call at most, each 64 KB
      // of a call billed as a request) and its deletes of what succeeded (10 a DeleteMessageBatch).
      const bytes = records.reduce((sum, r) => sum + Buffer.byteLength(r.body), 0);
      const receives = Math.max(Math.ceil(records.length / SQS_MAX_MESSAGES_PER_CALL), Math.ceil(bytes / SQS_CHUNK_BYTES));
      metered.sqsRequests += receives + Math.ceil((records.length - failed.size) / SQS_MAX_MESSAGES_PER_CALL);
      metered.workerRecordsDone += records.length - failed.size;
    }
    return result;
  };
  meter(stack, invocations, () => usage);
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const results: { scenario: string; events: number; items: LineItem[]; usd_per_million: number; quiet_trigger_usd_per_million: number; write_units: number; quiet_write_units: number; quiet?: { events: number; items: LineItem[]; direct: number } }[] = [];
  try {
    const token = await stack.token('cost-bench');
    for (const [index, scenario] of SCENARIOS.entries()) {
      const createTrigger = async () => ((await (await fetch(`${stack.baseUrl}/triggers`, {
        method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ flow: scenario.flow, response_mode: scenario.mode, signature: { service: 'stripe', secret: SECRET } }),
      })).json()) as { data: { url: string } }).data;
      const trigger = await createTrigger();
      // A flood's warm-up on a trigger of its own: its refusals would take the measured trigger's recording budget of the minute.
      const warmUrl = scenario.refused ? (await createTrigger()).url : trigger.url;
      const expected = scenario.refused ? 401 : 200;
      const deliverOne = async (prefix: string, i: number, url = trigger.url) => {
        const body = realisticEvent(scenario.bytes, `evt_${prefix}_${i}`, i + 1);
        const signed = signStripe({ secret: scenario.refused ? 'whsec_forged' : SECRET, body, timestamp: Math.floor(Date.now() / 1000) });
        // A trigger's url is the receiver's function URL, which API Gateway neither bills nor logs;
        // a delivery to the API's /webhooks route (a URL given out before, or the context off) is both.
        if (usage && url.startsWith(stack.webhookBaseUrl)) {
          usage.apiRequests += Math.max(1, Math.ceil(Buffer.byteLength(body) / API_GATEWAY_METERING_BYTES));
          usage.addLog('API Gateway access log', logBytes([accessLogLine(logging.accessLogFormat)]));
        }
        const status = await send(url, agent, body, { ...STRIPE_HEADERS, ...signed });
        if (status !== expected) throw new Error(`${scenario.name}: a delivery answered ${status}, not ${expected}`);
      };
      const deliverAll = async (count: number, prefix: string, url = trigger.url) => {
        let next = 0;
        await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
          for (let i = next++; i < count; i = next++) await deliverOne(prefix, i, url);
        }));
      };
      const flowsDone = async (metered: Usage, count: number) => {
        for (const startedAt = Date.now(); metered.workerRecordsDone < count;) {
          if (Date.now() - startedAt > 120_000) throw new Error(`${scenario.name}: only ${metered.workerRecordsDone} of ${count} flows ran`);
          await new Promise((r) => setTimeout(r, 50));
        }
      };
      const queued = scenario.mode === 'acknowledge' && !scenario.refused;
      // A warm-up, unmetered apart from its own count: the trigger is cached and every function warm, as under steady traffic.
      const warmUps = index === 0 ? WARM_UP_EVENTS.stack : WARM_UP_EVENTS.scenario;
      const warm = new Usage();
      usage = warm;
      await deliverAll(warmUps, `${scenario.bytes}_${scenario.flow}_warm`, warmUrl);
      if (queued) await flowsDone(warm, warmUps);
      const metered = new Usage();
      usage = metered;
      await deliverAll(scenario.events, `${scenario.bytes}_${scenario.flow}_${scenario.mode}`);
      if (queued) await flowsDone(metered, scenario.events);
      usage = undefined;
      // Step Functions' own log of each execution, at the template's level (a successful run logs nothing below ALL).
      if (logging.flowLogLevel === 'ALL') metered.addLog('Step Functions execution log', metered.sfnExecutions * logBytes(flowLogLines(flowStates(scenario.flow))));
      const items = price(metered, scenario.events);
      const total = items.reduce((sum, item) => sum + item.usd_per_million, 0);
      // A quiet trigger's events each arrive alone: each is then a batch of its own, with its own
      // worker invocation, receive, delete and flow execution (a batch's billed time taken as one
      // execution's: 100 ms, its step, at 64 MB).
      const batches = metered.lambda.get('flowWorker')?.invocations ?? 0;
      const p = PRICES.prices;
      const singleExecution = p.sfn_express_request!.usd + (SFN_BILLING_MB / 1024) * (SFN_BILLING_MS / 1000) * p.sfn_express_gb_second!.usd;
      // The delivery counters' one write per trigger and minute of a batch becomes one per event.
      const counterUnits = metered.writeUnitsByItem.get('stats') ?? 0;
      let quiet = batches === 0 ? total : total
        + ((scenario.events - batches) / scenario.events) * (p.lambda_request!.usd + 2 * p.sqs_request!.usd) * 1e6
        + ((scenario.events - metered.sfnExecutions) / scenario.events) * singleExecution * 1e6
        + (counterUnits > 0 ? ((scenario.events - counterUnits) / scenario.events) * p.dynamodb_write_request_unit!.usd * 1e6 : 0);
      const writeUnits = metered.writeUnits / scenario.events;
      let quietWriteUnits = writeUnits + (batches > 0 && counterUnits > 0 ? (scenario.events - counterUnits) / scenario.events : 0);
      let measuredQuiet: { events: number; items: LineItem[]; direct: number } | undefined;
      if (queued && scenario.name === QUIET_SCENARIO) {
        // Measured: one event at a time, each after the previous one's outcome, as a quiet trigger's arrive.
        const alone = new Usage();
        usage = alone;
        for (let i = 0; i < QUIET_EVENTS; i++) {
          const sentAt = Date.now();
          await deliverOne(`${scenario.bytes}_${scenario.flow}_quiet`, i);
          await flowsDone(alone, i + 1);
          const wait = sentAt + QUIET_SPACING_MS - Date.now();
          if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        }
        usage = undefined;
        if (logging.flowLogLevel === 'ALL') alone.addLog('Step Functions execution log', alone.sfnExecutions * logBytes(flowLogLines(flowStates(scenario.flow))));
        const quietItems = price(alone, QUIET_EVENTS);
        quiet = quietItems.reduce((sum, item) => sum + item.usd_per_million, 0);
        quietWriteUnits = alone.writeUnits / QUIET_EVENTS;
        measuredQuiet = { events: QUIET_EVENTS, items: quietItems, direct: alone.directInvocations };
      }
      results.push({ scenario: scenario.name, events: scenario.events, items, usd_per_million: total, quiet_trigger_usd_per_million: quiet, write_units: writeUnits, quiet_write_units: quietWriteUnits, ...(measuredQuiet && { quiet: measuredQuiet }) });
    }
  } finally {
    usage = undefined;
    agent.destroy();
    await stack.stop();
  }

  const monthly = PRICES.monthly;
  const fixedMonthly = [
    { line: `${logging.alarms} CloudWatch alarms`, usd: logging.alarms * monthly.cloudwatch_alarm!.usd },
    { line: `${logging.dashboards} CloudWatch dashboard${logging.dashboards === 1 ? '' : 's'}`, usd: logging.dashboards * monthly.cloudwatch_dashboard!.usd },
    { line: `${logging.kmsKeys} KMS key${logging.kmsKeys === 1 ? '' : 's'}`, usd: logging.kmsKeys * monthly.kms_key!.usd },
    // 5 pollers per SQS event source mapping, one 20 s long poll each at a time, whatever the traffic.
    { line: `${logging.sqsEventSources} SQS event source mappings polling an empty queue`, usd: logging.sqsEventSources * 5 * ((30 * 24 * 3600) / 20) * monthly.sqs_idle_poll!.usd },
  ];

  const names = SCENARIOS.map((s) => s.name);
  const width = Math.max(...names.map((n) => n.length));
  console.log(`dollars per million webhooks, us-east-1 list prices of ${PRICES.checked} (bench/prices.json), free tiers left out`);
  console.log(`${'line'.padEnd(26)}${names.map((n) => n.padStart(Math.min(width, 30) + 2)).join('')}`);
  for (const line of results[0]!.items.map((item) => item.line)) {
    console.log(`${line.padEnd(26)}${results.map((r) => `$${r.items.find((i) => i.line === line)!.usd_per_million.toFixed(3)}`.padStart(Math.min(width, 30) + 2)).join('')}`);
  }
  console.log(`${'total'.padEnd(26)}${results.map((r) => `$${r.usd_per_million.toFixed(2)}`.padStart(Math.min(width, 30) + 2)).join('')}`);
  console.log(`${'a quiet trigger'.padEnd(26)}${results.map((r) => `$${r.quiet_trigger_usd_per_million.toFixed(2)}${r.quiet ? '' : '*'}`.padStart(Math.min(width, 30) + 2)).join('')}  (measured: events one at a time, each straight to the flow worker; * computed: each a flow-queue batch and an execution of its own)`);
  for (const result of results) {
    console.log(`\n${result.scenario} (${result.events} events):`);
    for (const item of result.items) console.log(`  ${item.line.padEnd(24)} $${item.usd_per_million.toFixed(3).padStart(7)}  ${item.units}`);
    if (result.quiet) {
      console.log(`${result.scenario}, a quiet trigger (${result.quiet.events} events one at a time, ${result.quiet.direct} of them straight to the flow worker):`);
      for (const item of result.quiet.items) console.log(`  ${item.line.padEnd(24)} $${item.usd_per_million.toFixed(3).padStart(7)}  ${item.units}`);
    }
  }
  console.log(`\nfixed a month: ${fixedMonthly.map((f) => `${f.line} $${f.usd.toFixed(2)}`).join('; ')}`);
  console.log(`peers (published): ${PRICES.peers.map((p) => `${p.name} $${p.usd_per_million}/M (${p.checked})`).join('; ')}`);
  const targets = TARGETS.flatMap((target) => {
    const result = results.find((r) => r.scenario === target.scenario);
    if (!result) return [];
    const usd = target.row === 'total' ? result.usd_per_million : result.quiet_trigger_usd_per_million;
    // What the target leaves for DynamoDB writes, once everything else is paid: the smallest item
    // DynamoDB bills is one write unit, so under one unit an event the target is out of this model's reach.
    const writeUnits = target.row === 'total' ? result.write_units : result.quiet_write_units;
    const beforeWrites = usd - writeUnits * PRICES.prices.dynamodb_write_request_unit!.usd * 1e6;
    const unitsLeft = (target.usd - beforeWrites) / (PRICES.prices.dynamodb_write_request_unit!.usd * 1e6);
    return [{ ...target, measured_usd: usd, met: usd <= target.usd, write_units: writeUnits, before_writes_usd: beforeWrites, write_units_left: unitsLeft }];
  });
  console.log('\ntargets (dollars per million, as deployed):');
  for (const t of targets) console.log(`  ${t.label.padEnd(44)} $${t.measured_usd.toFixed(2).padStart(6)}  target ≤ $${t.usd.toFixed(2)}: ${t.met ? 'met' : 'MISSED'}`);
  console.log('what each target leaves for writes (all but DynamoDB writes paid):');
  for (const t of targets) console.log(`  ${t.label.padEnd(44)} $${t.before_writes_usd.toFixed(2).padStart(6)}  before its ${fixed(t.write_units)} write units; the target leaves ${t.write_units_left < 0 ? 'none' : `${fixed(t.write_units_left)} units an event`}`);
  const missed = targets.filter((t) => !t.met);
  if (missed.length) {
    console.log(`missed: ${missed.map((t) => t.label).join('; ')}`);
    process.exitCode = 1;
  }
  const headline = results[0]!;
  writeCostChart(resolve(import.meta.dirname, 'cost.svg'), results, PRICES.peers, TARGETS[0]!.usd);
  const chart: ChartRow[] = results.map((r) => ({
    label: r.scenario,
    group: 'dollars per million webhooks (us-east-1 list prices)',
    value: r.usd_per_million,
    ...(r === headline && { target: TARGETS[0]!.usd }),
    better: 'lower' as const,
    text: `$${r.usd_per_million.toFixed(2)} per million`,
  }));
  return { prices_checked: PRICES.checked, scenarios: results, fixed_monthly: fixedMonthly, targets, target_met: missed.length === 0, chart };
}
