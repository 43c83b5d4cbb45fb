import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateClientTypes, GENERATED_TYPES_PATH } from '../../client/generate.js';
import { createClient, FlowgateError } from '../../client/src/index.js';

/** The package itself: generated types kept fresh, the build, the browser entry, the types an app compiles against, retries. */
const ROOT = resolve(import.meta.dirname, '../..');
const CLIENT = join(ROOT, 'client');
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');

describe('generated types', () => {
  it(`${GENERATED_TYPES_PATH} is what \`npm run client:generate\` writes from the document now`, async () => {
    const committed = readFileSync(join(ROOT, GENERATED_TYPES_PATH), 'utf8');
    // A failure here: the document changed and the client's types did not; run `npm run client:generate`.
    expect(committed === (await generateClientTypes()), 'stale: run npm run client:generate').toBe(true);
  });
});

describe('the build', () => {
  beforeAll(() => {
    const built = spawnSync(process.execPath, [join(CLIENT, 'build.mjs')], { encoding: 'utf8' });
    expect(built.status, built.stderr + built.stdout).toBe(0);
  }, 180_000);

  it('writes ESM and declarations for each entry the package exports', () => {
    const manifest = JSON.parse(readFileSync(join(CLIENT, 'package.json'), 'utf8'));
    expect(manifest).toMatchObject({ name: '@flowgate/client', version: '1.0.0', type: 'module' });
    for (const conditions of Object.values(manifest.exports) as (string | Record<string, string>)[]) {
      for (const file of typeof conditions === 'string' ? [conditions] : Object.values(conditions)) expect(existsSync(join(CLIENT, file)), file).toBe(true);
    }
  });

  it('the browser entry loads no node: module, in itself or any chunk it imports', () => {
    const seen = new Set<string>();
    const nodeImports: string[] = [];
    const visit = (file: string) => {
      if (seen.has(file)) return;
      seen.add(file);
      const text = readFileSync(file, 'utf8');
      for (const [, specifier] of text.matchAll(/(?:\bfrom\s*|\bimport\s*\(?\s*)["']([^"']+)["']/g)) {
        if (specifier!.startsWith('.')) visit(resolve(dirname(file), specifier!));
        else if (specifier!.startsWith('node:') || ['fs', 'crypto', 'buffer', 'path', 'http', 'https', 'stream'].includes(specifier!)) nodeImports.push(`${file}: ${specifier}`);
      }
    };
    const manifest = JSON.parse(readFileSync(join(CLIENT, 'package.json'), 'utf8'));
    visit(join(CLIENT, manifest.exports['.'].default));
    expect(seen.size).toBeGreaterThan(1);
    expect(nodeImports).toEqual([]);
    // And the check sees a node: import where there is one: the Node entry has one.
    expect(readFileSync(join(CLIENT, manifest.exports['.'].node), 'utf8')).toMatch(/from\s*["']node:fs\/promises["']/);
  });
});

describe('the types an app compiles against', () => {
  const app = join(import.meta.dirname, 'typecheck', 'app.ts');
  const compile = (file: string) =>
    spawnSync(process.execPath, [tsc, '--strict', '--noEmit', '--target', 'es2022', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--lib', 'es2023,dom,dom.iterable', '--types', 'node', '--skipLibCheck', file], { encoding: 'utf8' });

  it('a small app compiles with tsc --strict', () => {
    const result = compile(app);
    expect(result.status, result.stdout).toBe(0);
  });

  it('the same app with a wrong field name in triggers.create does not', () => {
    const dir = mkdtempSync(join(import.meta.dirname, 'typecheck', '.mistake-'));
    try {
      const source = readFileSync(app, 'utf8');
      expect(source).toContain("create({ flow: 'echo',");
      const mistaken = join(dir, 'app.ts');
      writeFileSync(mistaken, source.replace("create({ flow: 'echo',", "create({ flw: 'echo',").replaceAll("'../../../client/", "'../../../../client/"));
      const result = compile(mistaken);
      expect(result.status).not.toBe(0);
      expect(result.stdout).toMatch(/app\.ts\(20,\d+\): error TS2561: .*'flw' does not exist in type .*Did you mean to write 'flow'\?/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('retries', () => {
  /** A server that answers each request with the next of `answers` (the last one repeated), recording what came. */
  let answers: { status: number; headers?: Record<string, string>; body: unknown }[] = [];
  const received: { method: string; url: string; idempotencyKey: string | undefined; at: number }[] = [];
  let baseUrl = '';
  const server = createServer((req: IncomingMessage, res) => {
    received.push({ method: req.method!, url: req.url!, idempotencyKey: req.headers['idempotency-key'] as string | undefined, at: Date.now() });
    const answer = answers.length > 1 ? answers.shift()! : answers[0]!;
    req.resume();
    res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
    res.end(JSON.stringify(answer.body));
  });
  beforeAll(async () => {
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((done) => server.close(() => done())));

  const throttled = { status: 429, headers: { 'retry-after': '0' }, body: { error: 'too_many_attempts' } };
  const client = () => createClient({ baseUrl, token: 't', retry: { baseDelayMs: 1 } });

  it('a 429 is retried (honouring Retry-After) until it succeeds', async () => {
    received.length = 0;
    answers = [throttled, throttled, { status: 200, body: { data: { key: 'k', revision: 1 } } }];
    expect(await client().kv.put('b', 'k', 'v')).toEqual({ key: 'k', revision: 1 });
    expect(received.map((r) => r.method)).toEqual(['PUT', 'PUT', 'PUT']);
  });

  it('a POST is retried with the one Idempotency-Key made for the call; the next call has another', async () => {
    received.length = 0;
    answers = [{ status: 503, headers: { 'retry-after': '0' }, body: { error: 'unavailable' } }, { status: 200, body: { data: { seqs: [1] } } }];
    await client().streams.publish('s', { data: 1 });
    answers = [{ status: 200, body: { data: { seqs: [2] } } }];
    await client().streams.publish('s', { data: 2 });
    const [first, retry, next] = received.map((r) => r.idempotencyKey);
    expect(first).toMatch(/^[0-9a-f-]{36}$/);
    expect(retry).toBe(first);
    expect(next).not.toBe(first);
  });

  it('a 400 is not retried, and is thrown as a FlowgateError with its code and message', async () => {
    received.length = 0;
    answers = [{ status: 400, body: { error: 'validation_error', message: 'flow: required' } }];
    const error = await client().triggers.create({ flow: 'echo' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FlowgateError);
    expect(error).toMatchObject({ status: 400, error: 'validation_error', message: 'flow: required', operationId: 'createTrigger' });
    expect(received).toHaveLength(1);
  });

  it('retries are bounded: the last 429 is thrown with its Retry-After', async () => {
    received.length = 0;
    answers = [throttled];
    const error = await createClient({ baseUrl, token: 't', retry: { retries: 2, baseDelayMs: 1 } }).kv.get('b', 'k').catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 429, error: 'too_many_attempts', retryAfter: 0 });
    expect(received).toHaveLength(3);
  });

  it('a Retry-After longer than the client waits is thrown at once', async () => {
    received.length = 0;
    answers = [{ ...throttled, headers: { 'retry-after': '3600' } }];
    const error = await client().kv.get('b', 'k').catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 429, retryAfter: 3600 });
    expect(received).toHaveLength(1);
  });

  it('without Retry-After, the backoff is jittered and bounded by maxDelayMs', async () => {
    received.length = 0;
    answers = [{ status: 503, body: { error: 'unavailable' } }];
    const started = Date.now();
    await createClient({ baseUrl, token: 't', retry: { retries: 3, baseDelayMs: 50, maxDelayMs: 60 } }).kv.get('b', 'k').catch(() => undefined);
    expect(received).toHaveLength(4);
    // Three waits of at most 60 ms each; the bound, not a speed.
    expect(received.at(-1)!.at - started).toBeLessThan(60 * 3 + 5_000);
  });
});
