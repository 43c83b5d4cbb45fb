import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
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

describe('HttpsKeyFetcher.fetchIssuer(url) against a local HTTP server', () => {
  /** An issuer certificate's bytes (DER is binary: every byte value), and what each path answers. */
  const DER = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
  const hits = new Map<string, number>();
  let origin: string;
  let server: Server;
  beforeAll(async () => {
    server = createServer((request, response) => {
      const path = request.url ?? '';
      hits.set(path, (hits.get(path) ?? 0) + 1);
      if (path === '/r2m01.cer') response.writeHead(200, { 'content-type': 'application/pkix-cert' }).end(DER);
      else if (path === '/moved.cer') response.writeHead(301, { location: '/r2m01.cer' }).end();
      else if (path === '/big.cer') response.writeHead(200).end(Buffer.alloc(2_000));
      else if (path === '/slow.cer') setTimeout(() => response.writeHead(200).end(DER), 1_000);
      else response.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('returns the bytes of a 200 over plain http, and serves them from the cache within the TTL', async () => {
    const keys = new HttpsKeyFetcher();
    expect(Buffer.from(await keys.fetchIssuer(`${origin}/r2m01.cer`)).equals(DER)).toBe(true);
    expect(Buffer.from(await keys.fetchIssuer(`${origin}/r2m01.cer`)).equals(DER)).toBe(true);
    expect(hits.get('/r2m01.cer')).toBe(1);
  });

  it('never answers fetchText from what fetchIssuer fetched over http', async () => {
    const keys = new HttpsKeyFetcher();
    await keys.fetchIssuer(`${origin}/r2m01.cer`);
    await expect(keys.fetchText(`${origin}/r2m01.cer`)).rejects.toThrow(/only https/);
  });

  it('refuses a redirect, a body over the cap, a slow answer, and a failure is remembered', async () => {
    let now = 0;
    const keys = new HttpsKeyFetcher({ maxBytes: 1_000, timeoutMs: 100, failureTtlMs: 1_000, nowMs: () => now });
    await expect(keys.fetchIssuer(`${origin}/moved.cer`)).rejects.toThrow(/redirects are not followed/);
    await expect(keys.fetchIssuer(`${origin}/big.cer`)).rejects.toThrow(/cap/);
    await expect(keys.fetchIssuer(`${origin}/slow.cer`)).rejects.toThrow(/within 100 ms/);
    await expect(keys.fetchIssuer(`${origin}/missing.cer`)).rejects.toThrow(/status 404/);
    now = 999;
    await expect(keys.fetchIssuer(`${origin}/missing.cer`)).rejects.toThrow(/status 404/);
    expect(hits.get('/missing.cer')).toBe(1);
  });

  it('refuses another scheme than http and https without a request', async () => {
    await expect(new HttpsKeyFetcher().fetchIssuer('file:///etc/passwd')).rejects.toThrow(/only https/);
    await expect(new HttpsKeyFetcher().fetchIssuer('ftp://127.0.0.1/r2m01.cer')).rejects.toThrow(/only https/);
  });
});
