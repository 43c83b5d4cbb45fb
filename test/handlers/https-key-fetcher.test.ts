import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpsKeyFetcher, KEY_FAILURE_CACHE_TTL_MS } from '../../functions/adapters/https-key-fetcher.js';
import { startKeyServer, type KeyServer } from '../support/key-server.js';

describe('HttpsKeyFetcher against a local HTTPS server', () => {
  let server: KeyServer;
  beforeAll(async () => {
    server = await startKeyServer();
  });
  afterAll(() => server.close());

  const fetcher = (options: ConstructorParameters<typeof HttpsKeyFetcher>[0] = {}) => new HttpsKeyFetcher({ ca: server.ca, ...options });

  it('fetchText(url) returns the body of a 200', async () => {
    server.routes.set('/cert.pem', { body: '-----BEGIN CERTIFICATE-----' });
    expect(await fetcher().fetchText(`${server.origin}/cert.pem`)).toBe('-----BEGIN CERTIFICATE-----');
  });

  it('a second fetch of a URL within the TTL is served from the cache, without a request', async () => {
    server.routes.set('/cached.pem', { body: 'v1' });
    const keys = fetcher();
    await keys.fetchText(`${server.origin}/cached.pem`);
    server.routes.set('/cached.pem', { body: 'v2' });
    expect(await keys.fetchText(`${server.origin}/cached.pem`)).toBe('v1');
    expect(server.hits.get('/cached.pem')).toBe(1);
  });

  it('concurrent fetches of one URL share one request', async () => {
    server.routes.set('/shared.pem', { body: 'shared', delayMs: 50 });
    const keys = fetcher();
    const texts = await Promise.all([1, 2, 3].map(() => keys.fetchText(`${server.origin}/shared.pem`)));
    expect(texts).toEqual(['shared', 'shared', 'shared']);
    expect(server.hits.get('/shared.pem')).toBe(1);
  });

  it('fetches again once the TTL has passed', async () => {
    let now = 0;
    server.routes.set('/ttl.pem', { body: 'old' });
    const keys = fetcher({ ttlMs: 1_000, nowMs: () => now });
    await keys.fetchText(`${server.origin}/ttl.pem`);
    server.routes.set('/ttl.pem', { body: 'new' });
    now = 999;
    expect(await keys.fetchText(`${server.origin}/ttl.pem`)).toBe('old');
    now = 1_000;
    expect(await keys.fetchText(`${server.origin}/ttl.pem`)).toBe('new');
    expect(server.hits.get('/ttl.pem')).toBe(2);
  });

  it('keeps at most maxEntries URLs, evicting the least recently used', async () => {
    for (const name of ['a', 'b', 'c']) server.routes.set(`/lru-${name}`, { body: name });
    const keys = fetcher({ maxEntries: 2 });
    await keys.fetchText(`${server.origin}/lru-a`);
    await keys.fetchText(`${server.origin}/lru-b`);
    await keys.fetchText(`${server.origin}/lru-a`); // a is now the most recent
    await keys.fetchText(`${server.origin}/lru-c`); // evicts b
    await keys.fetchText(`${server.origin}/lru-a`);
    await keys.fetchText(`${server.origin}/lru-b`);
    expect([server.hits.get('/lru-a'), server.hits.get('/lru-b'), server.hits.get('/lru-c')]).toEqual([1, 2, 1]);
  });

  it('refuses a redirect rather than following it', async () => {
    server.routes.set('/moved.pem', { status: 302, headers: { location: `${server.origin}/cert.pem` } });
    await expect(fetcher().fetchText(`${server.origin}/moved.pem`)).rejects.toThrow(/redirects are not followed/);
    expect(server.hits.get('/cert.pem')).toBe(1); // only the first test's request
  });

  it('refuses any status but 200, and answers the failure from memory until the failure TTL has passed', async () => {
    let now = 0;
    server.routes.set('/flaky.pem', { status: 503 });
    const keys = fetcher({ failureTtlMs: 1_000, nowMs: () => now });
    await expect(keys.fetchText(`${server.origin}/flaky.pem`)).rejects.toThrow(/status 503/);
    server.routes.set('/flaky.pem', { body: 'back' });
    now = 999;
    await expect(keys.fetchText(`${server.origin}/flaky.pem`)).rejects.toThrow(/status 503/);
    expect(server.hits.get('/flaky.pem')).toBe(1);
    now = 1_000;
    expect(await keys.fetchText(`${server.origin}/flaky.pem`)).toBe('back');
    expect(server.hits.get('/flaky.pem')).toBe(2);
  });

  it('remembers a failure for KEY_FAILURE_CACHE_TTL_MS (minutes) by default', async () => {
    let now = 0;
    server.routes.set('/missing.pem', { status: 404 });
    const keys = fetcher({ nowMs: () => now });
    for (const at of [0, KEY_FAILURE_CACHE_TTL_MS - 1]) {
      now = at;
      await expect(keys.fetchText(`${server.origin}/missing.pem`)).rejects.toThrow(/status 404/);
    }
    expect(server.hits.get('/missing.pem')).toBe(1);
    expect(KEY_FAILURE_CACHE_TTL_MS).toBeGreaterThanOrEqual(60_000);
  });

  it('refuses a body over the size cap, declared or streamed', async () => {
    server.routes.set('/big.pem', { body: 'x'.repeat(2_000) });
    await expect(fetcher({ maxBytes: 1_000 }).fetchText(`${server.origin}/big.pem`)).rejects.toThrow(/cap/);
    server.routes.set('/big-chunked.pem', { body: 'x'.repeat(2_000), headers: { 'transfer-encoding': 'chunked' } });
    await expect(fetcher({ maxBytes: 1_000 }).fetchText(`${server.origin}/big-chunked.pem`)).rejects.toThrow(/cap/);
  });

  it('gives up after the timeout', async () => {
    server.routes.set('/slow.pem', { body: 'late', delayMs: 1_000 });
    const started = Date.now();
    await expect(fetcher({ timeoutMs: 100 }).fetchText(`${server.origin}/slow.pem`)).rejects.toThrow(/within 100 ms/);
    expect(Date.now() - started).toBeLessThan(900);
  });

  it('refuses http and anything not a URL without making a request', async () => {
    const before = [...server.hits.values()].reduce((a, b) => a + b, 0);
    await expect(fetcher().fetchText(server.origin.replace('https:', 'http:') + '/cert.pem')).rejects.toThrow(/only https/);
    await expect(fetcher().fetchText('file:///etc/passwd')).rejects.toThrow(/only https/);
    await expect(fetcher().fetchText('not a url')).rejects.toThrow(/not a URL/);
    expect([...server.hits.values()].reduce((a, b) => a + b, 0)).toBe(before);
  });

  it('refuses a server whose certificate it does not trust', async () => {
    server.routes.set('/cert.pem', { body: 'x' });
    await expect(new HttpsKeyFetcher().fetchText(`${server.origin}/cert.pem`)).rejects.toThrow(/self-signed|certificate/i);
  });
});
