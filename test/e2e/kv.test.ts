import { describe, expect, it } from 'vitest';
import { MAX_VALUE_BYTES } from '../../functions/domain/kv/limits.js';
import { call, useLocalStack } from '../support/local-stack.js';
import { openApiDocument, schemaAccepts } from '../support/openapi.js';

const stack = useLocalStack({ env: { KV_SWEEP_SETTLE_SECONDS: '1' } });

let counter = 0;
/** A fresh account with its own bucket name, and helpers bound to it. */
async function tenant(options: { create?: boolean | Record<string, unknown> } = { create: true }) {
  const n = ++counter;
  const token = await stack.token(`kv-user-${n}`);
  const bucket = `bucket-${n}`;
  const base = `/storage/kv/${bucket}`;
  const keyPath = (key: string) => `${base}/keys/${key.split('/').map(encodeURIComponent).join('/')}`;
  if (options.create) {
    const res = await call(stack, 'PUT', base, { token, body: options.create === true ? {} : options.create });
    expect(res.status).toBe(201);
  }
  const put = (key: string, value: string | Uint8Array, contentType?: string) =>
    call(stack, 'PUT', keyPath(key), { token, rawBody: value, headers: contentType ? { 'content-type': contentType } : {} });
  const get = (key: string) => call(stack, 'GET', keyPath(key), { token });
  const list = (query = '') => call(stack, 'GET', `${base}/keys${query}`, { token });
  return { token, bucket, base, keyPath, put, get, list };
}

describe('buckets', () => {
  it('PUT creates a bucket with defaults and answers 201 with it', async () => {
    const { token, bucket, base } = await tenant({ create: false });
    const res = await call(stack, 'PUT', base, { token });
    expect(res.status).toBe(201);
    expect(res.json.data).toEqual({ name: bucket, description: null, ttl_seconds: null, max_value_bytes: MAX_VALUE_BYTES, created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) });
  });

  it('PUT stores the configuration and GET returns it with created_at', async () => {
    const { token, bucket, base } = await tenant({ create: false });
    const config = { description: 'session cache', ttl_seconds: 3600, max_value_bytes: 2048 };
    const created = await call(stack, 'PUT', base, { token, body: config });
    const read = await call(stack, 'GET', base, { token });
    expect(read.status).toBe(200);
    expect(read.json.data).toEqual({ name: bucket, ...config, created_at: created.json.data.created_at });
  });

  it('PUT of an existing bucket with If-None-Match: * is 409 already_exists and leaves it unchanged', async () => {
    const { token, base } = await tenant({ create: { description: 'first' } });
    const res = await call(stack, 'PUT', base, { token, body: { description: 'second' }, headers: { 'if-none-match': '*' } });
    expect(res.status).toBe(409);
    expect(res.json).toEqual({ error: 'already_exists', message: expect.any(String) });
    expect((await call(stack, 'GET', base, { token })).json.data.description).toBe('first');
  });

  it.each([
    ['an unknown field', { colour: 'red' }],
    ['max_value_bytes above what one item holds', { max_value_bytes: MAX_VALUE_BYTES + 1 }],
    ['ttl_seconds that is not a positive integer', { ttl_seconds: 0 }],
    ['a body that is not an object', [1]],
  ])('PUT with %s is 400 validation_error', async (_name, body) => {
    const { token, base } = await tenant({ create: false });
    const res = await call(stack, 'PUT', base, { token, body });
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({ error: 'validation_error' });
    expect((await call(stack, 'GET', base, { token })).status).toBe(404);
  });

  it.each(['a.b', 'x'.repeat(65), 'caf%C3%A9', 'a%23b'])('a bucket name like %j is 400 on every route', async (name) => {
    const token = await stack.token('kv-names');
    for (const [method, suffix] of [['PUT', ''], ['GET', ''], ['DELETE', ''], ['DELETE', '/purge'], ['GET', '/keys'], ['PUT', '/keys/k'], ['GET', '/keys/k'], ['DELETE', '/keys/k']]) {
      const res = await call(stack, method!, `/storage/kv/${name}${suffix}`, { token });
      expect([method, suffix, res.status, res.json]).toEqual([method, suffix, 400, { error: 'validation_error', message: expect.any(String) }]);
    }
  });

  it('DELETE answers 204, then the bucket and its values are gone', async () => {
    const { token, base, put, get } = await tenant();
    await put('k', 'v');
    const res = await call(stack, 'DELETE', base, { token });
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect((await call(stack, 'GET', base, { token })).status).toBe(404);
    expect((await get('k')).json).toEqual({ error: 'not_found', message: expect.any(String) });
    expect((await call(stack, 'DELETE', base, { token })).status).toBe(404);
  });

  it('a bucket created again after a delete is empty', async () => {
    const { token, base, put, get, list } = await tenant();
    await put('k', 'v');
    await call(stack, 'DELETE', base, { token });
    expect((await call(stack, 'PUT', base, { token })).status).toBe(201);
    expect((await get('k')).status).toBe(404);
    expect((await list()).json.data.keys).toEqual([]);
  });
});

describe('values', () => {
  it('PUT answers the key and a revision that counts up', async () => {
    const { put } = await tenant();
    const first = await put('greeting', 'hello', 'text/plain');
    expect(first.status).toBe(200);
    expect(first.json).toEqual({ data: { key: 'greeting', revision: 1 } });
    expect((await put('greeting', 'hello again', 'text/plain')).json.data.revision).toBe(2);
  });

  it('GET returns the bytes with the stored content type', async () => {
    const { put, get } = await tenant();
    await put('doc', '{"a":1}', 'application/json; charset=utf-8');
    const res = await get('doc');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(res.text).toBe('{"a":1}');
  });

  it('binary values come back byte for byte, as application/octet-stream without a content type', async () => {
    const { token, put, keyPath } = await tenant();
    const bytes = new Uint8Array(Array.from({ length: 512 }, (_, i) => i % 256));
    await put('blob', bytes);
    const res = await fetch(stack.baseUrl + keyPath('blob'), { headers: { authorization: `Bearer ${token}` } });
    expect(res.headers.get('content-type')).toBe('application/octet-stream');
    expect(new Uint8Array(await res.arrayBuffer())).toEqual(bytes);
  });

  it('an empty value is a value', async () => {
    const { put, get } = await tenant();
    expect((await put('empty', new Uint8Array(0))).status).toBe(200);
    const res = await get('empty');
    expect(res.status).toBe(200);
    expect(res.text).toBe('');
  });

  it('keys may hold slashes, spaces and any UTF-8 text', async () => {
    const { put, get, list } = await tenant();
    const key = 'users/Zoë Ünal/日本/😀 notes.txt';
    expect((await put(key, 'x')).json.data.key).toBe(key);
    expect((await get(key)).text).toBe('x');
    expect((await list()).json.data.keys).toEqual([key]);
  });

  it('a key of 1024 UTF-8 bytes is accepted and one of 1025 is 400', async () => {
    const { put } = await tenant();
    expect((await put('é'.repeat(512), 'v')).status).toBe(200);
    const res = await put('é'.repeat(512) + 'x', 'v');
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ error: 'validation_error', message: expect.any(String) });
  });

  it.each([['a NUL', '%00'], ['a tab', 'a%09b'], ['DEL', 'a%7F'], ['a C1 control', 'a%C2%85'], ['a .. segment', 'a%2F..%2Fb'], ['a . segment', '.%2Fa']])(
    'a key with %s is 400 on PUT, GET and DELETE', async (_name, encoded) => {
      const { token, base } = await tenant();
      for (const method of ['PUT', 'GET', 'DELETE']) {
        const res = await call(stack, method, `${base}/keys/${encoded}`, { token, rawBody: method === 'GET' ? undefined : 'v' });
        expect([method, res.status, res.json]).toEqual([method, 400, { error: 'validation_error', message: expect.any(String) }]);
      }
    });

  it('GET and DELETE of a missing key are 404 not_found', async () => {
    const { token, get, keyPath } = await tenant();
    expect((await get('nope')).json).toEqual({ error: 'not_found', message: expect.any(String) });
    const res = await call(stack, 'DELETE', keyPath('nope'), { token });
    expect(res.status).toBe(404);
    expect(res.json).toEqual({ error: 'not_found', message: expect.any(String) });
  });

  it('DELETE answers 204 and the key is gone', async () => {
    const { token, put, get, keyPath } = await tenant();
    await put('k', 'v');
    expect((await call(stack, 'DELETE', keyPath('k'), { token })).status).toBe(204);
    expect((await get('k')).status).toBe(404);
    expect((await put('k', 'v')).json.data.revision).toBe(1);
  });

  it('a value over the bucket’s max_value_bytes is 413 payload_too_large; one at the limit is stored', async () => {
    const { put } = await tenant({ create: { max_value_bytes: 10 } });
    const over = await put('k', 'x'.repeat(11));
    expect(over.status).toBe(413);
    expect(over.json).toEqual({ error: 'payload_too_large', message: "the value is over the bucket's max_value_bytes (10)" });
    expect((await put('k', 'x'.repeat(10))).status).toBe(200);
  });

  it('by default a bucket takes values up to MAX_VALUE_BYTES', async () => {
    const { put } = await tenant();
    expect((await put('big', new Uint8Array(MAX_VALUE_BYTES + 1))).status).toBe(413);
    expect((await put('big', new Uint8Array(MAX_VALUE_BYTES))).status).toBe(200);
  });

  it('with ttl_seconds, a value reads, lists and deletes as missing once it expires', async () => {
    const TTL_SECONDS = 2;
    const { token, put, get, list, keyPath } = await tenant({ create: { ttl_seconds: TTL_SECONDS } });
    const writtenAt = Date.now();
    await put('short', 'v');
    await put('short-2', 'v');
    const fresh = await get('short');
    // A value lives at least its TTL; on a busy machine the two writes and the read may take longer
    // than that, and then 404 is right too. So the read is only asserted while the TTL surely holds.
    if (Date.now() - writtenAt < TTL_SECONDS * 1000) expect(fresh.status).toBe(200);
    const bothExpired = async () => (await get('short')).status === 404 && (await list()).json.data.keys.length === 0;
    for (const deadline = Date.now() + TTL_SECONDS * 1000 + 10_000; !(await bothExpired());) {
      expect(Date.now()).toBeLessThan(deadline);
      await new Promise((done) => setTimeout(done, 100));
    }
    // Never before its TTL: expiry rounds up to whole seconds.
    expect(Date.now() - writtenAt).toBeGreaterThanOrEqual(TTL_SECONDS * 1000);
    expect((await call(stack, 'DELETE', keyPath('short-2'), { token })).status).toBe(404);
  });
});

describe('listing', () => {
  it('lists keys in key order under data.keys with next_cursor null on the last page', async () => {
    const { put, list } = await tenant();
    for (const key of ['b', 'a/2', 'a/1', 'C']) await put(key, 'v');
    const res = await list();
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ data: { keys: ['C', 'a/1', 'a/2', 'b'], next_cursor: null } });
  });

  it('prefix narrows the listing', async () => {
    const { put, list } = await tenant();
    for (const key of ['logs/1', 'logs/2', 'logsX', 'other']) await put(key, 'v');
    expect((await list('?prefix=logs%2F')).json.data.keys).toEqual(['logs/1', 'logs/2']);
  });

  it('limit and cursor page through every key exactly once', async () => {
    const { put, list } = await tenant();
    const keys = Array.from({ length: 7 }, (_, i) => `k${i}`);
    for (const key of keys) await put(key, 'v');
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res = await list(`?limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(res.json.data.keys.length).toBeLessThanOrEqual(3);
      seen.push(...res.json.data.keys);
      cursor = res.json.data.next_cursor;
    } while (cursor);
    expect(seen).toEqual(keys);
  });

  it('pages hold 100 keys by default', async () => {
    const { put, list } = await tenant();
    await Promise.all(Array.from({ length: 101 }, (_, i) => put(`k${String(i).padStart(3, '0')}`, 'v')));
    const first = await list();
    expect(first.json.data.keys).toHaveLength(100);
    expect(first.json.data.next_cursor).toEqual(expect.any(String));
    expect((await list(`?cursor=${encodeURIComponent(first.json.data.next_cursor)}`)).json.data.keys).toEqual(['k100']);
  });

  it.each(['0', '1001', 'ten', '-1'])('limit=%s is 400 (pages hold at most 1,000 keys)', async (limit) => {
    const { list } = await tenant();
    const res = await list(`?limit=${limit}`);
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ error: 'validation_error', message: 'limit must be an integer from 1 to 1000' });
  });

  it('limit=1000 is accepted', async () => expect((await (await tenant()).list('?limit=1000')).status).toBe(200));

  it('a cursor that is not one of ours is 400', async () => {
    const { list } = await tenant();
    expect((await list('?cursor=garbage')).json).toEqual({ error: 'validation_error', message: 'cursor is not valid' });
  });
});

describe('GET /storage/kv', () => {
  it('lists the caller\'s buckets in name order with their configuration, paged with limit and cursor', async () => {
    const token = await stack.token('kv-bucket-lister');
    for (const name of ['c-bucket', 'a-bucket', 'b-bucket']) {
      expect((await call(stack, 'PUT', `/storage/kv/${name}`, { token, body: name === 'b-bucket' ? { description: 'second', ttl_seconds: 60 } : {} })).status).toBe(201);
    }
    await call(stack, 'PUT', '/storage/kv/other-account', { token: await stack.token('kv-bucket-other') });
    const first = await call(stack, 'GET', '/storage/kv?limit=2', { token });
    expect(first.status).toBe(200);
    expect(first.json.data.buckets.map((b: { name: string }) => b.name)).toEqual(['a-bucket', 'b-bucket']);
    expect(first.json.data.buckets[1]).toEqual({ name: 'b-bucket', description: 'second', ttl_seconds: 60, max_value_bytes: MAX_VALUE_BYTES, created_at: expect.any(String) });
    const second = await call(stack, 'GET', `/storage/kv?limit=2&cursor=${first.json.data.next_cursor}`, { token });
    expect(second.json.data).toEqual({ buckets: [expect.objectContaining({ name: 'c-bucket' })], next_cursor: null });
    // Both pages are what /openapi.json says the route answers.
    const documented = schemaAccepts(openApiDocument.paths['/storage/kv'].get.responses['200'].content['application/json'].schema);
    expect(documented(first.json)).toBe(true);
    expect(documented(second.json)).toBe(true);
    expect(documented({ data: { buckets: [{ name: 'x' }], next_cursor: null } })).toBe(false);
  });

  it('is empty for an account without buckets, 400 for a bad limit or cursor, 401 without credentials', async () => {
    const token = await stack.token('kv-no-buckets');
    expect((await call(stack, 'GET', '/storage/kv', { token })).json).toEqual({ data: { buckets: [], next_cursor: null } });
    expect((await call(stack, 'GET', '/storage/kv?limit=0', { token })).json).toEqual({ error: 'validation_error', message: expect.any(String) });
    expect((await call(stack, 'GET', '/storage/kv?cursor=garbage', { token })).json).toEqual({ error: 'validation_error', message: 'cursor is not valid' });
    expect((await call(stack, 'GET', '/storage/kv')).json).toEqual({ error: 'unauthorized', message: expect.any(String) });
  });
});

const ROUTES: [string, string][] = [
  ['PUT', ''], ['GET', ''], ['DELETE', ''], ['DELETE', '/purge'],
  ['GET', '/keys'], ['PUT', '/keys/some/key'], ['GET', '/keys/some/key'], ['DELETE', '/keys/some/key'],
];

describe('access', () => {
  it.each(ROUTES)('%s /storage/kv/{bucket}%s without credentials is 401 unauthorized', async (method, suffix) => {
    const res = await call(stack, method, `/storage/kv/anything${suffix}`, method === 'GET' ? {} : { body: {} });
    expect(res.status).toBe(401);
    expect(res.json).toEqual({ error: 'unauthorized', message: expect.any(String) });
  });

  it('every route answers 404 for another account’s bucket and leaves it untouched', async () => {
    const owner = await tenant({ create: { description: 'mine' } });
    await owner.put('some/key', 'secret');
    const intruder = await stack.token('kv-intruder');
    for (const [method, suffix] of ROUTES.filter(([m, s]) => !(m === 'PUT' && s === ''))) {
      const res = await call(stack, method, `${owner.base}${suffix}`, { token: intruder, rawBody: method === 'GET' ? undefined : 'overwrite' });
      expect([method, suffix, res.status, res.json]).toEqual([method, suffix, 404, { error: 'not_found', message: expect.any(String) }]);
    }
    expect((await owner.get('some/key')).text).toBe('secret');
    expect((await call(stack, 'GET', owner.base, { token: owner.token })).json.data.description).toBe('mine');
    // The same name is free in the intruder's own account.
    expect((await call(stack, 'PUT', owner.base, { token: intruder })).status).toBe(201);
    expect((await call(stack, 'GET', `${owner.base}/keys`, { token: intruder })).json.data.keys).toEqual([]);
    expect((await owner.list()).json.data.keys).toEqual(['some/key']);
  });

  it('an API key reaches the buckets of its account', async () => {
    const owner = await tenant();
    await owner.put('k', 'v');
    const { api_key: apiKey } = (await call(stack, 'POST', '/api-keys', { token: owner.token })).json.data;
    const res = await call(stack, 'GET', owner.keyPath('k'), { apiKey });
    expect(res.status).toBe(200);
    expect(res.text).toBe('v');
  });
});
