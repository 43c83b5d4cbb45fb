import { createHash, randomBytes } from 'node:crypto';
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { DynamoExecutionStore, EXECUTION_SHARDS, shardOf } from '../../functions/adapters/aws/dynamo-execution-store.js';
import { DynamoDeliveryStats } from '../../functions/adapters/aws/dynamo-delivery-stats.js';
import { newExecutionId, receivedAtOf } from '../../functions/domain/flows/execution-id.js';
import type { ExecutionFilter, ExecutionStatus, ExecutionStore, FlowResult, StoredRequest } from '../../functions/domain/flows/ports.js';
import { FlowAttemptFailed, runQueuedFlow, type WorkerDeps } from '../../functions/domain/flows/run-queued-flow.js';
import { useEngines } from '../support/engines.js';
import { realisticEvent } from '../../bench/support/payloads.js';

/** The execution store against the embedded DynamoDB: sharded records merged newest first, filters, requests, refusal counts. */
const local = useEngines();
const table = () => local.engines.env.EXECUTIONS_TABLE!;
const store = () => new DynamoExecutionStore(local.dynamo, table(), Date.now);
const nowSeconds = () => Math.floor(Date.now() / 1000);
const BASE_MS = Date.parse('2026-11-01T00:00:00.000Z');

interface Made {
  executionId: string;
  receivedAt: string;
  status: ExecutionStatus;
  type?: string;
  eventId: string;
}

const REQUEST: StoredRequest = { method: 'POST', headers: { 'content-type': 'application/json' }, query: {}, body: '{}', body_encoding: 'utf8', body_bytes: 2 };

/** Records `count` executions one second apart; `shape(n)` gives each its status, type and event id. */
async function recordMany(target: ExecutionStore, triggerId: string, count: number, shape: (n: number) => Partial<Made> = () => ({})): Promise<Made[]> {
  const made: Made[] = [];
  for (let n = 0; n < count; n++) {
    const ms = BASE_MS + n * 1000;
    const made1: Made = { executionId: newExecutionId(ms, randomBytes(16).toString('hex')), receivedAt: new Date(ms).toISOString(), status: 'succeeded', eventId: `evt_${n}`, ...shape(n) };
    await target.record({ triggerId, executionId: made1.executionId }, {
      event_id: made1.eventId, received_at: made1.receivedAt, status: made1.status, attempts: 1, ...(made1.type !== undefined && { type: made1.type }),
    }, REQUEST);
    made.push(made1);
  }
  return made;
}

/** Every page of a listing, following cursors; the number of pages too. */
async function listAll(triggerId: string, filter: ExecutionFilter, limit: number) {
  const ids: string[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const page = await store().list(triggerId, filter, { limit, cursor });
    expect(page.items.length).toBeLessThanOrEqual(limit);
    ids.push(...page.items.map((item) => item.execution_id));
    cursor = page.nextCursor ?? undefined;
    pages++;
    expect(pages).toBeLessThan(200);
  } while (cursor);
  return { ids, pages };
}

const newestFirst = (made: Made[]) => [...made].reverse().map((m) => m.executionId);

describe('DynamoExecutionStore: one trigger over several partitions', () => {
  it('spreads a trigger\'s records over every shard', async () => {
    const made = await recordMany(store(), 't-spread', 64);
    const shards = new Set(made.map((m) => shardOf(m.executionId)));
    expect(shards.size).toBe(EXECUTION_SHARDS);
  });

  it('lists newest first across shards, each record exactly once, whatever the page size', async () => {
    const made = await recordMany(store(), 't-merge', 37);
    for (const limit of [1, 5, 7, 37, 100]) {
      const { ids } = await listAll('t-merge', {}, limit);
      expect(ids).toEqual(newestFirst(made));
    }
    const first = await store().list('t-merge', {}, { limit: 37 });
    expect(first.items).toHaveLength(37);
  });

  it('leaves out expired records (TTL deletion is lazy) and stays bounded behind a long run of them', async () => {
    const made = await recordMany(store(), 't-expired', 40);
    const expired = made.filter((_, n) => n !== 0);
    for (const m of expired) {
      await local.dynamo.send(new UpdateCommand({
        TableName: table(),
        Key: { pk: `TRIGGER#t-expired#${shardOf(m.executionId)}`, sk: `EXEC#${m.receivedAt}#${m.executionId}` },
        UpdateExpression: 'SET expires_at = :past',
        ExpressionAttributeValues: { ':past': nowSeconds() - 60 },
      }));
    }
    const { ids, pages } = await listAll('t-expired', {}, 2);
    expect(ids).toEqual([made[0]!.executionId]);
    // A page reads at most 4 rounds of 8 shard queries of 2 records; 39 expired records need more than one page.
    expect(pages).toBeGreaterThan(1);
  });
});

describe('DynamoExecutionStore: filters', () => {
  const shape = (n: number): Partial<Made> => ({
    status: (['succeeded', 'failed', 'refused', 'queued'] as const)[n % 4],
    type: n % 3 === 0 ? 'invoice.paid' : n % 3 === 1 ? 'invoice.created' : 'customer.created',
    eventId: `evt_${n % 10}`,
  });
  let made: Made[] = [];
  const expected = (keep: (m: Made) => boolean) => newestFirst(made.filter(keep));

  it('returns exactly the matching records across pages, for each filter and their combinations', async () => {
    made = await recordMany(store(), 't-filter', 60, shape);
    const since = made[10]!.receivedAt;
    const until = made[50]!.receivedAt;
    const cases: [ExecutionFilter, (m: Made) => boolean][] = [
      [{ statuses: ['failed'] }, (m) => m.status === 'failed'],
      [{ statuses: ['failed', 'refused'] }, (m) => m.status === 'failed' || m.status === 'refused'],
      [{ type: 'invoice.paid' }, (m) => m.type === 'invoice.paid'],
      [{ type: 'invoice.*' }, (m) => m.type!.startsWith('invoice.')],
      [{ since }, (m) => m.receivedAt >= since],
      [{ until }, (m) => m.receivedAt < until],
      [{ since, until, statuses: ['succeeded'], type: 'invoice.*' }, (m) => m.receivedAt >= since && m.receivedAt < until && m.status === 'succeeded' && m.type!.startsWith('invoice.')],
      [{ eventId: 'evt_3' }, (m) => m.eventId === 'evt_3'],
      [{ eventId: 'evt_3', statuses: ['queued'] }, (m) => m.eventId === 'evt_3' && m.status === 'queued'],
      [{ eventId: 'evt_4', since, until }, (m) => m.eventId === 'evt_4' && m.receivedAt >= since && m.receivedAt < until],
      [{ statuses: ['duplicate'] }, () => false],
    ];
    for (const [filter, keep] of cases) {
      for (const limit of [3, 50]) {
        expect((await listAll('t-filter', filter, limit)).ids, JSON.stringify({ filter, limit })).toEqual(expected(keep));
      }
    }
  });

  it('refuses a cursor made by a listing of another kind, or forged', async () => {
    const page = await store().list('t-filter', {}, { limit: 2 });
    await expect(store().list('t-filter', { eventId: 'evt_1' }, { limit: 2, cursor: page.nextCursor! })).rejects.toMatchObject({ code: 'validation_error' });
    const forged = Buffer.from(JSON.stringify({ s: 'DEDUP#x' })).toString('base64url');
    await expect(store().list('t-filter', {}, { limit: 2, cursor: forged })).rejects.toMatchObject({ code: 'validation_error' });
  });
});

describe('DynamoExecutionStore: requests and attempts', () => {
  it('keeps a request body byte for byte, inline or in chunks (multi-byte text across a chunk edge), and never rewrites it on updates', async () => {
    for (const body of ['{"a":1}', 'é'.repeat(400_000), 'x'.repeat(299_999) + '€'.repeat(10)]) {
      const ref = { triggerId: 't-request', executionId: newExecutionId(Date.now(), randomBytes(16).toString('hex')) };
      const request: StoredRequest = { ...REQUEST, body, body_bytes: Buffer.byteLength(body) };
      await store().record(ref, { event_id: 'evt_body', received_at: new Date().toISOString(), status: 'queued', attempts: 0 }, request);
      await store().update(ref, { status: 'running', attempts: 1, attempt: { attempt: 1, started_at: '2026-11-01T00:00:00.000Z', status: 'running' } });
      const read = await store().get(ref);
      expect(read?.request?.body).toBe(body);
      expect(read?.request).toEqual(request);
      const { Item } = await local.dynamo.send(new GetCommand({ TableName: table(), Key: { pk: `TRIGGER#t-request#${shardOf(ref.executionId)}`, sk: `EXEC#${receivedAtOf(ref.executionId)}#${ref.executionId}` } }));
      // The record an update rewrites stays small, whatever the body.
      expect(JSON.stringify(Item).length).toBeLessThan(1_000);
    }
  });

  it('records each attempt in the timeline, a start then the same run finished', async () => {
    const ref = { triggerId: 't-timeline', executionId: newExecutionId(Date.now(), randomBytes(16).toString('hex')) };
    await store().record(ref, { event_id: 'e', received_at: new Date().toISOString(), status: 'queued', attempts: 0 }, REQUEST);
    const at = (s: number) => new Date(BASE_MS + s * 1000).toISOString();
    await store().update(ref, { status: 'running', attempts: 1, attempt: { attempt: 1, started_at: at(0), status: 'running' } });
    await store().update(ref, { status: 'queued', attempts: 1, error: 'Boom', attempt: { attempt: 1, started_at: at(0), finished_at: at(1), status: 'failed', error: 'Boom' } });
    await store().update(ref, { status: 'running', attempts: 2, attempt: { attempt: 2, started_at: at(16), status: 'running' } });
    await store().update(ref, { status: 'succeeded', attempts: 2, output: { ok: true }, attempt: { attempt: 2, started_at: at(16), finished_at: at(17), status: 'succeeded' } });
    // A late update of attempt 1 changes nothing.
    await store().update(ref, { status: 'failed', attempts: 1, error: 'late', attempt: { attempt: 1, started_at: at(0), finished_at: at(30), status: 'failed', error: 'late' } });
    const read = await store().get(ref);
    expect(read).toMatchObject({ status: 'succeeded', attempts: 2, output: { ok: true } });
    expect(read!.timeline).toEqual([
      { attempt: 1, started_at: at(0), finished_at: at(1), status: 'failed', error: 'Boom' },
      { attempt: 2, started_at: at(16), finished_at: at(17), status: 'succeeded' },
    ]);
  });

  it('answers undefined for an execution that does not exist', async () => {
    expect(await store().get({ triggerId: 't-none', executionId: newExecutionId(Date.now(), 'ab') })).toBeUndefined();
  });

  it('discards a record with its request and the chunks of its body, and nothing else', async () => {
    const body = 'é'.repeat(200_000);
    const ref = { triggerId: 't-discard', executionId: newExecutionId(Date.now(), randomBytes(16).toString('hex')) };
    const kept = { triggerId: 't-discard', executionId: newExecutionId(Date.now() + 1, randomBytes(16).toString('hex')) };
    for (const r of [ref, kept]) {
      await store().record(r, { event_id: 'evt_discard', received_at: new Date().toISOString(), status: 'queued', attempts: 0 }, { ...REQUEST, body, body_bytes: Buffer.byteLength(body) });
    }
    await store().discard(ref, 'evt_discard');
    expect(await store().get(ref)).toBeUndefined();
    const chunk = await local.dynamo.send(new GetCommand({ TableName: table(), Key: { pk: `PAYLOAD#request-${ref.executionId}`, sk: '0000' } }));
    expect(chunk.Item).toBeUndefined();
    expect(await store().requestOf(ref, 'evt_discard')).toBeUndefined();
    // The other execution of the same event keeps its record, request and body.
    expect((await store().get(kept))?.request?.body).toBe(body);
  });

  it('reads the request of a listed record by itself (bulk replay), chunked bodies too; nothing for a record without one', async () => {
    const body = 'é'.repeat(200_000);
    const withRequest = { triggerId: 't-request-of', executionId: newExecutionId(Date.now(), randomBytes(16).toString('hex')) };
    const request: StoredRequest = { ...REQUEST, body, body_bytes: Buffer.byteLength(body) };
    await store().record(withRequest, { event_id: 'evt_with', received_at: new Date().toISOString(), status: 'failed', attempts: 1 }, request);
    const without = { triggerId: 't-request-of', executionId: newExecutionId(Date.now() + 1, randomBytes(16).toString('hex')) };
    await store().record(without, { event_id: 'evt_without', received_at: new Date().toISOString(), status: 'refused', attempts: 0 });
    const { items } = await store().list('t-request-of', {}, { limit: 10 });
    const byId = new Map(items.map((item) => [item.execution_id, item]));
    expect(await store().requestOf(withRequest, byId.get(withRequest.executionId)!.event_id)).toEqual(request);
    expect(await store().requestOf(without, byId.get(without.executionId)!.event_id)).toBeUndefined();
    // The same request as a full read returns.
    expect((await store().get(withRequest))?.request).toEqual(request);
  });
});

/**
 * Two copies of one event (a direct invocation whose answer was lost and its queued fallback, a
 * message redelivered while its run went on) write the same record; the writes are ordered here
 * by hand, each order a race could give.
 */
describe('DynamoExecutionStore.update: a success is final, whatever copy of the event wrote it', () => {
  const at = (s: number) => new Date(BASE_MS + s * 1000).toISOString();
  const newRef = (triggerId: string) => ({ triggerId, executionId: newExecutionId(Date.now(), randomBytes(16).toString('hex')) });
  async function queued(triggerId: string) {
    const ref = newRef(triggerId);
    await store().record(ref, { event_id: 'evt_copies', received_at: new Date().toISOString(), status: 'queued', attempts: 0 }, REQUEST);
    return ref;
  }

  it('a success at a lower attempt after a higher attempt\'s failure is written, and keeps the higher attempt count', async () => {
    const ref = await queued('t-final-late-success');
    expect(await store().update(ref, { status: 'running', attempts: 1, attempt: { attempt: 1, started_at: at(0), status: 'running' } })).toBe('written');
    // Copy B, the same message redelivered, fails attempt 2 while copy A still runs attempt 1.
    await store().update(ref, { status: 'queued', attempts: 2, error: 'Boom', nextAttemptAt: at(40), attempt: { attempt: 2, started_at: at(5), finished_at: at(6), status: 'failed', error: 'Boom' } });
    expect(await store().update(ref, { status: 'succeeded', attempts: 1, output: { ok: 'A' }, attempt: { attempt: 1, started_at: at(0), finished_at: at(10), status: 'succeeded' } })).toBe('written');
    const read = await store().get(ref);
    expect(read).toMatchObject({ status: 'succeeded', attempts: 2, output: { ok: 'A' } });
    expect(read).not.toHaveProperty('error');
    expect(read).not.toHaveProperty('next_attempt_at');
    expect(read!.timeline).toEqual([
      { attempt: 1, started_at: at(0), finished_at: at(10), status: 'succeeded' },
      { attempt: 2, started_at: at(5), finished_at: at(6), status: 'failed', error: 'Boom' },
    ]);
    expect(await store().statusOf(ref)).toBe('succeeded');
  });

  it('a written change answers the status and attempts it replaced, on the normal path and a success written over a later attempt alike (what the counts move from)', async () => {
    const ref = await queued('t-final-replaced');
    expect(await store().updateReplacing(ref, { status: 'running', attempts: 1, attempt: { attempt: 1, started_at: at(0), status: 'running' } }))
      .toEqual({ result: 'written', replaced: { status: 'queued', attempts: 0 } });
    expect(await store().updateReplacing(ref, { status: 'queued', attempts: 2, error: 'Boom', nextAttemptAt: at(40), attempt: { attempt: 2, started_at: at(5), finished_at: at(6), status: 'failed', error: 'Boom' } }))
      .toEqual({ result: 'written', replaced: { status: 'running', attempts: 1 } });
    expect(await store().updateReplacing(ref, { status: 'succeeded', attempts: 1, attempt: { attempt: 1, started_at: at(0), finished_at: at(10), status: 'succeeded' } }))
      .toEqual({ result: 'written', replaced: { status: 'queued', attempts: 2 } });
    expect(await store().updateReplacing(ref, { status: 'failed', attempts: 5, error: 'Boom' })).toEqual({ result: 'succeeded_already' });
  });

  it('a failure, a retry due or a start at a higher attempt after a success leaves it succeeded; the copy\'s own run is added to the timeline', async () => {
    const ref = await queued('t-final-late-failure');
    await store().update(ref, { status: 'succeeded', attempts: 1, output: { ok: 'A' }, attempt: { attempt: 1, started_at: at(0), finished_at: at(1), status: 'succeeded' } });
    expect(await store().update(ref, { status: 'running', attempts: 2, attempt: { attempt: 2, started_at: at(2), status: 'running' } })).toBe('succeeded_already');
    expect(await store().update(ref, { status: 'queued', attempts: 2, error: 'Boom', nextAttemptAt: at(30), attempt: { attempt: 2, started_at: at(2), finished_at: at(3), status: 'failed', error: 'Boom' } })).toBe('succeeded_already');
    expect(await store().update(ref, { status: 'failed', attempts: 5, error: 'Boom', attempt: { attempt: 5, started_at: at(60), finished_at: at(61), status: 'failed', error: 'Boom' } })).toBe('succeeded_already');
    const read = await store().get(ref);
    expect(read).toMatchObject({ status: 'succeeded', attempts: 1, output: { ok: 'A' } });
    expect(read).not.toHaveProperty('error');
    expect(read!.timeline).toEqual([
      { attempt: 1, started_at: at(0), finished_at: at(1), status: 'succeeded' },
      { attempt: 2, started_at: at(2), finished_at: at(3), status: 'failed', error: 'Boom' },
      { attempt: 5, started_at: at(60), finished_at: at(61), status: 'failed', error: 'Boom' },
    ]);
  });

  it('a copy that ran under the same attempt number as the success leaves the success and its timeline entry as they are; a second success changes nothing', async () => {
    const ref = await queued('t-final-same-attempt');
    await store().update(ref, { status: 'succeeded', attempts: 1, output: { ok: 'A' }, attempt: { attempt: 1, started_at: at(0), finished_at: at(1), status: 'succeeded' } });
    expect(await store().update(ref, { status: 'queued', attempts: 1, error: 'Boom', nextAttemptAt: at(20), attempt: { attempt: 1, started_at: at(0), finished_at: at(2), status: 'failed', error: 'Boom' } })).toBe('succeeded_already');
    expect(await store().update(ref, { status: 'succeeded', attempts: 1, output: { ok: 'B' }, attempt: { attempt: 1, started_at: at(0), finished_at: at(3), status: 'succeeded' } })).toBe('succeeded_already');
    const read = await store().get(ref);
    expect(read).toMatchObject({ status: 'succeeded', attempts: 1, output: { ok: 'A' }, timeline: [{ attempt: 1, started_at: at(0), finished_at: at(1), status: 'succeeded' }] });
  });

  it('a late outcome of an earlier attempt still finishes its own run in the timeline when that shows only its start', async () => {
    const ref = await queued('t-final-late-finish');
    await store().update(ref, { status: 'running', attempts: 1, attempt: { attempt: 1, started_at: at(0), status: 'running' } });
    await store().update(ref, { status: 'queued', attempts: 2, error: 'Boom', nextAttemptAt: at(40), attempt: { attempt: 2, started_at: at(5), finished_at: at(6), status: 'failed', error: 'Boom' } });
    expect(await store().update(ref, { status: 'queued', attempts: 1, error: 'Slow', attempt: { attempt: 1, started_at: at(0), finished_at: at(9), status: 'timed_out', error: 'Slow' } })).toBe('outdated');
    const read = await store().get(ref);
    expect(read).toMatchObject({ status: 'queued', attempts: 2, error: 'Boom', next_attempt_at: at(40) });
    expect(read!.timeline.map((entry) => [entry.attempt, entry.status])).toEqual([[1, 'timed_out'], [2, 'failed']]);
  });

  it('a large output kept aside by a late success is the one read back', async () => {
    const ref = await queued('t-final-aside');
    await store().update(ref, { status: 'queued', attempts: 2, error: 'Boom', attempt: { attempt: 2, started_at: at(5), finished_at: at(6), status: 'failed', error: 'Boom' } });
    const output = { text: 'x'.repeat(2_000) };
    await store().update(ref, { status: 'succeeded', attempts: 1, output, attempt: { attempt: 1, started_at: at(0), finished_at: at(10), status: 'succeeded' } });
    expect(await store().get(ref)).toMatchObject({ status: 'succeeded', attempts: 2, output });
  });

  it('changes nothing of a record that is not there, and says so', async () => {
    const ref = newRef('t-final-none');
    expect(await store().update(ref, { status: 'succeeded', attempts: 1, attempt: { attempt: 1, started_at: at(0), finished_at: at(1), status: 'succeeded' } })).toBe('outdated');
    expect(await store().update(ref, { status: 'queued', attempts: 1, attempt: { attempt: 1, started_at: at(0), finished_at: at(1), status: 'failed' } })).toBe('outdated');
    expect(await store().get(ref)).toBeUndefined();
    expect(await store().statusOf(ref)).toBeUndefined();
  });
});

describe('runQueuedFlow over the store: two copies of one event, in the orders a race gives', () => {
  const message = (ref: { triggerId: string; executionId: string }) => JSON.stringify({ v: 1, trigger_id: ref.triggerId, flow: 'echo', ref, input: { trigger: { event: {} } } });
  function worker(outcomes: FlowResult[]) {
    let runs = 0;
    const deps: WorkerDeps = {
      executions: store(),
      flows: { run: async () => outcomes[runs++]! },
      redelivery: { delay: async () => undefined },
      maxReceiveCount: 5,
      retryBaseSeconds: 15,
      now: Date.now,
      after: () => () => undefined,
    };
    return { deps, runs: () => runs };
  }
  async function queuedRef(triggerId: string) {
    const ref = { triggerId, executionId: newExecutionId(Date.now(), randomBytes(16).toString('hex')) };
    await store().record(ref, { event_id: 'evt_worker_copies', received_at: new Date().toISOString(), status: 'queued', attempts: 0 }, REQUEST);
    return ref;
  }
  const failed: FlowResult = { status: 'failed', error: 'Boom' };
  const succeeded: FlowResult = { status: 'succeeded', output: { ok: true } };

  it('copy B fails attempt 2, then copy A succeeds attempt 1: succeeded; B\'s next receive is acknowledged without running the flow', async () => {
    const ref = await queuedRef('t-worker-b-first');
    const a = worker([succeeded]);
    const b = worker([failed, failed]);
    await expect(runQueuedFlow(b.deps, { body: message(ref), receiptHandle: 'b', receiveCount: 2, timeoutMs: 1000 })).rejects.toBeInstanceOf(FlowAttemptFailed);
    expect(await store().statusOf(ref)).toBe('queued');
    await runQueuedFlow(a.deps, { body: message(ref), receiptHandle: 'a', receiveCount: 1, timeoutMs: 1000 });
    await expect(runQueuedFlow(b.deps, { body: message(ref), receiptHandle: 'b', receiveCount: 3, timeoutMs: 1000 })).resolves.toBeUndefined();
    expect([a.runs(), b.runs()]).toEqual([1, 1]);
    const read = await store().get(ref);
    expect(read).toMatchObject({ status: 'succeeded', attempts: 2, output: { ok: true } });
    expect(read!.timeline.map((entry) => [entry.attempt, entry.status])).toEqual([[1, 'succeeded'], [2, 'failed']]);
  });

  it('copy A succeeds attempt 1, then copy B fails attempt 2: still succeeded, and B is acknowledged rather than retried', async () => {
    const ref = await queuedRef('t-worker-a-first');
    await runQueuedFlow(worker([succeeded]).deps, { body: message(ref), receiptHandle: 'a', receiveCount: 1, timeoutMs: 1000 });
    await expect(runQueuedFlow(worker([failed]).deps, { body: message(ref), receiptHandle: 'b', receiveCount: 2, timeoutMs: 1000 })).resolves.toBeUndefined();
    expect(await store().get(ref)).toMatchObject({ status: 'succeeded', attempts: 1, output: { ok: true } });
  });

  it('a direct run and its queued fallback, both attempt 1: the fallback\'s failure after the success is acknowledged and changes nothing', async () => {
    const ref = await queuedRef('t-worker-fallback');
    await runQueuedFlow(worker([succeeded]).deps, { body: message(ref), receiveCount: 1, timeoutMs: 1000 });
    await expect(runQueuedFlow(worker([failed]).deps, { body: message(ref), receiptHandle: 'q', receiveCount: 1, timeoutMs: 1000 })).resolves.toBeUndefined();
    const read = await store().get(ref);
    expect(read).toMatchObject({ status: 'succeeded', attempts: 1, timeline: [expect.objectContaining({ attempt: 1, status: 'succeeded' })] });
    expect(read).not.toHaveProperty('error');
  });
});

describe('DynamoExecutionStore.countRefusal', () => {
  it('grants up to the maximum per trigger and minute, then refuses; a new minute or another trigger starts again', async () => {
    const granted = [];
    for (let i = 0; i < 8; i++) granted.push(await store().countRefusal('t-refusals', 1000, 5));
    expect(granted).toEqual([true, true, true, true, true, false, false, false]);
    expect(await store().countRefusal('t-refusals', 1001, 5)).toBe(true);
    expect(await store().countRefusal('t-other', 1000, 5)).toBe(true);
  });

  it('is the trigger\'s delivery count of the minute: one write counts the refusal (or handshake) and holds the budget; uncountRefusal takes both back', async () => {
    const stats = new DynamoDeliveryStats(local.dynamo, table(), Date.now);
    const minute = Math.floor(Date.now() / 60_000);
    expect(await store().countRefusal('t-counted', minute, 3)).toBe(true);
    expect(await store().countRefusal('t-counted', minute, 3, 'handshake')).toBe(true);
    expect(await store().countRefusal('t-counted', minute, 3)).toBe(true);
    expect(await store().countRefusal('t-counted', minute, 3)).toBe(false);
    await store().uncountRefusal('t-counted', minute);
    expect((await stats.minutes('t-counted', minute, minute)).get(minute)).toMatchObject({ refused: 1, handshake: 1 });
    // The budget given back is room for one more.
    expect(await store().countRefusal('t-counted', minute, 3)).toBe(true);
    expect((await stats.minutes('t-counted', minute, minute)).get(minute)).toMatchObject({ refused: 2, handshake: 1 });
  });
});

describe('DynamoExecutionStore: requests packed into one write unit', () => {
  // A 1 KB Stripe event with the headers Stripe and API Gateway send: about 1.8 KB as JSON.
  const headers = {
    'content-type': 'application/json; charset=utf-8', 'user-agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)', accept: '*/*; q=0.5, application/xml',
    'cache-control': 'no-cache', 'stripe-signature': `t=1732134905,v1=${randomBytes(32).toString('hex')}`, host: 'abcdef1234.execute-api.us-east-1.amazonaws.com',
    'content-length': '1024', 'x-amzn-trace-id': `Root=1-67891233-${randomBytes(12).toString('hex')}`, 'x-forwarded-for': '54.187.174.169', 'x-forwarded-port': '443', 'x-forwarded-proto': 'https',
  };

  it('stores a 1 KB webhook\'s request in one write unit and reads it back exactly', async () => {
    const body = realisticEvent(1024, 'evt_packed', 7);
    const request: StoredRequest = { method: 'POST', headers, query: {}, source_ip: '54.187.174.169', body_bytes: 1024, body, body_encoding: 'utf8' };
    expect(Buffer.byteLength(JSON.stringify(request))).toBeGreaterThan(1700);
    // The status record and the request go in one BatchWriteItem, whose consumed capacity is the two items' sum.
    const items: string[] = [];
    let units = 0;
    local.dynamo.middlewareStack.add((next) => async (args) => {
      const input = args.input as { RequestItems?: Record<string, { PutRequest?: { Item?: { pk?: string } } }[]>; ReturnConsumedCapacity?: string };
      input.ReturnConsumedCapacity = 'TOTAL';
      const result = await next(args);
      for (const requests of Object.values(input.RequestItems ?? {})) items.push(...requests.map((r) => String(r.PutRequest?.Item?.pk ?? '').split('#')[0]!));
      for (const consumed of (result.output as { ConsumedCapacity?: { CapacityUnits?: number }[] }).ConsumedCapacity ?? []) units += consumed.CapacityUnits ?? 0;
      return result;
    }, { step: 'initialize', name: 'countUnitsInTest' });
    const ref = { triggerId: 't-packed', executionId: newExecutionId(Date.now(), randomBytes(16).toString('hex')) };
    try {
      await store().record(ref, { event_id: 'evt_packed', received_at: receivedAtOf(ref.executionId), status: 'queued', attempts: 0 }, request);
    } finally {
      local.dynamo.middlewareStack.remove('countUnitsInTest');
    }
    expect(items.sort()).toEqual(['REQUEST', 'TRIGGER']);
    expect(units).toBe(2);
    expect(await store().requestOf(ref, 'evt_packed')).toEqual(request);
  });

  it('still reads requests stored before packing (JSON head, body beside it)', async () => {
    const ref = { triggerId: 't-legacy', executionId: newExecutionId(Date.now(), randomBytes(16).toString('hex')) };
    await store().record(ref, { event_id: 'evt_legacy', received_at: receivedAtOf(ref.executionId), status: 'queued', attempts: 0 });
    const digest = createHash('sha256').update('evt_legacy', 'utf8').digest('base64url').slice(0, 22);
    await local.dynamo.send(new PutCommand({
      TableName: table(),
      Item: {
        pk: `REQUEST#t-legacy#${digest}`, sk: `${receivedAtOf(ref.executionId)}#${ref.executionId}`, execution_id: ref.executionId,
        request_json: JSON.stringify({ method: 'POST', headers: { 'content-type': 'application/json' }, query: {}, body_bytes: 2, body_encoding: 'utf8' }), body: '{}', expires_at: nowSeconds() + 3600,
      },
    }));
    expect(await store().requestOf(ref, 'evt_legacy')).toEqual(REQUEST);
  });
});
