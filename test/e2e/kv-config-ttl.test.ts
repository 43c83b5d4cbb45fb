import { describe, expect, it } from 'vitest';
import { MAX_VALUE_BYTES, MAX_VALUE_TTL_SECONDS } from '../../functions/domain/kv/limits.js';
import { call, useLocalStack } from '../support/local-stack.js';

// Issue 43, "what people expect of a store": a bucket's configuration changes as a stream's does
// (PUT creates or updates), and a value carries its own TTL (`ttl_seconds` on a put, both key forms).
const stack = useLocalStack();

let counter = 0;
async function bucket(config: Record<string, unknown> = {}) {
  const n = ++counter;
  const token = await stack.token(`kv-config-${n}`);
  const base = `/storage/kv/bucket-${n}`;
  expect((await call(stack, 'PUT', base, { token, body: config })).status).toBe(201);
  const byQuery = (key: string, query = '') => `${base}/value?key=${encodeURIComponent(key)}${query}`;
  const byPath = (key: string, query = '') => `${base}/keys/${encodeURIComponent(encodeURIComponent(key))}${query}`;
  return { token, base, name: `bucket-${n}`, byQuery, byPath };
}

/** Polls until `check` holds; fails after `timeoutMs`. */
async function until(check: () => Promise<boolean>, timeoutMs = 15_000) {
  for (const deadline = Date.now() + timeoutMs; !(await check());) {
    expect(Date.now(), 'condition not reached in time').toBeLessThan(deadline);
    await new Promise((done) => setTimeout(done, 100));
  }
}

describe('PUT /storage/kv/{bucket} on an existing bucket', () => {
  it('replaces its configuration and answers 200 with it; name, created_at and values stay', async () => {
    const { token, base, name, byQuery } = await bucket({ description: 'first', ttl_seconds: 3600 });
    const before = (await call(stack, 'GET', base, { token })).json.data;
    expect((await call(stack, 'PUT', byQuery('kept'), { token, rawBody: 'v' })).status).toBe(200);
    const res = await call(stack, 'PUT', base, { token, body: { description: 'second', max_value_bytes: 1024 } });
    expect(res.status).toBe(200);
    // The body is the whole configuration: ttl_seconds, left out, goes back to none.
    const after = { name, description: 'second', ttl_seconds: null, max_value_bytes: 1024, created_at: before.created_at };
    expect(res.json.data).toEqual(after);
    expect((await call(stack, 'GET', base, { token })).json.data).toEqual(after);
    expect((await call(stack, 'GET', byQuery('kept'), { token })).text).toBe('v');
    expect((await call(stack, 'PUT', byQuery('big'), { token, rawBody: 'x'.repeat(1025) })).status).toBe(413);
    // The listing reads an index that follows writes within moments.
    await until(async () => (await call(stack, 'GET', '/storage/kv', { token })).json.data.buckets[0]?.description === 'second');
  });

  it('an empty PUT puts every setting back to its default', async () => {
    const { token, base } = await bucket({ description: 'd', ttl_seconds: 60, max_value_bytes: 10 });
    const res = await call(stack, 'PUT', base, { token });
    expect(res.status).toBe(200);
    expect(res.json.data).toMatchObject({ description: null, ttl_seconds: null, max_value_bytes: MAX_VALUE_BYTES });
  });

  it.each([['name', { name: 'other' }], ['created_at', { created_at: '2020-01-01T00:00:00Z' }]])(
    'a body setting %s is 400 naming it, and changes nothing', async (field, body) => {
      const { token, base } = await bucket({ description: 'first' });
      const res = await call(stack, 'PUT', base, { token, body: { description: 'second', ...body } });
      expect(res.status).toBe(400);
      expect(res.json.error).toBe('validation_error');
      expect(res.json.message).toContain(`${field} cannot be set`);
      expect((await call(stack, 'GET', base, { token })).json.data.description).toBe('first');
    });

  it('If-None-Match other than * is 400', async () => {
    const { token, base } = await bucket();
    const res = await call(stack, 'PUT', base, { token, headers: { 'if-none-match': '"abc"' } });
    expect(res.status).toBe(400);
    expect(res.json.message).toContain('If-None-Match takes only *');
  });

  it('If-None-Match: * creates a missing bucket (201)', async () => {
    const token = await stack.token('kv-config-create-only');
    const res = await call(stack, 'PUT', '/storage/kv/fresh', { token, headers: { 'if-none-match': '*' } });
    expect(res.status).toBe(201);
  });
});

describe('ttl_seconds on a put', () => {
  it.each(['query', 'path'] as const)('a value with its own TTL expires in a bucket without one (%s form)', async (form) => {
    const { token, base, byQuery, byPath } = await bucket();
    const url = form === 'query' ? byQuery : byPath;
    const key = 'a/b c?%';
    const writtenAt = Date.now();
    const put = await call(stack, 'PUT', url(key, `${form === 'query' ? '&' : '?'}ttl_seconds=1`), { token, rawBody: 'short' });
    expect(put.status).toBe(200);
    expect(put.json.data).toEqual({ key, revision: 1 });
    expect((await call(stack, 'PUT', url('forever'), { token, rawBody: 'v' })).status).toBe(200);
    await until(async () => (await call(stack, 'GET', url(key), { token })).status === 404);
    expect(Date.now() - writtenAt).toBeGreaterThanOrEqual(1000);
    expect((await call(stack, 'GET', `${base}/keys`, { token })).json.data.keys).toEqual(['forever']);
    expect((await call(stack, 'DELETE', url(key), { token })).status).toBe(404);
    expect((await call(stack, 'GET', url('forever'), { token })).text).toBe('v');
  });

  it("a value's TTL overrides the bucket's default, longer or shorter", async () => {
    const { token, base, byQuery } = await bucket({ ttl_seconds: 1 });
    expect((await call(stack, 'PUT', byQuery('long', '&ttl_seconds=3600'), { token, rawBody: 'l' })).status).toBe(200);
    expect((await call(stack, 'PUT', byQuery('default'), { token, rawBody: 'd' })).status).toBe(200);
    await until(async () => (await call(stack, 'GET', byQuery('default'), { token })).status === 404);
    expect((await call(stack, 'GET', byQuery('long'), { token })).text).toBe('l');
    expect((await call(stack, 'GET', `${base}/keys`, { token })).json.data.keys).toEqual(['long']);
  });

  it('a rewrite without ttl_seconds takes the bucket default again (none here)', async () => {
    const { token, byQuery } = await bucket();
    expect((await call(stack, 'PUT', byQuery('k', '&ttl_seconds=1'), { token, rawBody: '1' })).status).toBe(200);
    expect((await call(stack, 'PUT', byQuery('k'), { token, rawBody: '2' })).status).toBe(200);
    const other = byQuery('marker');
    expect((await call(stack, 'PUT', `${other}&ttl_seconds=1`, { token, rawBody: 'm' })).status).toBe(200);
    await until(async () => (await call(stack, 'GET', other, { token })).status === 404);
    expect((await call(stack, 'GET', byQuery('k'), { token })).text).toBe('2');
  });

  it.each(['0', '-1', '1.5', 'abc', '', String(MAX_VALUE_TTL_SECONDS + 1), '99999999999'])('ttl_seconds=%j is 400 naming the bounds, nothing written', async (raw) => {
    const { token, byQuery, byPath } = await bucket();
    for (const url of [byQuery('k', `&ttl_seconds=${raw}`), byPath('k', `?ttl_seconds=${raw}`)]) {
      const res = await call(stack, 'PUT', url, { token, rawBody: 'v' });
      expect([url, res.status, res.json.error]).toEqual([url, 400, 'validation_error']);
      expect(res.json.message).toContain(`from 1 to ${MAX_VALUE_TTL_SECONDS}`);
    }
    expect((await call(stack, 'GET', byQuery('k'), { token })).status).toBe(404);
  });

  it('the largest ttl_seconds is taken', async () => {
    const { token, byQuery } = await bucket();
    expect((await call(stack, 'PUT', byQuery('k', `&ttl_seconds=${MAX_VALUE_TTL_SECONDS}`), { token, rawBody: 'v' })).status).toBe(200);
    expect((await call(stack, 'GET', byQuery('k'), { token })).text).toBe('v');
  });

  it('the key routes stay strict: a repeated ttl_seconds, another parameter, or ttl_seconds on a read is 400', async () => {
    const { token, byQuery, byPath } = await bucket();
    const refused = [
      ['PUT', byQuery('k', '&ttl_seconds=5&ttl_seconds=6')],
      ['PUT', byQuery('k', '&ttl_seconds=5&other=1')],
      ['PUT', byPath('k', '?ttl_seconds=5&other=1')],
      ['PUT', byPath('k', '?ttl_seconds=5&ttl_seconds=6')],
      ['PUT', byPath('k', '?draft')],
      ['GET', byQuery('k', '&ttl_seconds=5')],
      ['GET', byPath('k', '?ttl_seconds=5')],
      ['DELETE', byQuery('k', '&ttl_seconds=5')],
    ] as const;
    for (const [method, url] of refused) {
      const res = await call(stack, method, url, { token, rawBody: method === 'PUT' ? 'v' : undefined });
      expect([method, url, res.status, res.json.error]).toEqual([method, url, 400, 'validation_error']);
    }
    expect((await call(stack, 'GET', byQuery('k'), { token })).status).toBe(404);
  });
});
