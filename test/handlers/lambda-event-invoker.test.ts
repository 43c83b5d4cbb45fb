import { SignatureV4 } from '@smithy/signature-v4';
import type { Context } from 'aws-lambda';
import { createServer, request } from 'node:http';
import { NodeSha256 } from '../../functions/adapters/aws/node-sha256.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LambdaEventInvoker } from '../../functions/adapters/aws/lambda-event-invoker.js';
import { retryOfDestinationRecord } from '../../functions/domain/flows/direct-retry.js';
import { MAX_SIGNATURE_SKEW_MS, startLambdaInvokeEmulator, type LambdaInvokeEmulator } from '../../local/lambda-invoke-server.js';

const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };
const arn = (name: string) => `arn:aws:lambda:us-east-1:000000000000:function:${name}`;
const MESSAGE = { v: 1, trigger_id: 't', flow: 'echo', ref: { triggerId: 't', executionId: '20260101T000000000Z_x' }, input: { trigger: { event: {} } } };

let emulator: LambdaInvokeEmulator;
const ran: unknown[] = [];
const failures: string[] = [];
const settled: string[] = [];
let waiters: (() => void)[] = [];
const settledOnce = () => new Promise<void>((done) => waiters.push(done));

beforeAll(async () => {
  emulator = await startLambdaInvokeEmulator({ region: 'us-east-1', credentials });
  const fn = (fails: boolean) => ({
    handler: async (payload: unknown) => {
      ran.push(payload);
      if (fails) throw new Error('Task timed out after 60.00 seconds');
    },
    context: () => ({ invokedFunctionArn: arn(fails ? 'crashes' : 'worker') }) as Context,
    onFailure: async (record: string) => void failures.push(record),
    onSettled: (id: string) => {
      settled.push(id);
      const now = waiters;
      waiters = [];
      now.forEach((done) => done());
    },
  });
  emulator.serve('worker', fn(false));
  emulator.serve('crashes', fn(true));
});
afterAll(async () => emulator?.stop());

const invoker = (name: string, secret = 'local') => new LambdaEventInvoker(arn(name), { endpoint: emulator.endpoint, credentials: async () => ({ ...credentials, secretAccessKey: secret }) });

describe('LambdaEventInvoker against the local Invoke emulator', () => {
  it('a signed Event invocation is taken (202) and the handler runs with the payload after the answer', async () => {
    const done = settledOnce();
    await invoker('worker').invoke(JSON.stringify(MESSAGE));
    await done;
    expect(ran.at(-1)).toEqual(MESSAGE);
  });

  it('a handler that throws sends Lambda\'s destination record, which reads back as the retry', async () => {
    const done = settledOnce();
    await invoker('crashes').invoke(JSON.stringify(MESSAGE));
    await done;
    const record = failures.at(-1)!;
    expect(JSON.parse(record)).toMatchObject({ requestContext: { condition: 'RetriesExhausted', approximateInvokeCount: 1 }, requestPayload: MESSAGE, responsePayload: { errorMessage: 'Task timed out after 60.00 seconds' } });
    expect(JSON.parse(retryOfDestinationRecord(record)!)).toEqual({ ...MESSAGE, attempts_before: 1, direct_attempts: 1 });
  });

  it('an unknown function, a wrong secret and an endpoint that is down each throw, so the receiver falls back to the queue', async () => {
    await expect(invoker('missing').invoke('{}')).rejects.toThrow(/answered 404/);
    await expect(invoker('worker', 'wrong').invoke('{}')).rejects.toThrow(/answered 403/);
    await expect(new LambdaEventInvoker(arn('worker'), { endpoint: 'http://127.0.0.1:1', credentials: async () => credentials }).invoke('{}')).rejects.toThrow();
  });

  it('threat: a correctly signed request made more than five minutes ago (captured, replayed) is refused 403 and runs nothing', async () => {
    const url = new URL(`/2015-03-31/functions/${encodeURIComponent(arn('worker'))}/invocations`, emulator.endpoint);
    const body = Buffer.from(JSON.stringify(MESSAGE));
    const signer = new SignatureV4({ credentials, region: 'us-east-1', service: 'lambda', sha256: NodeSha256 });
    const signedAt = async (ms: number) => (await signer.sign({
      method: 'POST', protocol: 'http:', hostname: url.hostname, port: Number(url.port), path: url.pathname,
      headers: { host: url.host, 'content-type': 'application/json', 'x-amz-invocation-type': 'Event' }, body, query: {},
    }, { signingDate: new Date(ms) })).headers as Record<string, string>;
    const runsBefore = ran.length;
    for (const ms of [Date.now() - MAX_SIGNATURE_SKEW_MS - 60_000, Date.now() + MAX_SIGNATURE_SKEW_MS + 60_000]) {
      const response = await fetch(url, { method: 'POST', headers: await signedAt(ms), body });
      expect(response.status).toBe(403);
    }
    const done = settledOnce();
    expect((await fetch(url, { method: 'POST', headers: await signedAt(Date.now() - 60_000), body })).status).toBe(202);
    await done;
    expect(ran.length).toBe(runsBefore + 1);
  });

  it('threat: a body over the 256 KiB an invocation may carry is refused 413 as it arrives, unsigned or not, never read whole into memory', async () => {
    const url = new URL(`/2015-03-31/functions/${encodeURIComponent(arn('worker'))}/invocations`, emulator.endpoint);
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    const limit = 64 * 1024 * 1024;
    const { status, written } = await new Promise<{ status: number | undefined; written: number }>((done) => {
      let written = 0;
      let status: number | undefined;
      const req = request(url, { method: 'POST', headers: { 'x-amz-invocation-type': 'Event' } }, (res) => {
        status = res.statusCode;
        res.resume();
        req.destroy();
        done({ status, written });
      });
      req.on('error', () => done({ status, written }));
      const pump = () => {
        while (written < limit && !req.destroyed) {
          written += chunk.length;
          if (!req.write(chunk)) return void req.once('drain', pump);
        }
        if (!req.destroyed) req.end();
      };
      pump();
    });
    expect(status).toBe(413);
    expect(written).toBeLessThan(limit);
  });

  it("signs as AWS checks: over the path as sent (the ARN's `:` encoded), which SigV4 encodes once more for every service but S3", async () => {
    const seen: { url: string; headers: Record<string, string | string[] | undefined>; body: Buffer }[] = [];
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => (seen.push({ url: req.url!, headers: req.headers, body: Buffer.concat(chunks) }), res.writeHead(202).end()));
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    try {
      const endpoint = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
      await new LambdaEventInvoker(arn('worker'), { endpoint, credentials: async () => credentials }).invoke(JSON.stringify(MESSAGE));
      const [request] = seen;
      expect(request!.url).toBe(`/2015-03-31/functions/${encodeURIComponent(arn('worker'))}/invocations`);
      const authorization = String(request!.headers.authorization);
      const names = /SignedHeaders=([^,]+)/.exec(authorization)![1]!.split(';');
      const date = String(request!.headers['x-amz-date']);
      // The SDK's Lambda client hands its signer the path as sent, percent-encoded; that signature is the one AWS accepts.
      const url = new URL(request!.url, endpoint);
      const again = await new SignatureV4({ credentials, region: 'us-east-1', service: 'lambda', sha256: NodeSha256 }).sign(
        { method: 'POST', protocol: 'http:', hostname: url.hostname, port: Number(url.port), path: request!.url, headers: Object.fromEntries(names.map((name) => [name, String(request!.headers[name])])), body: request!.body, query: {} },
        { signingDate: new Date(`${date.slice(0, 4)}-${date.slice(4, 6)}-${date.slice(6, 8)}T${date.slice(9, 11)}:${date.slice(11, 13)}:${date.slice(13, 15)}Z`) },
      );
      expect(again.headers.authorization).toBe(authorization);
    } finally {
      server.close();
    }
  });

  it('takes its region from the ARN, and refuses an ARN that names none', () => {
    expect(() => new LambdaEventInvoker('flowWorker', { credentials: async () => credentials })).toThrow(/no region/);
    expect(() => new LambdaEventInvoker('arn:aws:lambda:eu-west-1:123456789012:function:w', { credentials: async () => credentials })).not.toThrow();
  });
});
