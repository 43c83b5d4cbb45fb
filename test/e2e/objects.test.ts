import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MAX_INLINE_OBJECT_BYTES, MAX_OBJECT_SIZE_BYTES } from '../../functions/domain/objects/limits.js';
import { call, useLocalStack } from '../support/local-stack.js';

/** One stack for the file: object stores over HTTP, on dynalite and s3rver; a purge's final sweep comes after 1 s, expiry passes on whole seconds. */
const stack = useLocalStack({ env: { KV_SWEEP_SETTLE_SECONDS: '1', OBJECT_EXPIRY_SWEEP_SECONDS: '1' } });

let counter = 0;
/** A fresh account with its own store, and helpers bound to it. */
async function tenant(config: Record<string, unknown> | false = {}) {
  const n = ++counter;
  const token = await stack.token(`objects-user-${n}`);
  const store = `store-${n}`;
  const base = `/storage/objects/${store}`;
  // Keys travel percent-encoded twice, as for KV keys (test/e2e/kv-key-encoding.test.ts says why).
  const objectPath = (key: string) => `${base}/objects/${key.split('/').map((segment) => encodeURIComponent(encodeURIComponent(segment))).join('/')}`;
  if (config !== false) expect((await call(stack, 'PUT', base, { token, body: config })).status).toBe(201);
  const put = (key: string, body: string | Uint8Array, headers: Record<string, string> = {}) =>
    call(stack, 'PUT', objectPath(key), { token, rawBody: body, headers: { 'content-type': 'text/plain', ...headers } });
  const get = (key: string, headers: Record<string, string> = {}) => call(stack, 'GET', objectPath(key), { token, headers });
  const getBytes = async (key: string) => Buffer.from(await (await fetch(stack.baseUrl + objectPath(key), { headers: { authorization: `Bearer ${token}` } })).arrayBuffer());
  const head = (key: string) => call(stack, 'HEAD', objectPath(key), { token });
  const list = (query = '') => call(stack, 'GET', `${base}/objects${query}`, { token });
  const usage = async () => (await call(stack, 'GET', base, { token })).json.data as { objects: number; bytes: number };
  const startUpload = (body: Record<string, unknown>) => call(stack, 'POST', `${base}/uploads`, { token, body });
  const complete = (id: string, body?: Record<string, unknown>) => call(stack, 'POST', `${base}/uploads/${id}/complete`, { token, body });
  return { token, store, base, objectPath, put, get, getBytes, head, list, usage, startUpload, complete };
}

/** What a plain HTTP client does with an upload's answer: PUT the bytes to its URL, or each part to its own. */
async function sendUpload(upload: { url?: string; headers?: Record<string, string>; parts?: { part_number: number; size: number; url: string }[] }, bytes: Uint8Array) {
  if (upload.url) {
    const res = await fetch(upload.url, { method: 'PUT', headers: upload.headers, body: bytes });
    expect(res.status, await res.text()).toBe(200);
    return undefined;
  }
  const parts = [];
  let offset = 0;
  for (const part of upload.parts!) {
    const res = await fetch(part.url, { method: 'PUT', body: bytes.subarray(offset, offset + part.size) });
    expect(res.status, await res.text()).toBe(200);
    parts.push({ part_number: part.part_number, etag: res.headers.get('etag')! });
    offset += part.size;
  }
  return parts;
}

describe('object stores', () => {
  it('PUT creates a store with defaults; GET shows it with its usage; GET /storage/objects lists it', async () => {
    const { token, store, base } = await tenant(false);
    const res = await call(stack, 'PUT', base, { token });
    expect(res.status).toBe(201);
    expect(res.json.data).toEqual({
      name: store, description: null, max_bytes: null, max_object_size: MAX_OBJECT_SIZE_BYTES, ttl_seconds: null,
      allowed_content_types: null, created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/), objects: 0, bytes: 0,
    });
    expect((await call(stack, 'PUT', base, { token })).status).toBe(409);
    expect((await call(stack, 'GET', base, { token })).json.data).toEqual(res.json.data);
    const listed = await call(stack, 'GET', '/storage/objects', { token });
    expect(listed.json.data).toEqual({ stores: [res.json.data], next_cursor: null });
  });

  it('a configuration is kept as given, and a bad one is a 400 that says which field', async () => {
    const config = { description: 'images', max_bytes: 1000, max_object_size: 100, ttl_seconds: 60, allowed_content_types: ['image/png', 'text/*'] };
    const { token, base } = await tenant(config);
    expect((await call(stack, 'GET', base, { token })).json.data).toMatchObject(config);
    for (const bad of [{ max_bytes: 0 }, { max_object_size: MAX_OBJECT_SIZE_BYTES + 1 }, { allowed_content_types: ['Image/PNG'] }, { allowed_content_types: [] }, { nope: 1 }]) {
      const res = await call(stack, 'PUT', '/storage/objects/other', { token, body: bad });
      expect(res.status).toBe(400);
      expect(res.json.error).toBe('validation_error');
    }
  });

  it('an object round-trips byte for byte with its content type and x-meta-* metadata; HEAD and usage agree', async () => {
    const t = await tenant();
    const bytes = randomBytes(3000);
    const put = await t.put('photos/a.bin', bytes, { 'content-type': 'application/octet-stream', 'x-meta-owner': 'ada' });
    expect(put.status).toBe(200);
    expect(put.json.data).toMatchObject({ key: 'photos/a.bin', size: 3000, etag: expect.stringMatching(/^"[0-9a-f]{32}"$/), metadata: { owner: 'ada' } });
    expect((await t.getBytes('photos/a.bin')).equals(bytes)).toBe(true);
    const got = await t.get('photos/a.bin');
    expect(got.headers.get('etag')).toBe(put.json.data.etag);
    expect(got.headers.get('x-meta-owner')).toBe('ada');
    expect(got.headers.get('x-content-type-options')).toBe('nosniff');
    const head = await t.head('photos/a.bin');
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe('3000');
    expect(head.headers.get('content-type')).toBe('application/octet-stream');
    expect(await t.usage()).toMatchObject({ objects: 1, bytes: 3000 });
    await t.put('photos/a.bin', 'smaller');
    expect(await t.usage()).toMatchObject({ objects: 1, bytes: 7 });
    expect((await call(stack, 'DELETE', t.objectPath('photos/a.bin'), { token: t.token })).status).toBe(204);
    expect((await t.get('photos/a.bin')).status).toBe(404);
    expect(await t.usage()).toMatchObject({ objects: 0, bytes: 0 });
  });

  it('keys with /, spaces, %, ?, # and Unicode round-trip and list as written', async () => {
    const t = await tenant();
    const keys = ['a/b c', 'a/100%', 'a/why?', 'a/#tag', 'a/café/日本', 'a/emoji 🎉'];
    for (const key of keys) expect((await t.put(key, `value of ${key}`)).status).toBe(200);
    for (const key of keys) expect((await t.get(key)).text).toBe(`value of ${key}`);
    const listed = await t.list('?prefix=a%2F');
    expect(listed.json.data.objects.map((o: { key: string }) => o.key)).toEqual([...keys].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y))));
  });

  it('Range reads answer 206 with Content-Range; a range past the end is 416', async () => {
    const t = await tenant();
    await t.put('r', '0123456789');
    const part = await t.get('r', { range: 'bytes=2-5' });
    expect(part.status).toBe(206);
    expect(part.text).toBe('2345');
    expect(part.headers.get('content-range')).toBe('bytes 2-5/10');
    expect((await t.get('r', { range: 'bytes=-3' })).text).toBe('789');
    expect((await t.get('r', { range: 'bytes=7-100' })).text).toBe('789');
    expect((await t.get('r', { range: 'bytes=50-60' })).status).toBe(416);
    expect((await t.get('r', { range: 'bytes=5-2' })).text).toBe('0123456789');
  });

  it('If-None-Match: * is 409 when the key exists; If-Match is 412 unless it names the stored etag', async () => {
    const t = await tenant();
    const first = await t.put('c', 'one', { 'if-none-match': '*' });
    expect(first.status).toBe(200);
    const again = await t.put('c', 'two', { 'if-none-match': '*' });
    expect(again.status).toBe(409);
    expect(again.json.error).toBe('already_exists');
    expect((await t.put('c', 'two', { 'if-match': '"00000000000000000000000000000000"' })).status).toBe(412);
    expect((await t.put('missing', 'two', { 'if-match': first.json.data.etag })).status).toBe(412);
    expect((await t.get('c')).text).toBe('one');
    const second = await t.put('c', 'two', { 'if-match': first.json.data.etag });
    expect(second.status).toBe(200);
    expect((await t.get('c')).text).toBe('two');
    expect((await t.put('c', 'three', { 'if-match': first.json.data.etag })).status).toBe(412);
  });

  it('max_object_size, max_bytes and allowed_content_types refuse a write with 413 or 400 and store nothing', async () => {
    const t = await tenant({ max_object_size: 10, max_bytes: 15, allowed_content_types: ['text/*'] });
    const tooLarge = await t.put('big', 'x'.repeat(11));
    expect(tooLarge.status).toBe(413);
    expect((await t.put('a', 'x'.repeat(10))).status).toBe(200);
    const overStore = await t.put('b', 'x'.repeat(6));
    expect(overStore.status).toBe(413);
    const wrongType = await t.put('c', 'x', { 'content-type': 'image/png' });
    expect(wrongType.status).toBe(400);
    for (const key of ['big', 'b', 'c']) expect((await t.head(key)).status).toBe(404);
    expect(await t.usage()).toMatchObject({ objects: 1, bytes: 10 });
    expect((await t.put('a', 'x'.repeat(15))).status).toBe(413);
    expect((await t.put('a', 'y'.repeat(10))).status).toBe(200);
  });

  it('concurrent writes never take a store past max_bytes', async () => {
    const t = await tenant({ max_bytes: 50 });
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => t.put(`k${i}`, 'x'.repeat(10))));
    expect(results.map((r) => r.status).sort()).toEqual([200, 200, 200, 200, 200, 413, 413, 413, 413, 413]);
    expect(await t.usage()).toMatchObject({ objects: 5, bytes: 50 });
    expect((await t.list()).json.data.objects).toHaveLength(5);
  });

  it(`a body over ${MAX_INLINE_OBJECT_BYTES} bytes through the API is 413`, async () => {
    const t = await tenant();
    const res = await t.put('huge', new Uint8Array(MAX_INLINE_OBJECT_BYTES + 1));
    expect(res.status).toBe(413);
    expect((await t.head('huge')).status).toBe(404);
  });

  it('lists in key order a page at a time, and rolls keys up to a delimiter into prefixes', async () => {
    const t = await tenant();
    for (const key of ['a', 'd/1', 'd/2', 'd/3', 'e/x/1', 'f']) await t.put(key, key);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page = await t.list(`?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.status).toBe(200);
      expect(page.json.data.objects.length).toBeLessThanOrEqual(2);
      seen.push(...page.json.data.objects.map((o: { key: string }) => o.key));
      cursor = page.json.data.next_cursor;
    } while (cursor);
    expect(seen).toEqual(['a', 'd/1', 'd/2', 'd/3', 'e/x/1', 'f']);
    const rolled = await t.list('?delimiter=/');
    expect(rolled.json.data.objects.map((o: { key: string }) => o.key)).toEqual(['a', 'f']);
    expect(rolled.json.data.prefixes).toEqual(['d/', 'e/']);
    const first = await t.list('?delimiter=/&limit=2');
    expect([first.json.data.objects.map((o: { key: string }) => o.key), first.json.data.prefixes]).toEqual([['a'], ['d/']]);
    const rest = await t.list(`?delimiter=/&limit=2&cursor=${first.json.data.next_cursor}`);
    expect([rest.json.data.objects.map((o: { key: string }) => o.key), rest.json.data.prefixes]).toEqual([['f'], ['e/']]);
    const inside = await t.list('?prefix=d/&delimiter=/');
    expect(inside.json.data.objects.map((o: { key: string; size: number; content_type: string }) => [o.key, o.size, o.content_type])).toEqual([['d/1', 3, 'text/plain'], ['d/2', 3, 'text/plain'], ['d/3', 3, 'text/plain']]);
    expect((await t.list('?cursor=bm90LWEtY3Vyc29y')).status).toBe(400);
  });

  // From here to the deleted store: tests that wait for expiry passes and sweeps, each on a store
  // of its own, run side by side (adjacent it.concurrent tests run together), so their waits overlap.
  it.concurrent('expired objects are never served or listed', async () => {
    const t = await tenant({ ttl_seconds: 1 });
    await t.put('short', 'lived');
    for (;;) {
      if ((await t.get('short')).status === 404) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect((await t.head('short')).status).toBe(404);
    expect((await t.list()).json.data.objects).toEqual([]);
    expect((await call(stack, 'DELETE', t.objectPath('short'), { token: t.token })).status).toBe(404);
    expect(await t.usage()).toMatchObject({ objects: 0, bytes: 0 });
  });

  it.concurrent('expired objects are swept: their bytes leave S3 and the store\'s usage without a read or a delete', async () => {
    // Long enough for the URL to be signed before the object expires on a busy machine.
    const t = await tenant({ ttl_seconds: 5 });
    await t.put('short', 'lived');
    await t.put('nested/short', 'too');
    const bytes = (await call(stack, 'POST', `${t.objectPath('short')}/url`, { token: t.token })).json.data.url as string;
    expect(await t.usage()).toMatchObject({ objects: 2, bytes: 8 });
    while ((await fetch(bytes)).status !== 404) await new Promise((resolve) => setTimeout(resolve, 200));
    while ((await t.usage()).objects !== 0) await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await t.usage()).toMatchObject({ objects: 0, bytes: 0 });
    // Written after the pass: a pass of its own removes it too.
    await t.put('later', 'again');
    while ((await t.usage()).objects !== 0) await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await t.usage()).toMatchObject({ objects: 0, bytes: 0 });
  });

  it.concurrent("another account's store is 404, whatever the route", async () => {
    const owner = await tenant();
    await owner.put('secret', 'mine');
    const other = await tenant(false);
    for (const [method, path] of [['GET', owner.base], ['GET', `${owner.base}/objects`], ['GET', owner.objectPath('secret')], ['HEAD', owner.objectPath('secret')], ['DELETE', owner.objectPath('secret')], ['PUT', owner.objectPath('secret')]] as const) {
      const res = await call(stack, method, path, { token: other.token, rawBody: method === 'PUT' ? 'theirs' : undefined });
      expect(res.status).toBe(404);
    }
    expect((await owner.get('secret')).text).toBe('mine');
  });

  it.concurrent('DELETE …/purge removes every object at once and keeps the configuration; objects written after it survive the sweep, which removes the old bytes', async () => {
    const t = await tenant({ description: 'kept', max_bytes: 1000 });
    for (const key of ['a', 'b/c', 'd']) await t.put(key, `old ${key}`);
    // A presigned URL names the bytes' own path, so it shows when the sweeper has removed them.
    const oldBytes = (await call(stack, 'POST', `${t.objectPath('b/c')}/url`, { token: t.token })).json.data.url as string;
    expect((await fetch(oldBytes)).status).toBe(200);
    const purged = await call(stack, 'DELETE', `${t.base}/purge`, { token: t.token });
    expect(purged.status).toBe(200);
    expect(purged.json.message).toMatch(/configuration is unchanged/);
    expect((await call(stack, 'GET', t.base, { token: t.token })).json.data).toMatchObject({ description: 'kept', max_bytes: 1000, objects: 0, bytes: 0 });
    expect((await t.get('a')).status).toBe(404);
    expect((await t.list()).json.data.objects).toEqual([]);
    await t.put('b/c', 'new');
    while ((await fetch(oldBytes)).status !== 404) await new Promise((resolve) => setTimeout(resolve, 200));
    expect((await t.get('b/c')).text).toBe('new');
    expect(await t.usage()).toMatchObject({ objects: 1, bytes: 3 });
    expect((await call(stack, 'DELETE', '/storage/objects/never-made/purge', { token: t.token })).status).toBe(404);
  });

  it.concurrent('a store that holds objects is deleted whole; its bytes are swept and a new store of the name starts empty', async () => {
    const t = await tenant();
    await t.put('k', 'v');
    const bytes = (await call(stack, 'POST', `${t.objectPath('k')}/url`, { token: t.token })).json.data.url as string;
    expect((await call(stack, 'DELETE', t.base, { token: t.token })).status).toBe(204);
    expect((await call(stack, 'GET', t.base, { token: t.token })).status).toBe(404);
    expect((await t.get('k')).status).toBe(404);
    while ((await fetch(bytes)).status !== 404) await new Promise((resolve) => setTimeout(resolve, 200));
    expect((await call(stack, 'PUT', t.base, { token: t.token })).status).toBe(201);
    expect((await t.list()).json.data.objects).toEqual([]);
    expect(await t.usage()).toMatchObject({ objects: 0, bytes: 0 });
  });

  it('bad keys, metadata and conditions are 400', async () => {
    const t = await tenant();
    expect((await t.put('x'.repeat(951), 'v')).status).toBe(400);
    expect((await t.put('a/\u0001', 'v')).status).toBe(400);
    expect((await t.put('m', 'v', { 'x-meta-ok': 'caf\u00e9' })).status).toBe(400);
    expect((await t.put('m', 'v', { 'if-none-match': '"abc"' })).status).toBe(400);
  });

  it('a presigned PUT uploads a small object with its type and metadata; complete records it, and it reads back through the API', async () => {
    const t = await tenant();
    const bytes = randomBytes(1000);
    const created = await t.startUpload({ key: 'up/small.bin', size: 1000, content_type: 'application/x-test', metadata: { owner: 'ada' } });
    expect(created.status).toBe(201);
    expect(created.json.data).toMatchObject({ id: expect.stringMatching(/^[0-9a-f]{32}$/), key: 'up/small.bin', size: 1000, method: 'PUT', headers: { 'content-type': 'application/x-test' } });
    expect(created.json.data.url).toMatch(/X-Amz-Signature=/);
    // The size is reserved as soon as the upload is created.
    expect(await t.usage()).toMatchObject({ objects: 0, bytes: 1000 });
    await sendUpload(created.json.data, bytes);
    const done = await t.complete(created.json.data.id);
    expect(done.status).toBe(200);
    expect(done.json.data).toMatchObject({ key: 'up/small.bin', size: 1000, content_type: 'application/x-test', metadata: { owner: 'ada' } });
    expect((await t.getBytes('up/small.bin')).equals(bytes)).toBe(true);
    expect((await t.head('up/small.bin')).headers.get('x-meta-owner')).toBe('ada');
    expect(await t.usage()).toMatchObject({ objects: 1, bytes: 1000 });
    // Completed once: the upload is gone.
    expect((await t.complete(created.json.data.id)).status).toBe(404);
  });

  it('25 MB through presigned multipart (5 MiB parts) from a plain HTTP client; GET answers 307 to a presigned URL that serves it, Range too', async () => {
    const t = await tenant();
    const size = 25 * 1000 * 1000;
    const bytes = randomBytes(size);
    const created = await t.startUpload({ key: 'big/video.bin', size, content_type: 'video/mp4' });
    expect(created.status).toBe(201);
    expect(created.json.data.part_size).toBe(5 * 1024 * 1024);
    expect(created.json.data.parts.map((p: { part_number: number; size: number }) => [p.part_number, p.size])).toEqual([1, 2, 3, 4, 5].map((n) => [n, Math.min(5 * 1024 * 1024, size - (n - 1) * 5 * 1024 * 1024)]));
    const parts = await sendUpload(created.json.data, bytes);
    expect((await t.complete(created.json.data.id)).status).toBe(400);
    const done = await t.complete(created.json.data.id, { parts });
    expect(done.status, done.text).toBe(200);
    expect(done.json.data).toMatchObject({ size, content_type: 'video/mp4' });
    expect(await t.usage()).toMatchObject({ objects: 1, bytes: size });
    const redirect = await fetch(stack.baseUrl + t.objectPath('big/video.bin'), { headers: { authorization: `Bearer ${t.token}` }, redirect: 'manual' });
    expect(redirect.status).toBe(307);
    const location = redirect.headers.get('location')!;
    expect(Buffer.from(await (await fetch(location)).arrayBuffer()).equals(bytes)).toBe(true);
    const range = await fetch(location, { headers: { range: 'bytes=10000000-10000009' } });
    expect(range.status).toBe(206);
    expect(Buffer.from(await range.arrayBuffer()).equals(bytes.subarray(10_000_000, 10_000_010))).toBe(true);
  }, 60_000);

  it('an upload URL takes only its declared size: S3 refuses other sizes, nothing is stored, and aborting gives the bytes back; limits are checked when it is created', async () => {
    const t = await tenant({ max_object_size: 2000, max_bytes: 3000, allowed_content_types: ['text/*'] });
    expect((await t.startUpload({ key: 'a', size: 2001, content_type: 'text/plain' })).status).toBe(413);
    expect((await t.startUpload({ key: 'a', size: 10, content_type: 'image/png' })).status).toBe(400);
    const first = await t.startUpload({ key: 'a', size: 2000, content_type: 'text/plain' });
    expect(first.status).toBe(201);
    // 2,000 reserved: a second upload of 2,000 would take the store past max_bytes.
    expect((await t.startUpload({ key: 'b', size: 2000, content_type: 'text/plain' })).status).toBe(413);
    // Content-Length is signed into the URL: fewer or more bytes than declared are S3's 403, and nothing lands.
    const put = (upload: { url: string; headers: Record<string, string> }, body: Uint8Array) => fetch(upload.url, { method: 'PUT', headers: upload.headers, body });
    expect((await put(first.json.data, randomBytes(10))).status).toBe(403);
    expect((await t.complete(first.json.data.id)).status).toBe(409);
    expect((await call(stack, 'DELETE', `${t.base}/uploads/${first.json.data.id}`, { token: t.token })).status).toBe(204);
    expect((await t.head('a')).status).toBe(404);
    expect(await t.usage()).toMatchObject({ objects: 0, bytes: 0 });
    const larger = await t.startUpload({ key: 'c', size: 5, content_type: 'text/plain' });
    expect((await put(larger.json.data, randomBytes(50))).status).toBe(403);
    expect((await t.complete(larger.json.data.id)).status).toBe(409);
    // Nothing sent yet: complete says so and leaves the upload open.
    const early = await t.startUpload({ key: 'd', size: 3, content_type: 'text/plain' });
    expect((await t.complete(early.json.data.id)).status).toBe(409);
    await sendUpload(early.json.data, new TextEncoder().encode('abc'));
    expect((await t.complete(early.json.data.id)).status).toBe(200);
    expect((await t.get('d')).text).toBe('abc');
  });

  it('uploads take If-None-Match: * and If-Match when created: checked then (409/412, nothing reserved) and decided on complete, where a multipart upload refused leaves the key untouched', async () => {
    const t = await tenant();
    const startUpload = (key: string, size: number, headers: Record<string, string>) => call(stack, 'POST', `${t.base}/uploads`, { token: t.token, body: { key, size }, headers });
    const taken = await t.put('taken', 'old');
    expect((await startUpload('taken', 3, { 'if-none-match': '*' })).status).toBe(409);
    expect((await startUpload('taken', 3, { 'if-match': '"not-its-etag"' })).status).toBe(412);
    expect((await startUpload('missing', 3, { 'if-match': '*' })).status).toBe(412);
    expect((await startUpload('taken', 3, { 'if-none-match': 'abc' })).status).toBe(400);
    expect(await t.usage()).toMatchObject({ objects: 1, bytes: 3 });
    // If-Match naming the stored etag: the upload replaces it.
    const replace = await startUpload('taken', 3, { 'if-match': taken.headers.get('etag')! });
    expect(replace.status).toBe(201);
    await sendUpload(replace.json.data, new TextEncoder().encode('new'));
    expect((await t.complete(replace.json.data.id)).status).toBe(200);
    expect((await t.get('taken')).text).toBe('new');
    // Another writer gets there first: complete is refused before the parts are assembled, and their object stays.
    const size = 5 * 1024 * 1024 + 1;
    const racing = await startUpload('raced', size, { 'if-none-match': '*' });
    expect(racing.status).toBe(201);
    await t.put('raced', 'theirs');
    const parts = await sendUpload(racing.json.data, randomBytes(size));
    const refused = await t.complete(racing.json.data.id, { parts });
    expect(refused.status).toBe(409);
    expect(refused.json.error).toBe('already_exists');
    expect((await t.get('raced')).text).toBe('theirs');
    const stale = await startUpload('raced', size, { 'if-match': (await t.head('raced')).headers.get('etag')! });
    await t.put('raced', 'newer');
    expect((await t.complete(stale.json.data.id, { parts: await sendUpload(stale.json.data, randomBytes(size)) })).status).toBe(412);
    expect((await t.get('raced')).text).toBe('newer');
    expect(await t.usage()).toMatchObject({ objects: 2, bytes: 8 });
  }, 30_000);

  it('a presigned upload URL writes once, only its declared size and type; what it writes after complete and delete, or abort, is never served or counted', async () => {
    const t = await tenant({ max_object_size: 100, max_bytes: 150, allowed_content_types: ['text/plain'] });
    const created = await t.startUpload({ key: 'doc', size: 5, content_type: 'text/plain' });
    expect(created.status).toBe(201);
    const upload = created.json.data as { id: string; url: string; headers: Record<string, string> };
    expect(upload.headers).toEqual({ 'content-type': 'text/plain', 'if-none-match': '*' });
    expect(new URL(upload.url).searchParams.get('X-Amz-SignedHeaders')).toBe('content-length;content-type;host;if-none-match');
    const send = (body: string | Uint8Array, headers: Record<string, string> = upload.headers) => fetch(upload.url, { method: 'PUT', headers, body });
    // Past max_object_size and max_bytes, another type (the bucket would serve it as a page), or without the write-once condition: S3 refuses.
    expect((await send(randomBytes(1024 * 1024))).status).toBe(403);
    expect((await send('<h1>!', { ...upload.headers, 'content-type': 'text/html' })).status).toBe(403);
    expect((await send('hello', { 'content-type': 'text/plain' })).status).toBe(403);
    expect((await send('hello')).status).toBe(200);
    expect((await send('world')).status).toBe(412);
    expect((await t.complete(upload.id)).status).toBe(200);
    expect((await send('world')).status).toBe(412);
    expect((await t.get('doc')).text).toBe('hello');
    expect(await t.usage()).toMatchObject({ objects: 1, bytes: 5 });
    // Deleted, the object's bytes are gone and the URL, still within its hour, can write again: nobody serves it.
    expect((await call(stack, 'DELETE', t.objectPath('doc'), { token: t.token })).status).toBe(204);
    expect((await send('world')).status).toBe(200);
    expect((await t.get('doc')).status).toBe(404);
    expect((await t.list()).json.data.objects).toEqual([]);
    expect(await t.usage()).toMatchObject({ objects: 0, bytes: 0 });
    // A new object at the key is its own bytes, not the late write's.
    expect((await t.put('doc', 'fresh')).status).toBe(200);
    expect((await t.get('doc')).text).toBe('fresh');
    const aborted = (await t.startUpload({ key: 'other', size: 5, content_type: 'text/plain' })).json.data as typeof upload;
    expect((await call(stack, 'DELETE', `${t.base}/uploads/${aborted.id}`, { token: t.token })).status).toBe(204);
    expect((await fetch(aborted.url, { method: 'PUT', headers: aborted.headers, body: 'later' })).status).toBe(200);
    expect((await t.get('other')).status).toBe(404);
    expect(await t.usage()).toMatchObject({ objects: 1, bytes: 5 });
  });

  it('concurrent writers with If-None-Match: *, If-Match or none: a read returns exactly the accepted write, under its etag, and usage counts it', async () => {
    const t = await tenant();
    const md5 = (text: string) => `"${createHash('md5').update(text).digest('hex')}"`;
    const bodies = (round: string) => Array.from({ length: 10 }, (_, i) => `${round}-writer-${i}-${'x'.repeat(i * 37)}`);
    const served = async (key: string) => {
      const read = await t.get(key);
      expect(read.status).toBe(200);
      // The bytes are the ones the etag names: no writer's bytes under another's etag, none mixed.
      expect(read.headers.get('etag')).toBe(md5(read.text));
      expect(await t.usage()).toMatchObject({ bytes: read.text.length });
      return read;
    };
    // Each race once (three rounds of the same races on fresh keys took 4-5 s of CPU: a plain
    // overwrite that loses its race retries before its 503).
    const key = 'race';
    const created = await Promise.all(bodies('create').map((body) => t.put(key, body, { 'if-none-match': '*' })));
    const createdWinners = created.filter((res) => res.status === 200);
    expect(createdWinners).toHaveLength(1);
    expect(created.filter((res) => res.status !== 200).map((res) => res.status)).toEqual(Array(9).fill(409));
    const first = await served(key);
    expect(first.headers.get('etag')).toBe(createdWinners[0]!.json.data.etag);
    const replaced = await Promise.all(bodies('match').map((body) => t.put(key, body, { 'if-match': first.headers.get('etag')! })));
    const replacedWinners = replaced.filter((res) => res.status === 200);
    expect(replacedWinners).toHaveLength(1);
    expect(replaced.filter((res) => res.status !== 200).map((res) => res.status)).toEqual(Array(9).fill(412));
    expect((await served(key)).headers.get('etag')).toBe(replacedWinners[0]!.json.data.etag);
    const overwritten = await Promise.all(bodies('plain').map((body) => t.put(key, body)));
    expect(overwritten.every((res) => res.status === 200 || res.status === 503)).toBe(true);
    await served(key);
    expect((await call(stack, 'DELETE', t.objectPath(key), { token: t.token })).status).toBe(204);
    expect(await t.usage()).toMatchObject({ objects: 0, bytes: 0 });
  }, 60_000);

  it('POST …/uploads/{id}/urls gives an open upload new URLs (a large upload can outlast its first); expires_at says when they stop', async () => {
    const t = await tenant();
    const size = 6 * 1024 * 1024;
    const bytes = randomBytes(size);
    const created = (await t.startUpload({ key: 'long', size })).json.data;
    const before = Date.now();
    const fresh = await call(stack, 'POST', `${t.base}/uploads/${created.id}/urls`, { token: t.token });
    expect(fresh.status).toBe(200);
    expect(fresh.json.data).toMatchObject({ id: created.id, key: 'long', size, method: 'PUT', part_size: 5 * 1024 * 1024 });
    expect(fresh.json.data.parts.map((p: { part_number: number; size: number }) => [p.part_number, p.size])).toEqual([[1, 5 * 1024 * 1024], [2, 1024 * 1024]]);
    const expiresAt = Date.parse(fresh.json.data.expires_at);
    expect(expiresAt).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 + 3600_000);
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + 3600_000);
    const parts = await sendUpload(fresh.json.data, bytes);
    expect((await t.complete(created.id, { parts })).status).toBe(200);
    expect((await call(stack, 'POST', `${t.base}/uploads/${created.id}/urls`, { token: t.token })).status).toBe(404);
    const single = (await t.startUpload({ key: 'small', size: 3 })).json.data;
    const again = await call(stack, 'POST', `${t.base}/uploads/${single.id}/urls`, { token: t.token });
    expect(again.json.data).toMatchObject({ method: 'PUT', headers: { 'content-type': 'application/octet-stream', 'if-none-match': '*' } });
    await sendUpload(again.json.data, new TextEncoder().encode('abc'));
    expect((await t.complete(single.id)).status).toBe(200);
    expect((await t.get('small')).text).toBe('abc');
    const other = await tenant(false);
    expect((await call(stack, 'POST', `${t.base}/uploads/${single.id}/urls`, { token: other.token })).status).toBe(404);
  }, 30_000);

  it("a browser's preflight to a presigned upload URL passes from the stack's own origin (the console) and exposes ETag; another origin's is refused", async () => {
    const t = await tenant();
    const upload = (await t.startUpload({ key: 'from-browser', size: 3, content_type: 'text/plain' })).json.data;
    const preflight = (origin: string) => fetch(upload.url, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'PUT', 'access-control-request-headers': 'content-type,if-none-match' } });
    const allowed = await preflight(stack.baseUrl);
    expect(allowed.status, await allowed.clone().text()).toBe(200);
    expect(allowed.headers.get('access-control-allow-origin')).toBe(stack.baseUrl);
    expect(allowed.headers.get('access-control-allow-methods')).toMatch(/PUT/);
    const put = await fetch(upload.url, { method: 'PUT', headers: { origin: stack.baseUrl, ...upload.headers }, body: 'abc' });
    expect(put.status).toBe(200);
    expect(put.headers.get('access-control-expose-headers')?.toLowerCase()).toMatch(/etag/);
    expect((await preflight('https://elsewhere.example')).status).toBe(403);
  });

  it('DELETE …/uploads/{id} aborts an upload and gives its reservation back, single PUT or multipart', async () => {
    const t = await tenant({ max_bytes: 20 * 1024 * 1024 });
    await t.put('keep', 'kept');
    const single = await t.startUpload({ key: 'keep', size: 100 });
    await sendUpload(single.json.data, randomBytes(100));
    expect((await call(stack, 'DELETE', `${t.base}/uploads/${single.json.data.id}`, { token: t.token })).status).toBe(204);
    const multi = await t.startUpload({ key: 'm', size: 6 * 1024 * 1024 });
    await fetch(multi.json.data.parts[0].url, { method: 'PUT', body: randomBytes(5 * 1024 * 1024) });
    expect((await call(stack, 'DELETE', `${t.base}/uploads/${multi.json.data.id}`, { token: t.token })).status).toBe(204);
    expect((await call(stack, 'DELETE', `${t.base}/uploads/${multi.json.data.id}`, { token: t.token })).status).toBe(404);
    expect((await t.complete(multi.json.data.id, { parts: [{ part_number: 1, etag: '"x"' }] })).status).toBe(404);
    // The aborted single PUT landed at a name of its own: 'keep' is untouched.
    expect((await t.get('keep')).text).toBe('kept');
    expect(await t.usage()).toMatchObject({ objects: 1, bytes: 4 });
    expect((await call(stack, 'DELETE', `${t.base}/uploads/not-an-id`, { token: t.token })).status).toBe(404);
  });

  it('POST …/objects/{key}/url answers a presigned GET (expires_in 1-3600); another account gets 404', async () => {
    const t = await tenant();
    await t.put('docs/report.txt', 'the report');
    const url = (token: string, body?: Record<string, unknown>) => call(stack, 'POST', `${t.objectPath('docs/report.txt')}/url`, { token, body });
    const res = await url(t.token, { expires_in: 60 });
    expect(res.status).toBe(200);
    expect(res.json.data).toMatchObject({ method: 'GET', object: { key: 'docs/report.txt', size: 10 } });
    expect(res.json.data.url).toMatch(/X-Amz-Expires=60&/);
    expect(await (await fetch(res.json.data.url)).text()).toBe('the report');
    expect((await url(t.token, { expires_in: 3601 })).status).toBe(400);
    expect((await url(t.token, { expires_in: 0 })).status).toBe(400);
    expect((await call(stack, 'POST', t.objectPath('docs/report.txt'), { token: t.token })).status).toBe(404);
    expect((await call(stack, 'POST', `${t.objectPath('docs/none.txt')}/url`, { token: t.token })).status).toBe(404);
    const other = await tenant(false);
    expect((await url(other.token)).status).toBe(404);
    expect((await call(stack, 'POST', `${t.base}/uploads`, { token: other.token, body: { key: 'x', size: 1 } })).status).toBe(404);
    // A URL is signed for one object's bytes: pointed at others, S3 refuses it.
    expect((await t.put('docs/other.txt', 'the other')).status).toBe(200);
    const otherUrl = (await call(stack, 'POST', `${t.objectPath('docs/other.txt')}/url`, { token: t.token })).json.data.url as string;
    const tampered = res.json.data.url.replace(/^[^?]+/, otherUrl.split('?')[0]);
    expect(tampered).not.toBe(res.json.data.url);
    expect((await fetch(tampered)).status).toBe(403);
    // Keys S3 must escape still sign and verify: spaces, %, ?, # and Unicode.
    const odd = 'a/café 100%?#日本';
    await t.put(odd, 'odd');
    const oddUrl = await call(stack, 'POST', `${t.objectPath(odd)}/url`, { token: t.token });
    expect(await (await fetch(oddUrl.json.data.url)).text()).toBe('odd');
  });
});
