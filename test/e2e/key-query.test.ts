import { describe, expect, it } from 'vitest';
import { call, useLocalStack } from '../support/local-stack.js';

/**
 * Keys in `?key=`, the form of every key route that survives the single encoding curl, fetch and
 * generated clients apply (issue 41, item 20). API Gateway cuts a key in the path at an encoded
 * `?` before the function runs (local/api-gateway.ts), so the path form, encoded twice, is kept
 * for existing callers and refuses what it can see was cut: a URL with a query string.
 */
const stack = useLocalStack();

/** Keys with every character a URL treats specially. */
const KEYS: Record<string, string> = {
  '/': 'a/b/c',
  space: 'my file .txt',
  '%': '100% done, %41 and %2F stay',
  '?': 'report?draft=1',
  'a/b?c': 'a/b?c',
  '#': 'notes#section-2',
  '+': 'a+b=c',
  '&': 'tom&jerry=1',
  Unicode: 'Zoë Ünal/日本/😀',
  'all of them': '?#%/ +é/%25?#&=',
};
const cases = Object.entries(KEYS);

/** The key as curl --data-urlencode, fetch's URLSearchParams or encodeURIComponent send it: encoded once. */
const ENCODERS: Record<string, (key: string) => string> = {
  encodeURIComponent: (key) => `key=${encodeURIComponent(key)}`,
  URLSearchParams: (key) => new URLSearchParams({ key }).toString(),
};
const twice = (key: string) => key.split('/').map((segment) => encodeURIComponent(encodeURIComponent(segment))).join('/');
const byteOrder = (keys: string[]) => [...keys].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));

let counter = 0;
async function kvTenant(config: Record<string, unknown> = {}) {
  const n = ++counter;
  const token = await stack.token(`key-query-kv-${n}`);
  const base = `/storage/kv/b${n}`;
  expect((await call(stack, 'PUT', base, { token, body: config })).status).toBe(201);
  const value = (query: string) => `${base}/value?${query}`;
  return {
    token, base,
    put: (query: string, body: string) => call(stack, 'PUT', value(query), { token, rawBody: body, headers: { 'content-type': 'text/plain' } }),
    get: (query: string) => call(stack, 'GET', value(query), { token }),
    remove: (query: string) => call(stack, 'DELETE', value(query), { token }),
    keys: async () => (await call(stack, 'GET', `${base}/keys`, { token })).json.data.keys as string[],
  };
}

async function objectTenant() {
  const n = ++counter;
  const token = await stack.token(`key-query-objects-${n}`);
  const base = `/storage/objects/s${n}`;
  expect((await call(stack, 'PUT', base, { token })).status).toBe(201);
  const object = (query: string) => `${base}/object?${query}`;
  return {
    token, base,
    put: (query: string, body: string) => call(stack, 'PUT', object(query), { token, rawBody: body, headers: { 'content-type': 'text/plain', 'x-meta-note': 'kept' } }),
    get: (query: string) => call(stack, 'GET', object(query), { token }),
    head: (query: string) => call(stack, 'HEAD', object(query), { token }),
    url: (query: string) => call(stack, 'POST', `${base}/object/url?${query}`, { token, body: { expires_in: 60 } }),
    remove: (query: string) => call(stack, 'DELETE', object(query), { token }),
    keys: async () => (await call(stack, 'GET', `${base}/objects`, { token })).json.data.objects.map((o: { key: string }) => o.key) as string[],
  };
}

describe('a KV key in ?key=, encoded once', () => {
  it.each(cases)('with %s is written, read, listed and deleted as exactly that key', async (_what, key) => {
    const t = await kvTenant();
    for (const [how, encode] of Object.entries(ENCODERS)) {
      const written = await t.put(encode(key), `${how}: ${key}`);
      expect([written.status, written.json], how).toEqual([200, { data: { key, revision: how === 'encodeURIComponent' ? 1 : 2 } }]);
      expect((await t.get(encode(key))).text, how).toBe(`${how}: ${key}`);
    }
    expect(await t.keys()).toEqual([key]);
    // The same key as the path form names it, encoded twice.
    expect((await call(stack, 'GET', `${t.base}/keys/${twice(key)}`, { token: t.token })).text).toBe(`URLSearchParams: ${key}`);
    expect((await t.remove(ENCODERS.encodeURIComponent!(key))).status).toBe(204);
    expect((await t.get(ENCODERS.URLSearchParams!(key))).status).toBe(404);
    expect(await t.keys()).toEqual([]);
  });

  it("with ttl_seconds, a key with ? and % expires as that key", async () => {
    const TTL_SECONDS = 2;
    const t = await kvTenant({ ttl_seconds: TTL_SECONDS });
    const key = 'report?draft 100%';
    const writtenAt = Date.now();
    expect((await t.put(ENCODERS.encodeURIComponent!(key), 'v')).json).toEqual({ data: { key, revision: 1 } });
    const fresh = await t.get(ENCODERS.encodeURIComponent!(key));
    // On a busy machine the write and the read may outlast the TTL, and 404 is right then too.
    if (Date.now() - writtenAt < TTL_SECONDS * 1000) expect(fresh.text).toBe('v');
    for (const deadline = Date.now() + TTL_SECONDS * 1000 + 10_000; (await t.get(ENCODERS.encodeURIComponent!(key))).status !== 404;) {
      expect(Date.now()).toBeLessThan(deadline);
      await new Promise((done) => setTimeout(done, 100));
    }
    expect(Date.now() - writtenAt).toBeGreaterThanOrEqual(TTL_SECONDS * 1000);
    expect(await t.keys()).toEqual([]);
  });

  it.each([
    ['no key parameter', ''],
    ['an empty key', 'key='],
    ['key given twice', 'key=a&key=b'],
    ['an & of the key sent unencoded', 'key=tom&jerry'],
    ['another parameter beside key', 'key=a&prefix=b'],
    ['a % without two hex digits after it', 'key=100%'],
    ['percent-encoding that is not UTF-8', 'key=%E0%A4'],
    ['a .. segment', 'key=a%2F..%2Fb'],
  ])('%s is 400 and writes nothing', async (_what, query) => {
    const t = await kvTenant();
    const res = await t.put(query, 'v');
    expect([res.status, res.json.error]).toEqual([400, 'validation_error']);
    expect(await t.keys()).toEqual([]);
  });

  it('a refused ?key= says what to send in its message', async () => {
    const t = await kvTenant();
    expect((await t.get('key=tom&jerry')).json.message).toMatch(/%26.*GET \/storage\/kv\/\{bucket\}\/value\?key=/);
    expect((await t.get('')).json.message).toContain('?key=<the key, percent-encoded once>');
  });
});

describe('an object key in ?key=, encoded once', () => {
  it.each(cases)('with %s is written, read, HEAD, signed into a URL, listed and deleted as exactly that key', async (_what, key) => {
    const t = await objectTenant();
    const query = ENCODERS.URLSearchParams!(key);
    const written = await t.put(query, `value of ${key}`);
    expect([written.status, written.json.data?.key]).toEqual([200, key]);
    const read = await t.get(ENCODERS.encodeURIComponent!(key));
    expect([read.status, read.text, read.headers.get('x-meta-note')]).toEqual([200, `value of ${key}`, 'kept']);
    const head = await t.head(query);
    expect([head.status, head.headers.get('content-length')]).toEqual([200, String(Buffer.byteLength(`value of ${key}`))]);
    const signed = await t.url(query);
    expect([signed.status, signed.json.data.object.key]).toEqual([200, key]);
    expect(await (await fetch(signed.json.data.url)).text()).toBe(`value of ${key}`);
    expect(await t.keys()).toEqual([key]);
    // The same object through the path form, encoded twice.
    expect((await call(stack, 'GET', `${t.base}/objects/${twice(key)}`, { token: t.token })).text).toBe(`value of ${key}`);
    expect((await t.remove(query)).status).toBe(204);
    expect((await t.head(query)).status).toBe(404);
    expect(await t.keys()).toEqual([]);
  });

  it('keys that differ only where a single-encoded path would cut them stay apart', async () => {
    const t = await objectTenant();
    const keys = ['report', 'report?draft', 'a/b', 'a/b?c', 'a/b#c'];
    for (const key of keys) expect((await t.put(ENCODERS.encodeURIComponent!(key), key)).status).toBe(200);
    expect(await t.keys()).toEqual(byteOrder(keys));
    for (const key of keys) expect((await t.get(ENCODERS.encodeURIComponent!(key))).text).toBe(key);
  });

  it('a missing, repeated or mixed ?key= is 400 naming the form, and stores nothing', async () => {
    const t = await objectTenant();
    for (const query of ['', 'key=a&key=b', 'key=a&b', 'key=%ZZ']) {
      const res = await t.put(query, 'v');
      expect([res.status, res.json.error], query).toEqual([400, 'validation_error']);
      expect(res.json.message, query).toContain('PUT /storage/objects/{store}/object?key=');
    }
    expect((await t.url('key=a&b')).json.message).toContain('POST /storage/objects/{store}/object/url?key=');
    expect(await t.keys()).toEqual([]);
  });
});

describe('the path form, kept for existing callers', () => {
  it('a key encoded twice still works on KV and object routes', async () => {
    const kv = await kvTenant();
    const key = 'a/b?c 100%';
    expect((await call(stack, 'PUT', `${kv.base}/keys/${twice(key)}`, { token: kv.token, rawBody: 'v' })).json).toEqual({ data: { key, revision: 1 } });
    expect((await kv.get(ENCODERS.encodeURIComponent!(key))).text).toBe('v');
    const objects = await objectTenant();
    expect((await call(stack, 'PUT', `${objects.base}/objects/${twice(key)}`, { token: objects.token, rawBody: 'v' })).json.data.key).toBe(key);
    const signed = await call(stack, 'POST', `${objects.base}/objects/${twice(key)}/url`, { token: objects.token });
    expect(await (await fetch(signed.json.data.url)).text()).toBe('v');
  });

  it('a key whose ? was sent unencoded (the URL has a query string) is 400 naming ?key=, and nothing is written', async () => {
    const kv = await kvTenant();
    const refused = await call(stack, 'PUT', `${kv.base}/keys/report?draft`, { token: kv.token, rawBody: 'v' });
    expect([refused.status, refused.json.error]).toEqual([400, 'validation_error']);
    expect(refused.json.message).toContain('PUT /storage/kv/{bucket}/value?key=<the key, percent-encoded once>');
    expect(await kv.keys()).toEqual([]);
    expect((await call(stack, 'GET', `${kv.base}/keys/a/b?c`, { token: kv.token })).status).toBe(400);
    expect((await call(stack, 'DELETE', `${kv.base}/keys/a?key=b`, { token: kv.token })).status).toBe(400);

    const objects = await objectTenant();
    for (const [method, tail, form] of [
      ['PUT', 'report?draft', 'PUT /storage/objects/{store}/object?key='],
      ['GET', 'a/b?c', 'GET /storage/objects/{store}/object?key='],
      ['DELETE', 'a/b?c', 'DELETE /storage/objects/{store}/object?key='],
      ['POST', 'a/b/url?c', 'POST /storage/objects/{store}/object/url?key='],
    ] as const) {
      const res = await call(stack, method, `${objects.base}/objects/${tail}`, { token: objects.token, rawBody: method === 'PUT' ? 'v' : undefined });
      expect([res.status, res.json.error], `${method} ${tail}`).toEqual([400, 'validation_error']);
      expect(res.json.message, `${method} ${tail}`).toContain(form);
    }
    expect((await call(stack, 'HEAD', `${objects.base}/objects/a?b`, { token: objects.token })).status).toBe(400);
    expect(await objects.keys()).toEqual([]);
  });
});

describe('/openapi.json', () => {
  it('names the ?key= routes first, with key a required query parameter, and marks the path forms deprecated', async () => {
    const document = (await call(stack, 'GET', '/openapi.json')).json;
    const forms: [path: string, methods: string[], pathForm: string][] = [
      ['/storage/kv/{bucket}/value', ['put', 'get', 'delete'], '/storage/kv/{bucket}/keys/{key}'],
      ['/storage/objects/{store}/object', ['put', 'get', 'head', 'delete'], '/storage/objects/{store}/objects/{key}'],
      ['/storage/objects/{store}/object/url', ['post'], '/storage/objects/{store}/objects/{key}/url'],
    ];
    const paths = Object.keys(document.paths);
    for (const [path, methods, pathForm] of forms) {
      expect(paths.indexOf(path), path).toBeGreaterThan(-1);
      expect(paths.indexOf(path), path).toBeLessThan(paths.indexOf(pathForm));
      for (const method of methods) {
        const operation = document.paths[path][method];
        expect(operation.parameters.find((p: { name: string }) => p.name === 'key'), `${method} ${path}`).toMatchObject({ in: 'query', required: true });
        expect(operation.deprecated, `${method} ${path}`).toBeUndefined();
        expect(document.paths[pathForm][method].deprecated, `${method} ${pathForm}`).toBe(true);
      }
    }
  });
});
