import { describe, expect, it } from 'vitest';
import { call, useLocalStack } from '../support/local-stack.js';

/**
 * How keys travel in URLs. API Gateway decodes the path once to route it and once more before the
 * function sees it (local/api-gateway.ts has the sources), and the local stack does the same, so
 * the documented encoding is `encodeURIComponent` applied twice, whole or per `/` segment.
 */
const stack = useLocalStack();

const twice = (text: string) => encodeURIComponent(encodeURIComponent(text));
const ENCODINGS: Record<string, (key: string) => string> = {
  'twice, whole': twice,
  'twice, per segment': (key) => key.split('/').map(twice).join('/'),
};
const ONCE: Record<string, (key: string) => string> = {
  'once, whole': encodeURIComponent,
  'once, per segment': (key) => key.split('/').map(encodeURIComponent).join('/'),
};

const KEYS: Record<string, string> = {
  '?': 'report?draft=1&x',
  '#': 'notes#section-2',
  '%': '100% done, %41 and %2F stay',
  '/': 'a/b/c',
  space: 'my file .txt',
  '+': 'a+b=c',
  'non-ASCII': 'Zoë Ünal/日本/😀',
  'all of them': '?#%/ +é/%25?#',
};

let counter = 0;
/** A fresh account and bucket, and requests bound to them. */
async function bucket() {
  const token = await stack.token(`key-encoding-${++counter}`);
  const base = `/storage/kv/b${counter}`;
  expect((await call(stack, 'PUT', base, { token })).status).toBe(201);
  return {
    put: (encoded: string, value: string) => call(stack, 'PUT', `${base}/keys/${encoded}`, { token, rawBody: value, headers: { 'content-type': 'text/plain' } }),
    get: (encoded: string) => call(stack, 'GET', `${base}/keys/${encoded}`, { token }),
    remove: (encoded: string) => call(stack, 'DELETE', `${base}/keys/${encoded}`, { token }),
    keys: async () => (await call(stack, 'GET', `${base}/keys`, { token })).json.data.keys,
  };
}

describe('a key sent percent-encoded twice', () => {
  // `a/b/c` per segment is sent as is: nothing encoded, nothing to test.
  const cases = Object.entries(KEYS)
    .flatMap(([what, key]) => Object.entries(ENCODINGS).map(([how, encode]) => [what, how, key, encode] as const))
    .filter(([, , key, encode]) => encode(key) !== key);

  it.each(cases)('with %s (%s) is written, read, listed and deleted as exactly that key', async (_what, _how, key, encode) => {
    const { put, get, remove, keys } = await bucket();
    const written = await put(encode(key), `value of ${key}`);
    expect([written.status, written.json]).toEqual([200, { data: { key, revision: 1 } }]);
    expect((await get(encode(key))).text).toBe(`value of ${key}`);
    expect(await keys()).toEqual([key]);
    expect((await remove(encode(key))).status).toBe(204);
    expect(await keys()).toEqual([]);
  });
});

describe('a key without % or ?', () => {
  const cases = ['#', '/', 'space', '+', 'non-ASCII'].flatMap((what) => Object.keys(ONCE).map((how) => [what, how] as const));

  it.each(cases)('with %s is the same key encoded %s as encoded twice', async (what, how) => {
    const { put, get, keys } = await bucket();
    const key = KEYS[what]!;
    expect((await put(ONCE[how]!(key), 'v')).json).toEqual({ data: { key, revision: 1 } });
    expect((await get(twice(key))).text).toBe('v');
    expect((await put(twice(key), 'w')).json).toEqual({ data: { key, revision: 2 } });
    expect((await get(ONCE[how]!(key))).text).toBe('w');
    expect(await keys()).toEqual([key]);
  });
});

describe('a key with % or ? encoded only once arrives as API Gateway delivers it', () => {
  it('a ? ends the key: report%3Fdraft writes "report"', async () => {
    const { put, keys } = await bucket();
    expect((await put(encodeURIComponent('report?draft'), 'v')).json).toEqual({ data: { key: 'report', revision: 1 } });
    expect(await keys()).toEqual(['report']);
  });

  it('a %XX in the key is decoded too: 100%2541 writes "100A"', async () => {
    const { put } = await bucket();
    expect((await put(encodeURIComponent('100%41'), 'v')).json).toEqual({ data: { key: '100A', revision: 1 } });
  });

  it('a % without two hex digits after it is 400 validation_error, and nothing is written', async () => {
    const { put, keys } = await bucket();
    const res = await put(encodeURIComponent('100% done'), 'v');
    expect([res.status, res.json]).toEqual([400, { error: 'validation_error', message: expect.any(String) }]);
    expect(await keys()).toEqual([]);
  });
});
