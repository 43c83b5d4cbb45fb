import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, QueryCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dynamoClient } from '../../functions/adapters/aws/clients/dynamo.js';
import { MAX_ANSWER_BYTES, MAX_PENDING_SCANS_PER_FETCH } from '../../functions/domain/streams/limits.js';
import { LOCAL_AWS_ENV } from '../../local/engines.js';
import { call, useLocalStack } from '../support/local-stack.js';

/** One stack for the file: streams and consumers over HTTP, on dynalite. The sweeper's final pass comes a second after a purge. */
const stack = useLocalStack({ env: { KV_SWEEP_SETTLE_SECONDS: '1' } });
let doc: DynamoDBDocumentClient | undefined;
afterAll(() => doc?.destroy());
const dynamo = () => (doc ??= DynamoDBDocumentClient.from(new DynamoDBClient({
  region: LOCAL_AWS_ENV.AWS_REGION, credentials: { accessKeyId: 'local', secretAccessKey: 'local' }, endpoint: stack.engines.env.AWS_ENDPOINT_URL_DYNAMODB,
})));
/** Items of the kv table whose partition key starts with `prefix` (a test may Scan; the product never does). */
async function itemsUnder(prefix: string): Promise<number> {
  let count = 0;
  let start: Record<string, unknown> | undefined;
  do {
    const page = await dynamo().send(new ScanCommand({ TableName: stack.engines.env.KV_TABLE, FilterExpression: 'begins_with(pk, :p)', ExpressionAttributeValues: { ':p': prefix }, ExclusiveStartKey: start }));
    count += page.Items?.length ?? 0;
    start = page.LastEvaluatedKey;
  } while (start);
  return count;
}

/**
 * The DynamoDB work the stack's functions do for one account, as dynalite reports it: every call
 * the handlers send through the stack's client asks for `ReturnConsumedCapacity: TOTAL`, and the
 * units of calls whose input names the account are added up (reads and writes apart).
 */
interface Work { reads: number; writes: number; calls: number; writeCalls: number }
let metering: { account: string; work: Work } | undefined;
beforeAll(() => {
  dynamoClient(stack.aws).middlewareStack.add((next, context) => async (args) => {
    const meter = metering;
    if (!meter || !JSON.stringify(args.input).includes(`#${meter.account}#`) && !JSON.stringify(args.input).includes(`"STREAMS#${meter.account}"`)) return next(args);
    (args.input as { ReturnConsumedCapacity?: string }).ReturnConsumedCapacity = 'TOTAL';
    const result = await next(args);
    const capacity = (result.output as { ConsumedCapacity?: { CapacityUnits?: number } | { CapacityUnits?: number }[] }).ConsumedCapacity;
    const units = [capacity ?? []].flat().reduce((sum, c) => sum + (c.CapacityUnits ?? 0), 0);
    const write = /^(Put|Update|Delete|BatchWrite)/.test(context.commandName ?? '');
    meter.work.calls++;
    if (write) {
      meter.work.writes += units;
      meter.work.writeCalls++;
    } else meter.work.reads += units;
    return result;
  }, { step: 'initialize', name: 'meterStreamsWork' });
});
/** The DynamoDB work `run` makes the stack do for `account`. */
async function workOf<T>(account: string, run: () => Promise<T>): Promise<{ work: Work; value: T }> {
  metering = { account, work: { reads: 0, writes: 0, calls: 0, writeCalls: 0 } };
  try {
    const value = await run();
    return { work: metering.work, value };
  } finally {
    metering = undefined;
  }
}

let counter = 0;
/** A fresh account with its own stream, and helpers bound to it. */
async function tenant(config: Record<string, unknown> | false = {}) {
  const n = ++counter;
  const token = await stack.token(`streams-user-${n}`);
  const stream = `stream-${n}`;
  const base = `/storage/streams/${stream}`;
  if (config !== false) expect((await call(stack, 'PUT', base, { token, body: config })).status).toBe(201);
  const publish = (messages: unknown[]) => call(stack, 'POST', `${base}/messages`, { token, body: { messages } });
  const seqsOf = async (messages: unknown[]) => {
    const res = await publish(messages);
    expect(res.status, res.text).toBe(200);
    return res.json.data.seqs as number[];
  };
  const read = async (query = '') => {
    const res = await call(stack, 'GET', `${base}/messages${query}`, { token });
    expect(res.status, res.text).toBe(200);
    return res.json.data as { messages: { seq: number; data: unknown; ts: string; headers: unknown; msg_id: string | null }[]; next_after_seq: number; last_seq: number; first_seq: number };
  };
  const info = async () => (await call(stack, 'GET', base, { token })).json.data;
  const consumerPath = (name: string) => `${base}/consumers/${name}`;
  const createConsumer = async (name: string, body: Record<string, unknown> = {}) => {
    const res = await call(stack, 'PUT', consumerPath(name), { token, body });
    expect(res.status, res.text).toBe(201);
    return res.json.data;
  };
  const fetchBatch = async (name: string, body: Record<string, unknown> = {}) => {
    const res = await call(stack, 'POST', `${consumerPath(name)}/fetch`, { token, body });
    expect(res.status, res.text).toBe(200);
    return res.json.data.messages as { seq: number; data: unknown; deliveries: number }[];
  };
  const ack = async (name: string, seqs: number[]) => (await call(stack, 'POST', `${consumerPath(name)}/ack`, { token, body: { seqs } })).json.data.acked as number[];
  const consumer = async (name: string) => (await call(stack, 'GET', consumerPath(name), { token })).json.data;
  return { account: `streams-user-${n}`, token, stream, base, publish, seqsOf, read, info, consumerPath, createConsumer, fetchBatch, ack, consumer };
}

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));
/** Polls `probe` until it returns a value `done` accepts, failing after `timeoutMs`. */
async function waitFor<T>(probe: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`condition not reached: ${JSON.stringify(value).slice(0, 300)}`);
    await sleep(100);
  }
}

// Each test has an account and stream of its own. Those that mostly wait on the clock (ack waits,
// lease-like windows, a long poll, the sweeper's settle time) are `it.concurrent` beside a neighbour
// that also waits: vitest runs adjacent concurrent tests together, so the waits overlap.
describe('streams', () => {
  it('PUT creates a stream with defaults; GET shows it with counts; the listing shows it', async () => {
    const t = await tenant(false);
    const res = await call(stack, 'PUT', t.base, { token: t.token });
    expect(res.status).toBe(201);
    expect(res.json.data).toEqual({
      name: t.stream, description: null, max_msgs: null, max_bytes: null, max_age_seconds: null, max_msg_size: 262_144,
      discard: 'old', duplicate_window_seconds: 120, created_at: expect.stringMatching(/^\d{4}-/),
      messages: 0, bytes: 0, first_seq: 1, last_seq: 0, first_ts: null, last_ts: null, consumers: 0,
    });
    const again = await call(stack, 'PUT', t.base, { token: t.token });
    expect(again.status).toBe(200);
    expect(again.json.data).toEqual(res.json.data);
    expect(await t.info()).toEqual(res.json.data);
    expect((await call(stack, 'GET', '/storage/streams', { token: t.token })).json.data).toEqual({ streams: [res.json.data], next_cursor: null });
  });

  it('publishes a batch and reads it back in order, by sequence, after a sequence and from a time', async () => {
    const t = await tenant();
    const before = new Date().toISOString();
    expect(await t.seqsOf([{ data: { n: 1 } }, { data: 'two', headers: { 'x-kind': 'text' } }, { data: null, msg_id: 'third' }])).toEqual([1, 2, 3]);
    expect(await t.seqsOf([{ data: [4] }])).toEqual([4]);
    const all = await t.read();
    expect(all.messages.map((m) => [m.seq, m.data])).toEqual([[1, { n: 1 }], [2, 'two'], [3, null], [4, [4]]]);
    expect(all.messages[1]).toMatchObject({ headers: { 'x-kind': 'text' }, msg_id: null });
    expect(all.messages[2]).toMatchObject({ msg_id: 'third' });
    expect(all).toMatchObject({ next_after_seq: 4, last_seq: 4, first_seq: 1 });
    expect((await t.read('?after_seq=2&limit=1')).messages.map((m) => m.seq)).toEqual([3]);
    expect((await t.read(`?start_time=${encodeURIComponent(before)}`)).messages).toHaveLength(4);
    expect((await t.read(`?start_time=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`)).messages).toEqual([]);
    const one = await call(stack, 'GET', `${t.base}/messages/2`, { token: t.token });
    expect(one.json.data).toMatchObject({ seq: 2, data: 'two' });
    expect((await call(stack, 'GET', `${t.base}/messages/5`, { token: t.token })).status).toBe(404);
    const info = await t.info();
    expect(info).toMatchObject({ messages: 4, first_seq: 1, last_seq: 4, first_ts: expect.any(String), last_ts: expect.any(String) });
    expect(info.bytes).toBe(['{"n":1}', '"two"', 'null', '[4]'].reduce((sum, text) => sum + text.length, 0) + JSON.stringify({ 'x-kind': 'text' }).length);
  });

  it('8 concurrent publishers × 40 give sequences 1..320 with no gap or repeat, and a tailing reader sees them all in order', async () => {
    // Every publish but the first races the others for the stream's head; how many messages each
    // sends only repeats that race (each publish costs the local stack milliseconds of CPU), and
    // throughput is the streams bench's (1 and 8 publishers).
    const perPublisher = 40;
    const total = 8 * perPublisher;
    const t = await tenant();
    const tail: number[] = [];
    let publishing = true;
    const reader = (async () => {
      let after = 0;
      while (publishing || after < total) {
        const page = await t.read(`?after_seq=${after}&limit=1000`);
        // The watermark: a reader never sees a sequence that a later read could fill in before it.
        expect(page.messages.map((m) => m.seq)).toEqual(range(after + 1, page.next_after_seq));
        tail.push(...page.messages.map((m) => m.seq));
        after = page.next_after_seq;
        await sleep(page.messages.length === 0 ? 50 : 10);
      }
    })();
    // Each publisher sends its messages in batches of 4 (even ones) or 10 (odd ones); single publishes: the benchmark.
    const publishers = range(1, 8).map(async (p) => {
      const seqs: number[] = [];
      for (let i = 0; i < perPublisher;) {
        const size = p % 2 === 0 ? 4 : 10;
        seqs.push(...await t.seqsOf(range(i, i + size - 1).map((k) => ({ data: { p, k } }))));
        i += size;
      }
      return seqs;
    });
    const bySender = await Promise.all(publishers);
    publishing = false;
    await reader;
    expect(bySender.flat().sort((a, b) => a - b)).toEqual(range(1, total));
    // Each publisher's own messages are in its order.
    for (const seqs of bySender) expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(tail).toEqual(range(1, total));
    expect(await t.info()).toMatchObject({ messages: total, first_seq: 1, last_seq: total });
  }, 120_000);

  it('retention by count and size drops the oldest with discard old', async () => {
    const byCount = await tenant({ max_msgs: 3 });
    await byCount.seqsOf(range(1, 5).map((n) => ({ data: n })));
    expect((await byCount.read()).messages.map((m) => m.data)).toEqual([3, 4, 5]);
    expect(await byCount.info()).toMatchObject({ messages: 3, first_seq: 3, last_seq: 5 });
    expect((await call(stack, 'GET', `${byCount.base}/messages/1`, { token: byCount.token })).status).toBe(404);

    // "xxxxxxxx" is 10 bytes as JSON: 25 bytes hold two.
    const bySize = await tenant({ max_bytes: 25 });
    for (let i = 0; i < 4; i++) await bySize.seqsOf([{ data: 'x'.repeat(8) }]);
    expect(await bySize.info()).toMatchObject({ messages: 2, bytes: 20, first_seq: 3, last_seq: 4 });
  });

  it('discard new refuses a publish past max_msgs or max_bytes with 409 and stores nothing of it', async () => {
    const t = await tenant({ max_msgs: 3, discard: 'new' });
    await t.seqsOf([{ data: 1 }, { data: 2 }]);
    const refused = await t.publish([{ data: 3 }, { data: 4 }]);
    expect(refused.status).toBe(409);
    expect(refused.json.error).toBe('stream_full');
    expect(await t.seqsOf([{ data: 3 }])).toEqual([3]);
    expect((await t.publish([{ data: 4 }])).status).toBe(409);
    expect((await t.read()).messages.map((m) => m.data)).toEqual([1, 2, 3]);

    const bytes = await tenant({ max_bytes: 10, discard: 'new' });
    await bytes.seqsOf([{ data: '12345678' }]);
    expect((await bytes.publish([{ data: 1 }])).status).toBe(409);
    expect(await bytes.info()).toMatchObject({ messages: 1, bytes: 10 });
  });

  it.concurrent('max_age_seconds hides and drops messages once they are older', async () => {
    const t = await tenant({ max_age_seconds: 1 });
    await t.seqsOf([{ data: 'old' }]);
    await waitFor(() => t.info(), (info) => info.messages === 0);
    expect((await t.read()).messages).toEqual([]);
    expect(await t.seqsOf([{ data: 'new' }])).toEqual([2]);
    expect((await t.read()).messages.map((m) => m.data)).toEqual(['new']);
    expect(await t.info()).toMatchObject({ messages: 1, first_seq: 2, last_seq: 2 });
  });

  it.concurrent('a msg_id seen within the duplicate window returns its first sequence and stores nothing', async () => {
    // A window a busy machine cannot outlast between two publishes; the one that ends is another stream's.
    const t = await tenant({ duplicate_window_seconds: 120 });
    expect(await t.seqsOf([{ data: 'a', msg_id: 'order-1' }, { data: 'b', msg_id: 'order-2' }])).toEqual([1, 2]);
    expect(await t.seqsOf([{ data: 'again', msg_id: 'order-1' }, { data: 'c', msg_id: 'order-3' }, { data: 'c twice', msg_id: 'order-3' }])).toEqual([1, 3, 3]);
    expect((await t.read()).messages.map((m) => m.data)).toEqual(['a', 'b', 'c']);
    // After the window the same msg_id is a new message: a slow machine only makes the gap longer.
    const short = await tenant({ duplicate_window_seconds: 1 });
    expect(await short.seqsOf([{ data: 'first', msg_id: 'order-1' }])).toEqual([1]);
    await sleep(1100);
    expect(await short.seqsOf([{ data: 'later', msg_id: 'order-1' }])).toEqual([2]);
  });

  it('purge removes every message, keeps the configuration and consumers, and sequences go on', async () => {
    const t = await tenant({ description: 'kept', max_msgs: 100 });
    await t.seqsOf(range(1, 5).map((n) => ({ data: n })));
    await t.createConsumer('worker');
    const purged = await call(stack, 'DELETE', `${t.base}/purge`, { token: t.token });
    expect(purged.status).toBe(200);
    expect(await t.info()).toMatchObject({ description: 'kept', max_msgs: 100, messages: 0, bytes: 0, first_seq: 6, last_seq: 5, consumers: 1 });
    expect((await t.read()).messages).toEqual([]);
    expect(await t.seqsOf([{ data: 'after' }])).toEqual([6]);
    expect((await t.fetchBatch('worker', { batch: 10 })).map((m) => [m.seq, m.data])).toEqual([[6, 'after']]);
  });

  it("another account's stream is 404 for every route", async () => {
    const t = await tenant();
    await t.seqsOf([{ data: 'mine' }]);
    await t.createConsumer('c');
    const other = await stack.token('streams-intruder');
    const attempts: [string, string, unknown?][] = [
      ['GET', t.base], ['DELETE', t.base], ['DELETE', `${t.base}/purge`], ['GET', `${t.base}/messages`], ['GET', `${t.base}/messages/1`],
      ['POST', `${t.base}/messages`, { messages: [{ data: 1 }] }], ['GET', t.consumerPath('c')], ['PUT', t.consumerPath('d'), {}],
      ['POST', `${t.consumerPath('c')}/fetch`, {}], ['POST', `${t.consumerPath('c')}/ack`, { seqs: [1] }],
    ];
    for (const [method, path, body] of attempts) {
      const res = await call(stack, method, path, { token: other, body });
      expect(res.status, `${method} ${path}`).toBe(404);
    }
    expect((await call(stack, 'GET', '/storage/streams', { token: other })).json.data.streams).toEqual([]);
    expect(await t.info()).toMatchObject({ messages: 1, consumers: 1 });
  });

  it('bad input is a 400 with nothing stored', async () => {
    const t = await tenant({ max_msg_size: 20 });
    const bad: unknown[] = [
      {}, { messages: [] }, { messages: range(1, 101).map((n) => ({ data: n })) }, { messages: [{}] }, { messages: [{ data: 1, extra: 1 }] },
      { messages: [{ data: 1, msg_id: '' }] }, { messages: [{ data: 1, headers: { 'Bad Name': 'x' } }] }, { messages: [{ data: 1, headers: { a: 1 } }] },
      { messages: [{ data: 1 }, 'not an object'] }, { messages: 'x' },
    ];
    for (const body of bad) {
      const res = await call(stack, 'POST', `${t.base}/messages`, { token: t.token, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.json.error).toBe('validation_error');
    }
    const tooBig = await t.publish([{ data: 1 }, { data: 'x'.repeat(30) }]);
    expect(tooBig.status).toBe(413);
    for (const query of ['?after_seq=-1', '?after_seq=x', '?limit=0', '?limit=1001', '?start_time=yesterday', '?after_seq=1&start_time=2020-01-01T00:00:00Z']) {
      expect((await call(stack, 'GET', `${t.base}/messages${query}`, { token: t.token })).status, query).toBe(400);
    }
    expect((await call(stack, 'GET', `${t.base}/messages/0`, { token: t.token })).status).toBe(400);
    for (const config of [{ max_msgs: 0 }, { discard: 'oldest' }, { max_msg_size: 262_145 }, { duplicate_window_seconds: -1 }, { nope: 1 }]) {
      expect((await call(stack, 'PUT', '/storage/streams/other', { token: t.token, body: config })).status, JSON.stringify(config)).toBe(400);
    }
    expect((await call(stack, 'PUT', '/storage/streams/bad%20name', { token: t.token })).status).toBe(400);
    for (const config of [{ deliver_policy: 'first' }, { deliver_policy: 'by_start_sequence' }, { opt_start_seq: 3 }, { ack_wait_seconds: 0 }, { backoff_seconds: [0] }, { max_deliver: 1, backoff_seconds: [1, 2] }]) {
      expect((await call(stack, 'PUT', t.consumerPath('c'), { token: t.token, body: config })).status, JSON.stringify(config)).toBe(400);
    }
    expect(await t.info()).toMatchObject({ messages: 0, last_seq: 0, consumers: 0 });
    expect((await call(stack, 'GET', '/storage/streams', { token: t.token })).json.data.streams).toHaveLength(1);
  });

  it('consumers start where their deliver policy says', async () => {
    const t = await tenant();
    const startTime = await (async () => {
      await t.seqsOf([{ data: 1 }, { data: 2 }]);
      await sleep(20);
      const at = new Date().toISOString();
      await sleep(20);
      await t.seqsOf([{ data: 3 }, { data: 4 }, { data: 5 }]);
      return at;
    })();
    const policies: [string, Record<string, unknown>, number[]][] = [
      ['all', { deliver_policy: 'all' }, [1, 2, 3, 4, 5]],
      ['new', { deliver_policy: 'new' }, []],
      ['last', { deliver_policy: 'last' }, [5]],
      ['seq', { deliver_policy: 'by_start_sequence', opt_start_seq: 4 }, [4, 5]],
      ['time', { deliver_policy: 'by_start_time', opt_start_time: startTime }, [3, 4, 5]],
    ];
    for (const [name, config] of policies) await t.createConsumer(name, config);
    expect((await t.consumer('all'))).toMatchObject({ num_pending: 5, num_ack_pending: 0, ack_floor: 0, delivered_seq: 0 });
    for (const [name, , expected] of policies) {
      expect((await t.fetchBatch(name, { batch: 10 })).map((m) => m.seq), name).toEqual(expected);
    }
    await t.seqsOf([{ data: 6 }]);
    for (const [name] of policies) expect((await t.fetchBatch(name, { batch: 10 })).map((m) => m.seq), name).toEqual([6]);
    expect(await t.info()).toMatchObject({ consumers: 5 });
    expect((await call(stack, 'DELETE', t.consumerPath('new'), { token: t.token })).status).toBe(204);
    expect((await call(stack, 'GET', t.consumerPath('new'), { token: t.token })).status).toBe(404);
    expect(await t.info()).toMatchObject({ consumers: 4 });
  });

  it.concurrent('fetch long-polls until a message arrives; ack removes it from pending and moves the ack floor', async () => {
    const t = await tenant();
    await t.createConsumer('w');
    const started = Date.now();
    const fetching = t.fetchBatch('w', { batch: 5, wait_ms: 10_000 });
    await sleep(300);
    await t.seqsOf([{ data: 'late' }]);
    const got = await fetching;
    expect(got.map((m) => [m.seq, m.data, m.deliveries])).toEqual([[1, 'late', 1]]);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(await t.consumer('w')).toMatchObject({ num_pending: 0, num_ack_pending: 1, ack_floor: 0, delivered_seq: 1 });
    expect(await t.ack('w', [1, 1, 99])).toEqual([1]);
    expect(await t.consumer('w')).toMatchObject({ num_ack_pending: 0, ack_floor: 1 });
    // An empty fetch without wait answers at once.
    expect(await t.fetchBatch('w')).toEqual([]);
  });

  it.concurrent('a message not acknowledged within ack_wait is delivered again; nak redelivers after its delay; backoff spaces redeliveries; max_deliver then dead', async () => {
    // Two consumers of their own, run side by side: each half waits on the clock, not on the other.
    const ackWaitNakAndDead = async () => {
      const t = await tenant();
      await t.seqsOf([{ data: 'a' }, { data: 'b' }]);
      await t.createConsumer('w', { ack_wait_seconds: 1, max_deliver: 3 });
      const first = await t.fetchBatch('w', { batch: 10 });
      expect(first.map((m) => [m.seq, m.deliveries])).toEqual([[1, 1], [2, 1]]);
      await t.ack('w', [2]);
      // Not yet due: nothing; then seq 1 comes back with its delivery count.
      expect(await t.fetchBatch('w', { batch: 10 })).toEqual([]);
      const again = await t.fetchBatch('w', { batch: 10, wait_ms: 5_000 });
      expect(again.map((m) => [m.seq, m.deliveries])).toEqual([[1, 2]]);
      // nak with a delay of 1 s: not at once, then again.
      expect((await call(stack, 'POST', `${t.consumerPath('w')}/nak`, { token: t.token, body: { seq: 1, delay_seconds: 1 } })).status).toBe(200);
      expect(await t.fetchBatch('w')).toEqual([]);
      expect((await t.fetchBatch('w', { wait_ms: 5_000 })).map((m) => [m.seq, m.deliveries])).toEqual([[1, 3]]);
      // The third delivery was the last: once its wait passes it is dead, not delivered.
      // A fetch finds it due and records it dead (and delivers nothing).
      await waitFor(async () => {
        expect(await t.fetchBatch('w')).toEqual([]);
        return (await call(stack, 'GET', `${t.consumerPath('w')}/dead`, { token: t.token })).json.data.dead;
      }, (list) => list.length === 1);
      const dead = (await call(stack, 'GET', `${t.consumerPath('w')}/dead`, { token: t.token })).json.data;
      expect(dead).toEqual({ dead: [{ seq: 1, deliveries: 3, dead_at: expect.any(String) }], next_cursor: null });
      expect(await t.consumer('w')).toMatchObject({ num_ack_pending: 0, num_redelivered: 2, ack_floor: 2 });
      expect((await call(stack, 'POST', `${t.consumerPath('w')}/nak`, { token: t.token, body: { seq: 1 } })).status).toBe(404);
    };
    const backoff = async () => {
      // backoff_seconds [1, 3]: the second delivery comes after about 1 s, the third not before 3 s more.
      const b = await tenant();
      await b.seqsOf([{ data: 'x' }]);
      await b.createConsumer('w', { backoff_seconds: [1, 3] });
      await b.fetchBatch('w');
      const second = await b.fetchBatch('w', { wait_ms: 5_000 });
      expect(second.map((m) => m.deliveries)).toEqual([2]);
      const secondAt = Date.now();
      const third = await b.fetchBatch('w', { wait_ms: 10_000 });
      expect(third.map((m) => m.deliveries)).toEqual([3]);
      expect(Date.now() - secondAt).toBeGreaterThanOrEqual(2_500);
    };
    await Promise.all([ackWaitNakAndDead(), backoff()]);
  }, 60_000);

  it('two concurrent fetchers never share a pending message', async () => {
    const t = await tenant();
    await t.seqsOf(range(1, 60).map((n) => ({ data: n })));
    await t.createConsumer('w', { ack_wait_seconds: 60 });
    const fetchers = range(1, 4).map(async () => {
      const seen: number[] = [];
      for (let empty = 0; empty < 2;) {
        const batch = await t.fetchBatch('w', { batch: 7 });
        if (batch.length === 0) empty++;
        seen.push(...batch.map((m) => m.seq));
      }
      return seen;
    });
    const seen = (await Promise.all(fetchers)).flat();
    expect(seen.sort((a, b) => a - b)).toEqual(range(1, 60));
    expect(await t.consumer('w')).toMatchObject({ num_pending: 0, num_ack_pending: 60 });
  });

  it('max_ack_pending bounds what is delivered and not acknowledged', async () => {
    const t = await tenant();
    await t.seqsOf(range(1, 5).map((n) => ({ data: n })));
    await t.createConsumer('w', { max_ack_pending: 2 });
    expect((await t.fetchBatch('w', { batch: 10 })).map((m) => m.seq)).toEqual([1, 2]);
    expect(await t.fetchBatch('w', { batch: 10 })).toEqual([]);
    await t.ack('w', [1]);
    expect((await t.fetchBatch('w', { batch: 10 })).map((m) => m.seq)).toEqual([3]);
  });

  it('PUT on an existing stream replaces its configuration: lowered limits trim with discard old, refuse with discard new; bad input changes nothing', async () => {
    const t = await tenant({ max_msgs: 10, description: 'before' });
    await t.seqsOf(range(1, 10).map((n) => ({ data: n })));
    await t.createConsumer('w');
    const put = (body: Record<string, unknown>) => call(stack, 'PUT', t.base, { token: t.token, body });
    const updated = await put({ max_msgs: 4, description: 'after' });
    expect(updated.status, updated.text).toBe(200);
    expect(updated.json.data).toMatchObject({ description: 'after', max_msgs: 4, discard: 'old', messages: 4, first_seq: 7, last_seq: 10, consumers: 1 });
    expect((await t.read()).messages.map((m) => m.data)).toEqual([7, 8, 9, 10]);

    const bad = await put({ max_msgs: 0 });
    expect(bad.status).toBe(400);
    expect(await t.info()).toMatchObject({ description: 'after', max_msgs: 4, messages: 4 });

    // discard new under a limit it is already past: the messages stay, publishes are refused until there is room.
    expect((await put({ max_msgs: 3, discard: 'new' })).json.data).toMatchObject({ description: null, max_msgs: 3, discard: 'new', messages: 4 });
    expect((await t.publish([{ data: 11 }])).status).toBe(409);
    expect((await put({ max_msgs: 5, discard: 'new' })).status).toBe(200);
    expect(await t.seqsOf([{ data: 11 }])).toEqual([11]);
    expect((await t.fetchBatch('w', { batch: 10 })).map((m) => m.seq)).toEqual([7, 8, 9, 10, 11]);
  });

  it('GET …/consumers lists the consumers in name order with their lag, a page at a time', async () => {
    const t = await tenant();
    expect((await call(stack, 'GET', `${t.base}/consumers`, { token: t.token })).json.data).toEqual({ consumers: [], next_cursor: null });
    await t.seqsOf(range(1, 5).map((n) => ({ data: n })));
    await t.createConsumer('b');
    await t.createConsumer('a');
    await t.fetchBatch('a', { batch: 2 });
    const res = await call(stack, 'GET', `${t.base}/consumers`, { token: t.token });
    expect(res.status).toBe(200);
    expect(res.json.data.consumers.map((c: { name: string; num_pending: number; num_ack_pending: number }) => [c.name, c.num_pending, c.num_ack_pending])).toEqual([['a', 3, 2], ['b', 5, 0]]);
    expect((await call(stack, 'GET', '/storage/streams/no-such/consumers', { token: t.token })).status).toBe(404);
    // Paged like every other listing.
    await t.createConsumer('c');
    const first = await call(stack, 'GET', `${t.base}/consumers?limit=2`, { token: t.token });
    expect(first.json.data.consumers.map((c: { name: string }) => c.name)).toEqual(['a', 'b']);
    expect(first.json.data.next_cursor).toEqual(expect.any(String));
    const second = await call(stack, 'GET', `${t.base}/consumers?limit=2&cursor=${encodeURIComponent(first.json.data.next_cursor)}`, { token: t.token });
    expect(second.json.data).toMatchObject({ consumers: [expect.objectContaining({ name: 'c' })], next_cursor: null });
    expect((await call(stack, 'GET', `${t.base}/consumers?limit=0`, { token: t.token })).status).toBe(400);
    expect((await call(stack, 'GET', `${t.base}/consumers?cursor=nonsense`, { token: t.token })).status).toBe(400);
  });

  it('packs a publish of 100 1 KB messages into 32 KB items; any one of them, and runs across items, read back', async () => {
    const t = await tenant({ max_msgs: 150 });
    const data = (n: number) => `${n}:`.padEnd(998, 'x');
    expect(await t.seqsOf(range(1, 100).map((n) => ({ data: data(n), ...(n % 10 === 0 && { msg_id: `m-${n}`, headers: { 'x-n': String(n) } }) })))).toEqual(range(1, 100));
    expect(await itemsUnder(`STREAMMSG#${t.account}#${t.stream}#`)).toBe(4 + 10); // 4 packed items and 10 msg_id records
    for (const seq of [1, 31, 32, 33, 50, 100]) {
      const res = await call(stack, 'GET', `${t.base}/messages/${seq}`, { token: t.token });
      expect(res.json.data).toMatchObject({ seq, data: data(seq), msg_id: seq % 10 === 0 ? `m-${seq}` : null });
    }
    expect((await t.read('?after_seq=28&limit=10')).messages.map((m) => m.seq)).toEqual(range(29, 38));
    // Retention drops part of an item: what is left of it still reads, and the rest is swept once no message of it is kept.
    await t.seqsOf(range(101, 160).map((n) => ({ data: data(n) })));
    expect(await t.info()).toMatchObject({ messages: 150, first_seq: 11, last_seq: 160 });
    expect((await call(stack, 'GET', `${t.base}/messages/10`, { token: t.token })).status).toBe(404);
    expect((await t.read('?limit=3')).messages.map((m) => m.seq)).toEqual([11, 12, 13]);
    await t.createConsumer('w');
    expect((await t.fetchBatch('w', { batch: 100 })).map((m) => m.seq)).toEqual(range(11, 110));
    expect(await t.seqsOf([{ data: data(10), msg_id: 'm-10' }])).toEqual([10]);
  });

  it.concurrent('a waiting fetch over 1,000 pending messages reads them once, not on every look (#41)', async () => {
    // Each fetch reads every pending item: the fetches that make them pending read 0 + 100 + … + 900
    // of them (2,000 made that 19,000, most of this file's CPU).
    const t = await tenant();
    for (let i = 0; i < 10; i++) await t.seqsOf(range(1, 100).map((n) => ({ data: n })));
    await t.createConsumer('w', { max_ack_pending: 1000, ack_wait_seconds: 600 });
    for (let i = 0; i < 10; i++) expect(await t.fetchBatch('w', { batch: 100 })).toHaveLength(100);
    // What reading every pending item once costs (strongly consistent, as the fetch reads them).
    const consumers = `STREAMCON#${t.account}#${t.stream}#`;
    let scanUnits = 0;
    let pk: string | undefined;
    let start: Record<string, unknown> | undefined;
    do {
      // A page of the Scan holds at most 1 MB of the table, which the tests beside this one fill: page on until found.
      for (let from: Record<string, unknown> | undefined; !pk;) {
        const items = await dynamo().send(new ScanCommand({ TableName: stack.engines.env.KV_TABLE, FilterExpression: 'begins_with(pk, :p)', ExpressionAttributeValues: { ':p': consumers }, ExclusiveStartKey: from }));
        pk = items.Items?.[0]?.pk as string | undefined;
        if (!pk && !items.LastEvaluatedKey) throw new Error(`no item under ${consumers}`);
        from = items.LastEvaluatedKey;
      }
      const page = await dynamo().send(new QueryCommand({
        TableName: stack.engines.env.KV_TABLE, KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)', ExpressionAttributeValues: { ':pk': pk, ':p': 'P#' },
        ConsistentRead: true, ReturnConsumedCapacity: 'TOTAL', ExclusiveStartKey: start,
      }));
      scanUnits += page.ConsumedCapacity?.CapacityUnits ?? 0;
      start = page.LastEvaluatedKey;
    } while (start);
    // Reading the pending items must outweigh a 3 s wait's looks (2 units each, about 9 of them), so
    // that reading them at every look would show below (about 33 units here).
    expect(scanUnits).toBeGreaterThan(24);
    // At max_ack_pending with nothing due: the fetch waits its 3 s and answers nothing.
    const { work, value } = await workOf(t.account, () => t.fetchBatch('w', { batch: 10, wait_ms: 3000 }));
    expect(value).toEqual([]);
    // The bound (docs/streams.md): pending read at most MAX_PENDING_SCANS_PER_FETCH times, and 2
    // units a look (stream head and consumer), at most 45 looks in a 20 s wait. Before, every
    // look every 100 ms read all pending items again.
    expect(work.reads).toBeLessThanOrEqual(MAX_PENDING_SCANS_PER_FETCH * scanUnits + 2 * 45);
    expect(work.reads).toBeLessThan(3 * scanUnits);
    expect(work.writes).toBe(0);
  }, 120_000);

  it.concurrent('the sweeper reclaims a purged generation, and a deleted stream\'s messages and consumers', async () => {
    const t = await tenant();
    await t.seqsOf(range(1, 30).map((n) => ({ data: n })));
    await t.createConsumer('w');
    await t.fetchBatch('w', { batch: 5 });
    const messages = `STREAMMSG#${t.account}#${t.stream}#`;
    const consumers = `STREAMCON#${t.account}#${t.stream}#`;
    // One publish of 30 small messages is one packed item.
    expect(await itemsUnder(messages)).toBe(1);
    expect((await call(stack, 'DELETE', `${t.base}/purge`, { token: t.token })).status).toBe(200);
    await waitFor(() => itemsUnder(messages), (n) => n === 0, 30_000);
    await t.seqsOf([{ data: 'kept' }]);
    expect(await itemsUnder(consumers)).toBe(1 + 5);
    expect((await call(stack, 'DELETE', t.base, { token: t.token })).status).toBe(204);
    expect((await call(stack, 'GET', t.base, { token: t.token })).status).toBe(404);
    await waitFor(async () => [await itemsUnder(messages), await itemsUnder(consumers)], ([m, c]) => m === 0 && c === 0, 30_000);
    // A stream of the same name starts empty, without the old consumers.
    expect((await call(stack, 'PUT', t.base, { token: t.token, body: {} })).status).toBe(201);
    expect(await t.info()).toMatchObject({ messages: 0, last_seq: 0, consumers: 0 });
  }, 60_000);

  it('an ack of 1,000 sequences none of which is pending writes nothing; an ack writes one item per sequence acknowledged, and one more (#41)', async () => {
    const t = await tenant();
    for (let i = 0; i < 12; i++) await t.seqsOf(range(1, 100).map((n) => ({ data: n })));
    await t.createConsumer('w', { ack_wait_seconds: 600, max_ack_pending: 2000 });
    expect(await t.fetchBatch('w', { batch: 100 })).toHaveLength(100);
    // Sequences past the stream's last: nothing read, nothing written.
    const unknown = await workOf(t.account, () => t.ack('w', range(1_000_001, 1_001_000)));
    expect(unknown.value).toEqual([]);
    expect(unknown.work.writes).toBe(0);
    // Ten of them: ten deletes, and the consumer's pending version.
    const ten = await workOf(t.account, () => t.ack('w', range(1, 10)));
    expect(ten.value).toEqual(range(1, 10));
    expect(ten.work.writeCalls).toBe(11);
    expect(ten.work.writes).toBe(11);
    // The first 1,000 delivered and acknowledged a hundred at a time (a fetch reads every pending
    // item: fetching all before acknowledging made the fetches read 6,600), the last 200 left pending.
    await t.ack('w', range(11, 100));
    for (let from = 101; from <= 1000; from += 100) {
      expect((await t.fetchBatch('w', { batch: 100 })).map((m) => m.seq)).toEqual(range(from, from + 99));
      expect(await t.ack('w', range(from, from + 99))).toHaveLength(100);
    }
    for (let i = 0; i < 2; i++) expect(await t.fetchBatch('w', { batch: 100 })).toHaveLength(100);
    // Delivered and acknowledged already (a run, and scattered ones): read, at most a unit a sequence, and not written.
    for (const seqs of [range(1, 1000), range(0, 999).map((i) => 1 + ((i * 37) % 1000))]) {
      const again = await workOf(t.account, () => t.ack('w', seqs));
      expect(again.value).toEqual([]);
      expect(again.work.writes).toBe(0);
      expect(again.work.reads).toBeLessThanOrEqual(seqs.length);
    }
    const lone = range(0, 20).map((i) => 1 + i * 45);
    const scattered = await workOf(t.account, () => t.ack('w', lone));
    expect(scattered.work.writes).toBe(0);
    expect(scattered.work.reads).toBeLessThanOrEqual(lone.length + 2);
    expect(await t.consumer('w')).toMatchObject({ num_ack_pending: 200, ack_floor: 1000 });
  }, 120_000);

  it('a by_start_time consumer finds its start with a few reads however long the stream (#41)', async () => {
    const t = await tenant();
    // 60 publishes of a 30 KB message each: an item each, 8 read units to read one.
    const big = (n: number) => `${n}:`.padEnd(30_000, 'x');
    for (let n = 1; n <= 55; n++) await t.seqsOf([{ data: big(n) }]);
    await sleep(20);
    const at = new Date().toISOString();
    await sleep(20);
    for (let n = 56; n <= 60; n++) await t.seqsOf([{ data: big(n) }]);
    const { work } = await workOf(t.account, () => t.createConsumer('late', { deliver_policy: 'by_start_time', opt_start_time: at }));
    // A binary search: about log2(60) = 6 items of 8 units (the bound allows 9), against 55 items
    // (440 units) read from the first before.
    expect(work.reads).toBeLessThanOrEqual(9 * 8 + 10);
    expect((await t.fetchBatch('late', { batch: 1 })).map((m) => m.seq)).toEqual([56]);
    const fromTime = await workOf(t.account, () => t.read(`?start_time=${encodeURIComponent(at)}&limit=2`));
    expect(fromTime.value.messages.map((m) => m.seq)).toEqual([56, 57]);
    expect(fromTime.work.reads).toBeLessThanOrEqual(9 * 8 + 3 * 8 + 10);
  }, 120_000);

  it('a fetch of 30 messages of 250 KB answers within the byte budget and claims only what it answers; the rest come next, never dead undelivered (#41)', async () => {
    const t = await tenant();
    const data = (n: number) => `${n}:`.padEnd(250_000, 'x');
    for (let i = 0; i < 3; i++) await t.seqsOf(range(i * 10 + 1, i * 10 + 10).map((n) => ({ data: data(n) })));
    await t.createConsumer('w', { max_deliver: 1, ack_wait_seconds: 600 });
    // What Lambda would carry: the answer's body as a string inside its response.
    const lambdaBytes = (text: string) => Buffer.byteLength(JSON.stringify({ statusCode: 200, headers: { 'content-type': 'application/json' }, body: text }));
    const first = await call(stack, 'POST', `${t.consumerPath('w')}/fetch`, { token: t.token, body: { batch: 30 } });
    expect(first.status).toBe(200);
    expect(lambdaBytes(first.text)).toBeLessThan(MAX_ANSWER_BYTES + 64 * 1024);
    expect(lambdaBytes(first.text)).toBeLessThan(6 * 1024 * 1024);
    const got = first.json.data.messages as { seq: number; data: string; deliveries: number }[];
    expect(got.length).toBeGreaterThanOrEqual(15);
    expect(got.length).toBeLessThan(30);
    expect(got.map((m) => m.seq)).toEqual(range(1, got.length));
    // Only what was answered is pending; the rest are still to be delivered, for the first time.
    expect(await t.consumer('w')).toMatchObject({ num_ack_pending: got.length, delivered_seq: got.length, num_pending: 30 - got.length });
    const rest = await t.fetchBatch('w', { batch: 30 });
    expect(rest.map((m) => [m.seq, m.deliveries])).toEqual(range(got.length + 1, 30).map((seq) => [seq, 1]));
    expect(rest[0]!.data).toBe(data(got.length + 1));
    expect((await call(stack, 'GET', `${t.consumerPath('w')}/dead`, { token: t.token })).json.data.dead).toEqual([]);

    // Reading the stream pages by bytes too, and goes on where the page stopped.
    const page = await call(stack, 'GET', `${t.base}/messages?limit=30`, { token: t.token });
    expect(lambdaBytes(page.text)).toBeLessThan(MAX_ANSWER_BYTES + 64 * 1024);
    const seen = page.json.data.messages.map((m: { seq: number }) => m.seq);
    expect(seen).toEqual(range(1, page.json.data.next_after_seq));
    expect(seen.length).toBeLessThan(30);
    expect((await t.read(`?after_seq=${page.json.data.next_after_seq}&limit=30`)).messages.map((m) => m.seq)).toEqual(range(seen.length + 1, 30));
  }, 120_000);
});
