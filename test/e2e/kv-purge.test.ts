import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, describe, expect, it } from 'vitest';
import { LOCAL_AWS_ENV } from '../../local/engines.js';
import { call, useLocalStack } from '../support/local-stack.js';

// Short settle time: the sweeper's final pass runs a second after a purge instead of 88 s.
const stack = useLocalStack({ env: { KV_SWEEP_SETTLE_SECONDS: '1' } });
const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };
let doc: DynamoDBDocumentClient | undefined;
let sqs: SQSClient | undefined;
afterAll(() => {
  doc?.destroy();
  sqs?.destroy();
});
const dynamo = () => (doc ??= DynamoDBDocumentClient.from(new DynamoDBClient({ region: LOCAL_AWS_ENV.AWS_REGION, credentials, endpoint: stack.engines.env.AWS_ENDPOINT_URL_DYNAMODB })));
const queue = () => (sqs ??= new SQSClient({ region: LOCAL_AWS_ENV.AWS_REGION, credentials, endpoint: stack.engines.env.AWS_ENDPOINT_URL_SQS }));
const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

let counter = 0;
async function tenant(config: Record<string, unknown> = {}) {
  const n = ++counter;
  const account = `purge-user-${n}`;
  const token = await stack.token(account);
  const bucket = `bucket-${n}`;
  const base = `/storage/kv/${bucket}`;
  expect((await call(stack, 'PUT', base, { token, body: config })).status).toBe(201);
  const keyPath = (key: string) => `${base}/keys/${key.split('/').map(encodeURIComponent).join('/')}`;
  return {
    account, token, bucket, base,
    put: (key: string, value = `value of ${key}`) => call(stack, 'PUT', keyPath(key), { token, rawBody: value, headers: { 'content-type': 'text/plain' } }),
    get: (key: string) => call(stack, 'GET', keyPath(key), { token }),
    purge: () => call(stack, 'DELETE', `${base}/purge`, { token }),
    async listAll(): Promise<string[]> {
      const keys: string[] = [];
      let cursor: string | null = null;
      do {
        const res = await call(stack, 'GET', `${base}/keys?limit=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { token });
        keys.push(...res.json.data.keys);
        cursor = res.json.data.next_cursor;
      } while (cursor);
      return keys;
    },
  };
}

/** The data partitions the table holds for a bucket, and the one that is current (undefined once deleted). */
async function partitionsOf(account: string, bucket: string) {
  const table = stack.engines.env.KV_TABLE!;
  const meta = (await dynamo().send(new GetCommand({ TableName: table, Key: { pk: `BUCKET#${account}#${bucket}`, sk: '#META' }, ConsistentRead: true }))).Item;
  const prefix = `DATA#${account}#${bucket}#`;
  const pks = new Set<string>();
  let start: Record<string, unknown> | undefined;
  do {
    const page = await dynamo().send(new ScanCommand({ TableName: table, FilterExpression: 'begins_with(pk, :prefix)', ExpressionAttributeValues: { ':prefix': prefix }, ExclusiveStartKey: start, ConsistentRead: true }));
    for (const item of page.Items ?? []) pks.add(item.pk as string);
    start = page.LastEvaluatedKey;
  } while (start);
  return { all: [...pks], current: meta ? `${prefix}${meta.generation}` : undefined };
}

async function sweepQueueIsEmpty(): Promise<boolean> {
  const { Attributes = {} } = await queue().send(new GetQueueAttributesCommand({ QueueUrl: stack.queueUrls.kvSweep, AttributeNames: ['All'] }));
  const counts = [Attributes.ApproximateNumberOfMessages, Attributes.ApproximateNumberOfMessagesNotVisible, Attributes.ApproximateNumberOfMessagesDelayed];
  return counts.every((count) => Number(count ?? 0) === 0);
}

/** Waits until the sweeper has finished (queue drained, final passes included) and only the current generation holds items. */
async function sweptDown(account: string, bucket: string) {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const { all, current } = await partitionsOf(account, bucket);
    const stale = all.filter((pk) => pk !== current);
    if (stale.length === 0 && (await sweepQueueIsEmpty())) return { all, current };
    if (Date.now() > deadline) throw new Error(`old generations still hold items: ${stale.join(', ')}`);
    await sleep(250);
  }
}

describe('DELETE /storage/kv/{bucket}/purge', () => {
  it('answers 200 with a top-level message naming the bucket', async () => {
    const { bucket, purge } = await tenant();
    const res = await purge();
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(Object.keys(res.json)).toEqual(['message']);
    expect(res.json.message).toMatch(new RegExp(`^Bucket '${bucket}' purged`));
  });

  it('afterwards every earlier key reads 404 and the listing is empty', async () => {
    const t = await tenant();
    for (const key of ['a', 'b/c', 'd']) await t.put(key);
    await t.purge();
    for (const key of ['a', 'b/c', 'd']) expect((await t.get(key)).json).toEqual({ error: 'not_found', message: expect.any(String) });
    expect(await t.listAll()).toEqual([]);
  });

  it('keeps the configuration exactly as it was', async () => {
    const t = await tenant({ description: 'keep me', ttl_seconds: 600, max_value_bytes: 64 });
    const before = await call(stack, 'GET', t.base, { token: t.token });
    await t.put('k');
    await t.purge();
    expect((await call(stack, 'GET', t.base, { token: t.token })).json).toEqual(before.json);
    expect((await t.put('k', 'x'.repeat(65))).status).toBe(413);
  });

  it('keys written after it are visible as usual, from revision 1', async () => {
    const t = await tenant();
    await t.put('k', 'old');
    await t.put('k', 'old');
    await t.purge();
    expect((await t.put('k', 'new')).json.data.revision).toBe(1);
    expect((await t.get('k')).text).toBe('new');
    expect(await t.listAll()).toEqual(['k']);
  });

  it('of an empty bucket succeeds, and a bucket can be purged again and again', async () => {
    const t = await tenant();
    for (let i = 0; i < 3; i++) {
      await t.put(`k${i}`);
      expect((await t.purge()).status).toBe(200);
    }
    expect(await t.listAll()).toEqual([]);
  });

  it('of a missing bucket is 404, of a malformed name 400, without credentials 401', async () => {
    const token = await stack.token('purge-nobody');
    expect((await call(stack, 'DELETE', '/storage/kv/never-created/purge', { token })).json).toEqual({ error: 'not_found', message: expect.any(String) });
    expect((await call(stack, 'DELETE', '/storage/kv/bad.name/purge', { token })).json).toEqual({ error: 'validation_error', message: expect.any(String) });
    expect((await call(stack, 'DELETE', '/storage/kv/never-created/purge')).status).toBe(401);
  });

  it('another account’s purge of the same path is 404 and removes nothing', async () => {
    const owner = await tenant();
    await owner.put('k');
    const res = await call(stack, 'DELETE', `${owner.base}/purge`, { token: await stack.token('purge-intruder') });
    expect(res.status).toBe(404);
    expect(res.json).toEqual({ error: 'not_found', message: expect.any(String) });
    expect((await owner.get('k')).status).toBe(200);
  });

  it('the old generation is reclaimed in the background: no item of it remains', async () => {
    const t = await tenant();
    await Promise.all(Array.from({ length: 120 }, (_, i) => t.put(`k${i}`)));
    const before = await partitionsOf(t.account, t.bucket);
    expect(before.all).toEqual([before.current]);
    await t.purge();
    await t.put('after');
    const after = await sweptDown(t.account, t.bucket);
    expect(after.current).not.toBe(before.current);
    expect(after.all).toEqual([after.current]);
    expect(await t.listAll()).toEqual(['after']);
  });

  it('a deleted bucket’s data is reclaimed too', async () => {
    const t = await tenant();
    await Promise.all(Array.from({ length: 40 }, (_, i) => t.put(`k${i}`)));
    expect((await call(stack, 'DELETE', t.base, { token: t.token })).status).toBe(204);
    expect(await sweptDown(t.account, t.bucket)).toEqual({ all: [], current: undefined });
  });
});

describe('purges racing writes', () => {
  it('two purges at once amid writes: nothing from before survives, nothing written after is lost, before and after the sweep', async () => {
    const t = await tenant();
    const before = Array.from({ length: 40 }, (_, i) => `before/${i}`);
    await Promise.all(before.map((key) => t.put(key)));

    const writes: { key: string; started: number; status?: number }[] = [];
    let writing = true;
    const writer = async (w: number) => {
      for (let i = 0; writing; i++) {
        const write: (typeof writes)[number] = { key: `w${w}/${i}`, started: performance.now() };
        writes.push(write);
        write.status = (await t.put(write.key)).status;
      }
    };
    const writers = Array.from({ length: 6 }, (_, w) => writer(w));
    // Wait for writes rather than for time, so a busy machine cannot leave either window empty.
    const until = async (enough: () => boolean) => {
      while (!enough()) await sleep(10);
    };
    await until(() => writes.filter((w) => w.status !== undefined).length >= 10);
    const purged = await Promise.all([t.purge(), t.purge()].map(async (request) => ({ status: (await request).status, at: performance.now() })));
    const afterBoth = Math.max(...purged.map((p) => p.at));
    await until(() => writes.filter((w) => w.started > afterBoth && w.status !== undefined).length >= 10);
    writing = false;
    await Promise.all(writers);

    expect(purged.map((p) => p.status)).toEqual([200, 200]);
    expect(writes.every((w) => w.status === 200)).toBe(true);
    const startedBefore = writes.filter((w) => w.started < afterBoth).map((w) => w.key);
    const startedAfter = writes.filter((w) => w.started > afterBoth).map((w) => w.key);
    expect(startedBefore.length).toBeGreaterThan(5);
    expect(startedAfter.length).toBeGreaterThan(5);

    const check = async () => {
      const listed = new Set(await t.listAll());
      for (const key of before) expect(listed.has(key), `${key} came back`).toBe(false);
      for (const key of startedAfter) expect(listed.has(key), `${key} was lost`).toBe(true);
      // Writes concurrent with the purges may land on either side, but never half: listed means readable.
      for (const key of listed) expect((await t.get(key)).status, `${key} listed but unreadable`).toBe(200);
      for (const key of before.slice(0, 5)) expect((await t.get(key)).status).toBe(404);
      return listed;
    };
    const listedBeforeSweep = await check();
    await sweptDown(t.account, t.bucket);
    const listedAfterSweep = await check();
    expect([...listedAfterSweep].sort()).toEqual([...listedBeforeSweep].sort());
  });
});
