/**
 * Delivery counts over HTTP on the local stack: after every kind of delivery (succeeded, failed
 * after its retries, refused, ignored, duplicate, a handshake, wait-mode results, a replay), the
 * counts of `GET /triggers/{id}/stats` agree exactly with the deliveries list for the same period,
 * bucket by bucket; and a delivery whose run failed is counted queued while it waits for its retry.
 */
import { describe, expect, it } from 'vitest';
import { LIST_STATUSES, OUTCOMES, type Outcome } from '../../functions/domain/stats/outcomes.js';
import { call, useLocalStack } from '../support/local-stack.js';
import { createTrigger, deliver, TEST_FLOWS_DIR, waitForExecutions } from '../support/webhooks.js';

interface Execution { execution_id: string; event_id: string; status: string; received_at: string; attempts: number }
type Bucket = Record<Outcome | 'total', number> & { start: string };

const outcomeOf = (status: string) => OUTCOMES.find((outcome) => LIST_STATUSES[outcome].includes(status as never))!;
const MINUTE = 60_000;

async function stats(stack: ReturnType<typeof useLocalStack>, token: string, triggerId: string, query: string) {
  const res = await call(stack, 'GET', `/triggers/${triggerId}/stats?${query}`, { token });
  expect(res.status, res.text).toBe(200);
  return res.json.data as { since: string; until: string; buckets: Bucket[]; totals: Bucket };
}

/** Every delivery the list has between `since` and `until`, with those filters and, if given, a status filter. */
async function listed(stack: ReturnType<typeof useLocalStack>, token: string, triggerId: string, since: string, until: string, status?: string): Promise<Execution[]> {
  const all: Execution[] = [];
  let cursor: string | null = null;
  do {
    const query = new URLSearchParams({ limit: '500', since, until, ...(status && { status }), ...(cursor && { cursor }) });
    const res = await call(stack, 'GET', `/triggers/${triggerId}/executions?${query}`, { token });
    expect(res.status, res.text).toBe(200);
    all.push(...res.json.data.executions);
    cursor = res.json.data.next_cursor;
  } while (cursor);
  return all;
}

/** The list's deliveries counted as the stats count them, per bucket start. */
function countByBucket(executions: Execution[], bucketMs: number): Map<string, Record<Outcome, number>> {
  const found = new Map<string, Record<Outcome, number>>();
  for (const e of executions) {
    const start = new Date(Math.floor(Date.parse(e.received_at) / bucketMs) * bucketMs).toISOString();
    const counts = found.get(start) ?? Object.fromEntries(OUTCOMES.map((o) => [o, 0])) as Record<Outcome, number>;
    counts[outcomeOf(e.status)]++;
    found.set(start, counts);
  }
  return found;
}

describe('delivery counts agree with the deliveries list', () => {
  const stack = useLocalStack({ flowsDir: TEST_FLOWS_DIR, env: { TRIGGER_CACHE_TTL_MS: '0' } });

  it('every kind of delivery, acknowledged and wait mode, by minute and by hour, overall and per status', async () => {
    const token = await stack.token('stats-owner');
    const started = Date.now();
    const ack = await createTrigger(stack, token, { flow: 'fails-on-type', api_key_enabled: true, deduplicate: true, event_filter: ['order.*', 'poison'] });
    const wait = await createTrigger(stack, token, { flow: 'fails-on-type', response_mode: 'wait' });
    const key = { 'x-api-key': ack.api_key! };
    const send = (url: string, body: object, headers: Record<string, string> = {}) => deliver(url, JSON.stringify(body), headers);

    for (let i = 0; i < 5; i++) expect((await send(ack.url, { id: `evt_ok_${i}`, type: 'order.paid' }, key)).status).toBe(200);
    expect((await send(ack.url, { id: 'evt_ok_0', type: 'order.paid' }, key)).json).toEqual({ status: 'duplicate' });
    for (let i = 0; i < 2; i++) expect((await send(ack.url, { id: `evt_poison_${i}`, type: 'poison' }, key)).status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await send(ack.url, { id: `evt_ignored_${i}`, type: 'customer.created' }, key)).json).toEqual({ status: 'ignored', event_id: expect.any(String), reason: expect.any(String) });
    for (let i = 0; i < 4; i++) expect((await send(ack.url, { id: `evt_refused_${i}`, type: 'order.paid' }, { 'x-api-key': 'fgk_wrong' })).status).toBe(401);
    for (let i = 0; i < 3; i++) expect((await send(wait.url, { id: `evt_wait_ok_${i}`, type: 'ping' })).status).toBe(200);
    expect((await send(wait.url, { id: 'evt_wait_poison', type: 'poison' })).status).toBe(502);
    expect((await send(wait.url, { token: 't', challenge: 'c', type: 'url_verification' })).json).toEqual({ challenge: 'c' });

    // A replay of an ignored delivery runs the flow as a new, acknowledged delivery.
    const ignored = (await waitForExecutions(stack, token, ack.id, (all) => all.some((e) => e.status === 'ignored'))).find((e) => e.status === 'ignored');
    expect((await call(stack, 'POST', `/triggers/${ack.id}/executions/${ignored.execution_id}/replay`, { token })).status).toBe(202);

    // At rest: every acknowledged run finished, the poisoned ones after their five attempts.
    await waitForExecutions(stack, token, ack.id, (all) => all.length === 16 && all.every((e) => !['queued', 'running'].includes(e.status)), 60_000);

    for (const trigger of [ack, wait]) {
      for (const [bucket, ms] of [['minute', MINUTE], ['hour', 60 * MINUTE]] as const) {
        const since = new Date(Math.floor(started / ms) * ms - ms).toISOString();
        const answer = await stats(stack, token, trigger.id, `bucket=${bucket}&since=${since}&until=${new Date(Date.now() + ms).toISOString()}`);
        const byBucket = countByBucket(await listed(stack, token, trigger.id, answer.since, answer.until), ms);
        for (const b of answer.buckets) {
          const expected = byBucket.get(b.start) ?? Object.fromEntries(OUTCOMES.map((o) => [o, 0]));
          expect(b, `${trigger.id === ack.id ? 'acknowledge' : 'wait'} trigger, ${bucket} ${b.start}`).toEqual({ start: b.start, ...expected, total: Object.values(expected).reduce((a, n) => a + n, 0) });
        }
        // Each outcome's total is what the list's own status filter finds for the same period.
        for (const outcome of OUTCOMES) {
          const found = await listed(stack, token, trigger.id, answer.since, answer.until, LIST_STATUSES[outcome].join(','));
          expect(answer.totals[outcome], `${bucket} ${outcome}`).toBe(found.length);
        }
      }
    }
    const ackTotals = (await stats(stack, token, ack.id, 'bucket=hour')).totals;
    expect(ackTotals).toEqual({ succeeded: 6, failed: 2, refused: 4, ignored: 3, duplicate: 1, handshake: 0, queued: 0, total: 16 });
    const waitTotals = (await stats(stack, token, wait.id, 'bucket=minute')).totals;
    expect(waitTotals).toEqual({ succeeded: 3, failed: 1, refused: 0, ignored: 0, duplicate: 0, handshake: 1, queued: 0, total: 5 });

    // The page of triggers answers the same counts for each.
    const page = await call(stack, 'GET', '/triggers/stats?bucket=hour', { token });
    expect(page.status, page.text).toBe(200);
    const byId = new Map(page.json.data.triggers.map((t: { trigger_id: string; totals: Bucket }) => [t.trigger_id, t.totals]));
    expect(byId.get(ack.id)).toEqual(ackTotals);
    expect(byId.get(wait.id)).toEqual(waitTotals);
    expect(page.json.data.triggers.find((t: { trigger_id: string }) => t.trigger_id === wait.id)).toMatchObject({ flow: 'fails-on-type', enabled: true });
  }, 90_000);

  it('bad periods are 400 with why; another account\'s trigger is 404', async () => {
    const token = await stack.token('stats-validation');
    const trigger = await createTrigger(stack, token, { flow: 'echo' });
    for (const [query, message] of [
      ['bucket=day', 'bucket must be minute or hour'],
      ['since=yesterday', 'since must be an ISO 8601 date or date-time'],
      ['since=2026-05-02&until=2026-05-01', 'since must be before until'],
      ['bucket=minute&since=2026-05-01&until=2026-05-02', 'at most 360 buckets of a minute at once'],
    ]) {
      const res = await call(stack, 'GET', `/triggers/${trigger.id}/stats?${query}`, { token });
      expect(res.status, query).toBe(400);
      expect(res.json).toEqual({ error: 'validation_error', message });
    }
    expect((await call(stack, 'GET', `/triggers/${trigger.id}/stats`, { token: await stack.token('someone-else') })).status).toBe(404);
    expect((await call(stack, 'GET', '/triggers/stats?limit=101', { token })).status).toBe(400);
  });
});

describe('a delivery waiting for its retry', () => {
  // Retries wait ten minutes: the failed first run's delivery stays queued while the test looks.
  const stack = useLocalStack({ flowsDir: TEST_FLOWS_DIR, env: { FLOW_RETRY_BASE_SECONDS: '600' } });

  it('is counted queued, as the list shows it, and its minute is the one it was received in', async () => {
    const token = await stack.token('stats-retry');
    const trigger = await createTrigger(stack, token, { flow: 'fails-on-type' });
    expect((await deliver(trigger.url, JSON.stringify({ id: 'evt_retry', type: 'poison' }))).status).toBe(200);
    expect((await deliver(trigger.url, JSON.stringify({ id: 'evt_fine', type: 'ping' }))).status).toBe(200);
    const [waiting] = (await waitForExecutions(stack, token, trigger.id, (all) =>
      all.some((e) => e.status === 'queued' && e.attempts === 1) && all.some((e) => e.status === 'succeeded'))).filter((e) => e.status === 'queued');
    const answer = await stats(stack, token, trigger.id, 'bucket=minute');
    expect(answer.totals).toMatchObject({ queued: 1, succeeded: 1, total: 2 });
    const minute = new Date(Math.floor(Date.parse(waiting.received_at) / MINUTE) * MINUTE).toISOString();
    expect(answer.buckets.find((b) => b.queued === 1)!.start).toBe(minute);
    expect(await listed(stack, token, trigger.id, answer.since, answer.until, 'queued,running')).toHaveLength(1);
  });
});
