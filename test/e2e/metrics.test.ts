/**
 * The functions' CloudWatch metrics, as the metric filters on each writing function's log group
 * make them from the lines Lambda would send there: the local stack keeps the lines in memory
 * (`stack.writtenMetricLines()`) and applies the deployed filters (`stack.metrics()`), read back here.
 */
import { describe, expect, it, vi } from 'vitest';
import { MeteredFlowRunner } from '../../functions/adapters/metered-flow-runner.js';
import type { FlowResult } from '../../functions/domain/flows/ports.js';
import { MAX_REFUSED_RECORDS_PER_MINUTE } from '../../functions/domain/webhooks/refusal-budget.js';
import { METRIC_TABLE, metricFiltersOf, metricsFromLine } from '../../functions/shared/metric-filters.js';
import { METRIC_LINE_PREFIX } from '../../functions/shared/metric-line-writer.js';
import { METRIC, type MetricName } from '../../functions/shared/metric-names.js';
import { metricsRecorder, publishMetrics } from '../../functions/shared/metrics.js';
import { asFunction } from '../../local/metric-lines.js';
import { call, useLocalStack } from '../support/local-stack.js';
import { metricsReadByOperators } from '../support/operator-metrics.js';
import { signStripe } from '../support/signers.js';
import { synth } from '../support/synth.js';
import { totpCodeAt } from '../support/totp.js';
import { createTrigger, deliver, TEST_FLOWS_DIR, waitForExecutions } from '../support/webhooks.js';

// As `npm start` runs it: the flow worker's lines come from its own thread.
const stack = useLocalStack({ flowsDir: TEST_FLOWS_DIR, flowWorkerThread: true, env: { KV_SWEEP_SETTLE_SECONDS: '1', TRIGGER_CACHE_TTL_MS: '0' } });

/** Sum of a metric over what the filters made so far, of the datapoints whose dimensions are exactly `dimensions` (besides `service`). */
function total(name: string, dimensions: Record<string, string> = {}): number {
  const wanted = { service: 'flowgate', ...dimensions };
  return stack.metrics()
    .filter((d) => d.name === name && JSON.stringify(Object.entries(d.dimensions).sort()) === JSON.stringify(Object.entries(wanted).sort()))
    .reduce((sum, d) => sum + d.value, 0);
}

/**
 * The metric members of the lines written so far that no filter on the writing function's log
 * group reads: each would be lost deployed (the table's row for it must name the function).
 */
function unreadMembers(): string[] {
  return stack.writtenMetricLines().flatMap(({ fn, line }) => {
    const members = Object.keys(JSON.parse(line) as object).filter((key): key is MetricName => key in METRIC_TABLE);
    const read = new Set(metricsFromLine(fn === undefined ? [] : metricFiltersOf(fn), line).map((d) => d.name));
    return members.filter((name) => !read.has(name)).map((name) => `${name} written by ${fn ?? 'no function'}: ${line}`);
  });
}

async function eventually(check: () => void, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return check();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

describe('metrics on the local stack, made by the deployed metric filters', () => {
  it('every line names the service; every metric is in the Flowgate namespace with the service dimension, never an id as a dimension; every metric member is read by its function\'s filters', async () => {
    await deliver(`${stack.webhookBaseUrl}/${Buffer.alloc(24, 7).toString('base64url')}`, '{}');
    await eventually(() => expect(stack.metrics().length).toBeGreaterThan(0));
    for (const d of stack.metrics()) {
      expect(d.namespace).toBe('Flowgate');
      expect(d.dimensions.service).toBe('flowgate');
      for (const dimension of Object.keys(d.dimensions)) expect(['service', 'reason', 'flow']).toContain(dimension);
    }
    for (const { fn, line } of stack.writtenMetricLines()) {
      expect(line.startsWith(METRIC_LINE_PREFIX), line).toBe(true);
      expect(fn, line).toBeDefined();
    }
    expect(unreadMembers()).toEqual([]);
  });

  it('webhooks received, accepted, ignored, duplicate and refused by reason', async () => {
    const before = {
      received: total('WebhooksReceived'), accepted: total('WebhooksAccepted'), ignored: total('WebhooksIgnored'),
      duplicate: total('WebhooksDuplicate'), notFound: total('WebhooksRefused', { reason: 'not_found' }),
      unauthorized: total('WebhooksRefused', { reason: 'unauthorized' }),
    };
    const token = await stack.token('metrics-owner');
    const trigger = await createTrigger(stack, token, { flow: 'echo', event_filter: ['order.created'], deduplicate: true });
    const keyed = await createTrigger(stack, token, { flow: 'echo', api_key_enabled: true });

    expect((await deliver(trigger.url, JSON.stringify({ id: 'evt_m1', type: 'order.created' }))).status).toBe(200);
    expect((await deliver(trigger.url, JSON.stringify({ id: 'evt_m1', type: 'order.created' }))).json).toEqual({ status: 'duplicate' });
    expect((await deliver(trigger.url, JSON.stringify({ id: 'evt_m2', type: 'order.deleted' }))).json).toEqual({ status: 'ignored', event_id: expect.any(String), reason: expect.any(String) });
    expect((await deliver(`${stack.webhookBaseUrl}/${Buffer.alloc(24, 9).toString('base64url')}`, '{}')).status).toBe(404);
    expect((await deliver(keyed.url, '{}')).status).toBe(401);

    await eventually(() => {
      expect(total('WebhooksReceived') - before.received).toBe(5);
      expect(total('WebhooksAccepted') - before.accepted).toBe(1);
      expect(total('WebhooksDuplicate') - before.duplicate).toBe(1);
      expect(total('WebhooksIgnored') - before.ignored).toBe(1);
      expect(total('WebhooksRefused', { reason: 'not_found' }) - before.notFound).toBe(1);
      expect(total('WebhooksRefused', { reason: 'unauthorized' }) - before.unauthorized).toBe(1);
    });
  });

  it('flow runs by flow and outcome, with their duration, from the receiver (wait) and the worker (acknowledge)', async () => {
    const token = await stack.token('metrics-flows');
    // A flow no other test here runs, so the earlier tests' queued runs do not count.
    const wait = await createTrigger(stack, token, { flow: 'echo-trigger', response_mode: 'wait' });
    const failing = await createTrigger(stack, token, { flow: 'always-fails', response_mode: 'wait' });
    const queued = await createTrigger(stack, token, { flow: 'echo-trigger' });
    const before = { echo: total('FlowRunsSucceeded', { flow: 'echo-trigger' }), failed: total('FlowRunsFailed', { flow: 'always-fails' }) };

    expect((await deliver(wait.url, JSON.stringify({ type: 'ping' }))).status).toBe(200);
    expect((await deliver(failing.url, JSON.stringify({ type: 'ping' }))).status).toBe(502);
    expect((await deliver(queued.url, JSON.stringify({ type: 'ping' }))).status).toBe(200);
    await waitForExecutions(stack, token, queued.id, (executions) => executions[0]?.status === 'succeeded');

    await eventually(() => {
      expect(total('FlowRunsSucceeded', { flow: 'echo-trigger' }) - before.echo).toBe(2);
      expect(total('FlowRunsFailed', { flow: 'always-fails' }) - before.failed).toBe(1);
    });
    // A flow that failed in wait mode was still accepted, not refused.
    expect(total('WebhooksRefused', { reason: 'flow_failed' })).toBe(0);
    const durations = stack.metrics().filter((d) => d.name === 'FlowRunDuration' && d.dimensions.flow === 'echo-trigger');
    expect(durations.length).toBeGreaterThanOrEqual(2);
    // A run's duration is one value of its own, in milliseconds, by flow.
    for (const d of durations) expect(d).toMatchObject({ unit: 'Milliseconds', dimensions: { service: 'flowgate', flow: 'echo-trigger' }, value: expect.any(Number) });
  });

  it('replays, one and many, as DeliveriesReplayed; a replay is not a received webhook', async () => {
    const token = await stack.token('metrics-replays');
    const trigger = await createTrigger(stack, token, { flow: 'echo' });
    for (const id of ['evt_r1', 'evt_r2']) expect((await deliver(trigger.url, JSON.stringify({ id, type: 'order.created' }))).status).toBe(200);
    const executions = await waitForExecutions(stack, token, trigger.id, (list) => list.length === 2 && list.every((e) => e.status === 'succeeded'));
    const before = { replayed: total('DeliveriesReplayed'), received: total('WebhooksReceived') };

    expect((await call(stack, 'POST', `/triggers/${trigger.id}/executions/${executions[0]!.execution_id}/replay`, { token })).status).toBe(202);
    const bulk = await call(stack, 'POST', `/triggers/${trigger.id}/replay`, { token, body: { status: ['succeeded'] } });
    expect(bulk.status).toBe(202);
    expect(bulk.json.data.replayed).toBe(2);

    await eventually(() => expect(total('DeliveriesReplayed') - before.replayed).toBe(3));
    expect(total('WebhooksReceived')).toBe(before.received);
  });

  it('purges, and the items the sweeper reclaims', async () => {
    const token = await stack.token('metrics-kv');
    const base = '/storage/kv/metrics-bucket';
    expect((await call(stack, 'PUT', base, { token, body: {} })).status).toBe(201);
    for (const key of ['a', 'b', 'c']) {
      expect((await call(stack, 'PUT', `${base}/keys/${key}`, { token, rawBody: 'v', headers: { 'content-type': 'text/plain' } })).status).toBeLessThan(300);
    }
    const before = { purges: total('KvPurges'), reclaimed: total('KvItemsReclaimed') };
    expect((await call(stack, 'DELETE', `${base}/purge`, { token })).status).toBeLessThan(300);
    await eventually(() => {
      expect(total('KvPurges') - before.purges).toBe(1);
      expect(total('KvItemsReclaimed') - before.reclaimed).toBe(3);
    });
  });

  it('TOTP confirmations failed, then lockouts', async () => {
    const token = await stack.token('metrics-totp');
    const { secret } = (await call(stack, 'POST', '/accounts/totp-registration', { token })).json.data as { secret: string };
    const near = new Set([-2, -1, 0, 1, 2].map((d) => totpCodeAt(secret, Date.now() + d * 30_000)));
    const wrong = ['000000', '111111', '222222', '333333', '444444', '555555'].find((code) => !near.has(code))!;
    const before = { failed: total('TotpConfirmationsFailed'), lockouts: total('TotpLockouts') };
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await call(stack, 'POST', '/accounts/confirm-totp-registration', { token, body: { code: wrong, secret } })).status);
    expect(statuses).toEqual([400, 400, 400, 400, 400, 429]);
    await eventually(() => {
      expect(total('TotpConfirmationsFailed') - before.failed).toBe(5);
      expect(total('TotpLockouts') - before.lockouts).toBe(1);
    });
  });

  it('writes no "No application metrics" warning for invocations that count nothing, and no metric line to stdout: they go to metricLines()', async () => {
    const written: string[] = [];
    for (const stream of [process.stdout, process.stderr]) {
      vi.spyOn(stream, 'write').mockImplementation((chunk: string | Uint8Array) => (written.push(String(chunk)), true));
    }
    try {
      const before = stack.metricLines().length;
      await call(stack, 'GET', '/health');
      await deliver(`${stack.webhookBaseUrl}/${Buffer.alloc(24, 9).toString('base64url')}`, '{}');
      await eventually(() => expect(stack.metricLines().length).toBeGreaterThan(before));
    } finally {
      vi.restoreAllMocks();
    }
    expect(written.join('')).not.toContain('No application metrics');
    expect(written.join('')).not.toContain('"WebhooksReceived"');
  });

  it(`every refusal is logged on its metric line with its reason, trigger and request id; past ${MAX_REFUSED_RECORDS_PER_MINUTE} recorded a minute it is counted as not recorded`, async () => {
    const token = await stack.token('metrics-refusals');
    const trigger = await createTrigger(stack, token, { flow: 'echo', signature: { service: 'stripe', secret: 'whsec_metrics' } });
    const sent = MAX_REFUSED_RECORDS_PER_MINUTE + 3;
    // One at a time: the local stack's invocations share one process, and with it one metric line in the making.
    for (let i = 0; i < sent; i++) {
      const body = JSON.stringify({ id: `evt_forged_${i}`, type: 'charge.succeeded' });
      expect((await deliver(trigger.url, body, signStripe({ secret: 'whsec_forged', body, timestamp: Math.floor(Date.now() / 1000) }))).status).toBe(401);
    }
    const lines = () => stack.writtenMetricLines()
      .map(({ fn, line }) => ({ fields: JSON.parse(line) as Record<string, unknown>, datapoints: metricsFromLine(metricFiltersOf(fn!), line) }))
      .filter((line) => line.fields.trigger === trigger.id);
    await eventually(() => expect(lines()).toHaveLength(sent));
    for (const line of lines()) {
      // Sent to the trigger's url, the function URL, which has no access log: the line has the address.
      expect(line.fields).toMatchObject({ reason: 'invalid_signature', trigger: trigger.id, requestId: expect.stringMatching(/^[A-Za-z0-9+/]{15}=$/), sourceIp: '127.0.0.1' });
      expect(line.datapoints).toContainEqual({ namespace: 'Flowgate', name: 'WebhooksRefused', unit: 'Count', dimensions: { service: 'flowgate', reason: 'invalid_signature' }, value: 1 });
      expect(line.datapoints).toContainEqual({ namespace: 'Flowgate', name: 'WebhooksReceived', unit: 'Count', dimensions: { service: 'flowgate' }, value: 1 });
    }
    expect(new Set(lines().map((line) => line.fields.requestId)).size).toBe(sent);
    const listed = await call(stack, 'GET', `/triggers/${trigger.id}/executions?status=refused&since=1970-01-01&limit=100`, { token });
    const recorded = (listed.json.data as { executions: unknown[] }).executions.length;
    // A minute may turn during the run (a budget each): never more than the budget a minute.
    expect(recorded).toBeGreaterThanOrEqual(MAX_REFUSED_RECORDS_PER_MINUTE);
    expect(recorded).toBeLessThanOrEqual(2 * MAX_REFUSED_RECORDS_PER_MINUTE);
    const notRecorded = lines().flatMap((line) => line.datapoints).filter((d) => d.name === 'WebhookRefusalsNotRecorded');
    expect(notRecorded.every((d) => d.unit === 'Count' && Object.keys(d.dimensions).join() === 'service')).toBe(true);
    expect(notRecorded.length).toBe(sent - recorded);
  });

  // Last: reads every line the tests above made the functions write.
  it('every metric the alarms and the dashboard read is made by a metric filter from some function\'s lines above, under the dimensions they read it by', async () => {
    // A wait-mode run that times out takes WAIT_TIMEOUT_MS (flows.test.ts waits 14 s for one): its
    // count goes through the receiver's metered runner and the process's writer here instead, as the receiver's.
    await asFunction('webhook', async () => {
      await new MeteredFlowRunner({ run: async () => ({ status: 'timed_out' }) as FlowResult }, metricsRecorder).run('slow', '{}', { timeoutMs: 1 });
      await publishMetrics();
    });
    const read = metricsReadByOperators(synth().template);
    expect(read.length).toBeGreaterThanOrEqual(15);
    const made = new Set(stack.metrics()
      .filter((d) => d.namespace === 'Flowgate' && d.dimensions.service === 'flowgate')
      .map((d) => `${d.name}|${Object.keys(d.dimensions).sort().join()}`));
    const missing = read.filter((metric) => !made.has(`${metric.name}|${metric.dimensions.join()}`));
    expect(missing.map((metric) => `${metric.name} {${metric.dimensions}} (${metric.by})`)).toEqual([]);
    expect(unreadMembers()).toEqual([]);
    expect(Object.values(METRIC).every((name) => made.has(`${name}|${['service', ...(METRIC_TABLE[name].dimension ? [METRIC_TABLE[name].dimension!] : [])].sort().join()}`))).toBe(true);
  });
});
