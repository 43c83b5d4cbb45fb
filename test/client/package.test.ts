import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateClientTypes, GENERATED_TYPES_PATH } from '../../client/generate.js';
import { createClient, FlowgateError } from '../../client/src/index.js';

/** The package's source: generated types kept fresh, the types an app compiles against, retries (the build: pack.test.ts). */
const ROOT = resolve(import.meta.dirname, '../..');

describe('generated types', () => {
  it(`${GENERATED_TYPES_PATH} is what \`npm run client:generate\` writes from the document now`, async () => {
    const committed = readFileSync(join(ROOT, GENERATED_TYPES_PATH), 'utf8');
    // A failure here: the document changed and the client's types did not; run `npm run client:generate`.
    expect(committed === (await generateClientTypes()), 'stale: run npm run client:generate').toBe(true);
  });
});

describe('the types an app compiles against', () => {
  const app = join(import.meta.dirname, 'typecheck', 'app.ts');
  // tsc --strict --noEmit, run through the compiler API: the second program reuses the first's
  // parsed files (the DOM lib, the client), so the deliberate mistake costs a fraction of a compile.
  const options: ts.CompilerOptions = {
    strict: true, noEmit: true, skipLibCheck: true, target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext, lib: ['lib.es2023.d.ts', 'lib.dom.d.ts', 'lib.dom.iterable.d.ts'], types: ['node'],
  };
  /** Compiles `app` as `source` says; the errors as tsc prints them (of the app's file alone with `appOnly`). */
  const compile = (source: string, oldProgram?: ts.Program, appOnly = false) => {
    const host = ts.createCompilerHost(options);
    const getSourceFile = host.getSourceFile.bind(host);
    host.getSourceFile = (file, language, onError, create) =>
      resolve(file) === app ? ts.createSourceFile(file, source, language) : getSourceFile(file, language, onError, create);
    const program = ts.createProgram({ rootNames: [app], options, host, oldProgram });
    const appFile = program.getSourceFile(app)!;
    const diagnostics = appOnly ? [...program.getSyntacticDiagnostics(appFile), ...program.getSemanticDiagnostics(appFile)] : ts.getPreEmitDiagnostics(program);
    const errors = diagnostics.map((d) => `${d.file ? `${d.file.fileName.slice(ROOT.length + 1)}(${d.file.getLineAndCharacterOfPosition(d.start!).line + 1}): ` : ''}TS${d.code}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`);
    return { program, errors };
  };
  let compiled: ReturnType<typeof compile> | undefined;

  it('a small app compiles with tsc --strict', () => {
    compiled = compile(readFileSync(app, 'utf8'));
    expect(compiled.errors).toEqual([]);
  });

  it('the same app with a wrong field name in triggers.create does not', () => {
    const source = readFileSync(app, 'utf8');
    expect(source).toContain("create({ flow: 'echo',");
    const { errors } = compile(source.replace("create({ flow: 'echo',", "create({ flw: 'echo',"), compiled?.program, true);
    expect(errors).toEqual([expect.stringMatching(/^test\/client\/typecheck\/app\.ts\(20\): TS2561: .*'flw' does not exist in type .*Did you mean to write 'flow'\?/s)]);
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

describe('what a credential reaches, and what a hostile name or server costs', () => {
  /** A server that records each request's method, URL and headers, answering with `answer`. */
  function recorder(answer: (req: IncomingMessage) => { status: number; headers?: Record<string, string>; body?: string }) {
    const seen: { method: string; url: string; headers: IncomingMessage['headers'] }[] = [];
    const server = createServer((req, res) => {
      seen.push({ method: req.method!, url: req.url!, headers: req.headers });
      req.resume();
      const { status, headers, body } = answer(req);
      res.writeHead(status, headers);
      res.end(body);
    });
    return {
      seen, server,
      start: () => new Promise<string>((done) => server.listen(0, '127.0.0.1', () => done(`http://127.0.0.1:${(server.address() as AddressInfo).port}`))),
      stop: () => new Promise<void>((done) => server.close(() => done())),
    };
  }

  it('a download redirected to another origin (S3) is fetched without the API key or token, with its range', async () => {
    const s3 = recorder(() => ({ status: 206, headers: { 'content-type': 'application/octet-stream', 'content-range': 'bytes 0-1/10' }, body: 'ab' }));
    const s3Url = await s3.start();
    const api = recorder(() => ({ status: 307, headers: { location: `${s3Url}/bucket/object?X-Amz-Signature=x` } }));
    const apiUrl = await api.start();
    try {
      for (const credential of [{ apiKey: 'fgk_secret' }, { token: 'a-users-token' }]) {
        s3.seen.length = 0;
        const download = await createClient({ baseUrl: apiUrl, ...credential }).objects.download('store', 'big.bin', { range: { start: 0, end: 1 } });
        expect([download.status, new TextDecoder().decode(download.body)]).toEqual([206, 'ab']);
        expect(s3.seen).toHaveLength(1);
        expect(s3.seen[0]!.headers).not.toHaveProperty('x-api-key');
        expect(s3.seen[0]!.headers).not.toHaveProperty('authorization');
        expect(s3.seen[0]!.headers.range).toBe('bytes=0-1');
      }
      expect(api.seen.map((r) => [r.headers['x-api-key'], r.headers.authorization])).toEqual([['fgk_secret', undefined], [undefined, 'Bearer a-users-token']]);
    } finally {
      await Promise.all([s3.stop(), api.stop()]);
    }
  });

  it('a name cannot leave its path segment: / is encoded, and . or .. is refused before anything is sent', async () => {
    const api = recorder(() => ({ status: 201, headers: { 'content-type': 'application/json' }, body: '{"data":{}}' }));
    const apiUrl = await api.start();
    try {
      const flowgate = createClient({ baseUrl: apiUrl, token: 't' });
      await flowgate.kv.createBucket('../api-keys');
      await flowgate.triggers.get('a?b#c');
      expect(api.seen.map((r) => `${r.method} ${r.url}`)).toEqual(['PUT /storage/kv/..%2Fapi-keys', 'GET /triggers/a%3Fb%23c']);
      for (const name of ['..', '.', '%2e%2E', '.%2E']) await expect(flowgate.kv.deleteBucket(name)).rejects.toThrow(TypeError);
      expect(api.seen).toHaveLength(2);
    } finally {
      await api.stop();
    }
  });
});

