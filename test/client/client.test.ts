import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BatchWriteCommand, GetCommand } from '@aws-sdk/lib-dynamodb';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { createClient, FlowgateError, verifyProof, type FlowgateClient } from '../../client/src/index.node.js';
import { dynamoClient } from '../../functions/adapters/aws/clients/dynamo.js';
import { bucketKey, generationPk } from '../../functions/adapters/aws/dynamo-kv-store.js';
import { sign, SIGNABLE_SENDERS } from '../../client/src/webhooks.js';
import { senderRow } from '../../functions/domain/webhooks/senders/catalog.js';
import { Webhook } from 'standardwebhooks';
import Stripe from 'stripe';
import { useBrowser } from '../support/browser.js';
import { useLocalStack } from '../support/local-stack.js';
import { totpCodeAt } from '../support/totp.js';

/** The client against one local stack: each view's round trip, keys, paging, uploads, consumers, proofs, signing, a browser. */
const stack = useLocalStack();
const browser = useBrowser();

let users = 0;
/** A client acting for a fresh user; `requests` counts each operation's calls (method and path). */
async function userClient(claims?: Record<string, unknown>, accountId?: string) {
  const token = await stack.token(`client-${++users}-${Date.now()}`, { claims, accountId });
  const requests: string[] = [];
  const counting: typeof fetch = (input, init) => {
    const url = new URL(String(input));
    requests.push(`${init?.method ?? 'GET'} ${url.pathname}`);
    return fetch(input, init);
  };
  return { token, requests, client: createClient({ baseUrl: stack.baseUrl, token, fetch: counting }) };
}

/** Keys with every character a URL treats specially. */
const AWKWARD_KEYS = ['a/b/c', 'my file .txt', '100% done, %41 and %2F stay', 'report?draft=1', 'notes#section-2', 'Zoë Ünal/日本/😀', '?#%/ +é/%25?#&='];

const raw32 = () => 'k'.repeat(32);
const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const item of items) all.push(item);
  return all;
}

/** Runs `task` over `items`, `width` at a time. */
async function inParallel<T>(items: readonly T[], width: number, task: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: width }, async () => {
    while (next < items.length) await task(items[next++]!);
  }));
}

describe('kv', () => {
  it('a bucket round trip: create, put, get, keys, delete, and a missing key is a 404 FlowgateError', async () => {
    const { client } = await userClient();
    const bucket = await client.kv.createBucket('settings', { description: 'app settings' });
    expect(bucket).toMatchObject({ name: 'settings', description: 'app settings' });
    expect(await client.kv.put('settings', 'theme', 'dark')).toEqual({ key: 'theme', revision: 1 });
    expect(await client.kv.put('settings', 'theme', new TextEncoder().encode('light'))).toEqual({ key: 'theme', revision: 2 });
    expect(await client.kv.getString('settings', 'theme')).toBe('light');
    expect(await collect(client.kv.keys('settings'))).toEqual(['theme']);
    expect((await collect(client.kv.listBuckets())).map((b) => b.name)).toEqual(['settings']);
    await client.kv.delete('settings', 'theme');
    const missing = await client.kv.get('settings', 'theme').catch((error: unknown) => error);
    expect(missing).toBeInstanceOf(FlowgateError);
    expect(missing).toMatchObject({ status: 404, error: 'not_found', operationId: 'getKVValueByKey' });
    await client.kv.deleteBucket('settings');
  });

  it('a key with /, space, %, ?, # and Unicode round-trips as exactly that key', async () => {
    const { client } = await userClient();
    await client.kv.createBucket('awkward');
    for (const key of AWKWARD_KEYS) {
      expect((await client.kv.put('awkward', key, `value of ${key}`)).key).toBe(key);
      expect(await client.kv.getString('awkward', key)).toBe(`value of ${key}`);
    }
    const byteOrder = [...AWKWARD_KEYS].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
    expect(await collect(client.kv.keys('awkward'))).toEqual(byteOrder);
    for (const key of AWKWARD_KEYS) await client.kv.delete('awkward', key);
    expect(await collect(client.kv.keys('awkward'))).toEqual([]);
  });

  it('2,500 keys iterate exactly once each, page after page, following the cursor', async () => {
    const accountId = `client-paging-${Date.now()}`;
    const { client, requests } = await userClient({}, accountId);
    await client.kv.createBucket('many');
    const keys = Array.from({ length: 2500 }, (_, i) => `k/${String(i).padStart(4, '0')}`);
    // 50 through the API; the other 2,450 written straight into the bucket's generation, 25 an
    // engine call (BatchWriteItem), as the KV adapter stores them: 2,500 PUTs would be a minute here.
    await inParallel(keys.slice(0, 50), 8, (key) => client.kv.put('many', key, '1'));
    const dynamo = dynamoClient(stack.aws);
    const table = stack.engines.env.KV_TABLE!;
    const { Item } = await dynamo.send(new GetCommand({ TableName: table, Key: bucketKey({ accountId, name: 'many' }), ConsistentRead: true }));
    const pk = generationPk({ accountId, name: 'many', generation: Item!.generation as string });
    for (let i = 50; i < keys.length; i += 25) {
      const items = keys.slice(i, i + 25).map((sk) => ({ PutRequest: { Item: { pk, sk, value: Buffer.from('1'), content_type: 'text/plain', revision: 1 } } }));
      await dynamo.send(new BatchWriteCommand({ RequestItems: { [table]: items } }));
    }
    requests.length = 0;
    const seen = await collect(client.kv.keys('many', { pageSize: 250 }));
    expect(seen.length).toBe(2500);
    expect(new Set(seen).size).toBe(2500);
    expect([...seen].sort()).toEqual(keys);
    expect(requests.filter((r) => r.endsWith('/storage/kv/many/keys')).length).toBeGreaterThanOrEqual(10);
  });
});

describe('objects', () => {
  it('a store round trip: put, download whole and by range, head, list, presigned URL, delete', async () => {
    const { client } = await userClient();
    await client.objects.createStore('files');
    const info = await client.objects.put('files', 'hello.txt', 'hello, world', { metadata: { note: 'kept' } });
    expect(info).toMatchObject({ key: 'hello.txt', size: 12 });
    const whole = await client.objects.download('files', 'hello.txt');
    expect([whole.status, new TextDecoder().decode(whole.body), whole.metadata]).toEqual([200, 'hello, world', { note: 'kept' }]);
    const range = await client.objects.download('files', 'hello.txt', { range: { start: 7, end: 11 } });
    expect([range.status, new TextDecoder().decode(range.body), range.contentRange]).toEqual([206, 'world', 'bytes 7-11/12']);
    expect(await client.objects.head('files', 'hello.txt')).toMatchObject({ size: 12 });
    expect((await collect(client.objects.list('files'))).map((o) => o.key)).toEqual(['hello.txt']);
    const url = await client.objects.createUrl('files', 'hello.txt', { expiresIn: 60 });
    expect(await (await fetch(url.url)).text()).toBe('hello, world');
    await client.objects.delete('files', 'hello.txt');
    expect(await client.objects.head('files', 'hello.txt')).toBeUndefined();
  });

  it('a key with /, space, %, ?, # and Unicode round-trips as exactly that key', async () => {
    const { client } = await userClient();
    await client.objects.createStore('awkward');
    for (const key of AWKWARD_KEYS) {
      expect((await client.objects.put('awkward', key, `bytes of ${key}`)).key).toBe(key);
      expect(new TextDecoder().decode((await client.objects.download('awkward', key)).body)).toBe(`bytes of ${key}`);
    }
    expect((await collect(client.objects.list('awkward'))).map((o) => o.key).sort()).toEqual([...AWKWARD_KEYS].sort());
    for (const key of AWKWARD_KEYS) await client.objects.delete('awkward', key);
    expect(await collect(client.objects.list('awkward'))).toEqual([]);
  });

  it('a 25 MB upload goes in parallel parts with a progress event per part, and downloads as the same bytes', async () => {
    const { client, requests } = await userClient();
    await client.objects.createStore('big');
    const bytes = new Uint8Array(25 * 1024 * 1024);
    for (let i = 0; i < bytes.length; i += 4096) bytes[i] = (i / 4096) % 251;
    const progress: { loaded: number; total: number; part?: number }[] = [];
    const info = await client.objects.upload('big', 'video/clip 1.bin', new Blob([bytes]), { contentType: 'application/octet-stream', onProgress: (p) => progress.push(p) });
    expect(info).toMatchObject({ key: 'video/clip 1.bin', size: bytes.length });
    // 25 MiB in 5 MiB parts: five parts, each reported once, the last at the whole size.
    expect(progress.map((p) => p.part).sort()).toEqual([1, 2, 3, 4, 5]);
    expect(progress.map((p) => p.loaded)).toEqual([...progress.map((p) => p.loaded)].sort((a, b) => a - b));
    expect(progress.at(-1)).toMatchObject({ loaded: bytes.length, total: bytes.length });
    expect(requests.filter((r) => r.startsWith('POST') && r.includes('/uploads'))).toHaveLength(2); // create and complete
    const downloaded = await client.objects.download('big', 'video/clip 1.bin');
    expect(downloaded.body.length).toBe(bytes.length);
    expect(sha256(downloaded.body)).toBe(sha256(bytes));
    // Over 4 MiB the answer is a redirect to S3, and the range goes with it.
    const part = await client.objects.download('big', 'video/clip 1.bin', { range: { start: 5 * 1024 * 1024 - 10, end: 5 * 1024 * 1024 + 9 } });
    expect([part.status, part.body]).toEqual([206, bytes.subarray(5 * 1024 * 1024 - 10, 5 * 1024 * 1024 + 10)]);
  });

  it('a part that fails is sent again, and the upload completes (a file path in Node, read part by part)', async () => {
    const token = await stack.token(`client-resume-${Date.now()}`);
    let failures = 0;
    const partPuts: string[] = [];
    const credentialsToS3: string[] = [];
    // The network drops the first PUT of part 2: what a flaky link does to a long upload.
    const flaky: typeof fetch = async (input, init) => {
      const url = new URL(String(input));
      if (init?.method === 'PUT' && url.searchParams.has('partNumber')) {
        partPuts.push(url.searchParams.get('partNumber')!);
        // A part goes to S3's origin: the user's token must not go with it.
        credentialsToS3.push(...Object.keys(init.headers ?? {}).filter((name) => ['authorization', 'x-api-key'].includes(name.toLowerCase())));
        if (url.searchParams.get('partNumber') === '2' && failures++ === 0) throw new TypeError('fetch failed: connection reset');
      }
      return fetch(input, init);
    };
    const client = createClient({ baseUrl: stack.baseUrl, token, fetch: flaky });
    await client.objects.createStore('resume');
    const dir = mkdtempSync(join(tmpdir(), 'flowgate-client-'));
    try {
      const bytes = new Uint8Array(11 * 1024 * 1024).map((_, i) => i % 256);
      writeFileSync(join(dir, 'data.bin'), bytes);
      const info = await client.objects.upload('resume', 'data.bin', join(dir, 'data.bin'), { concurrency: 2 });
      expect(info.size).toBe(bytes.length);
      expect(partPuts.filter((p) => p === '2')).toHaveLength(2);
      expect(credentialsToS3).toEqual([]);
      expect(sha256((await client.objects.download('resume', 'data.bin')).body)).toBe(sha256(bytes));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
  it('a ReadableStream uploads part by part when its size is given, and whole when not', async () => {
    const { client } = await userClient();
    await client.objects.createStore('streamed');
    const bytes = new Uint8Array(6 * 1024 * 1024 + 123).map((_, i) => (i * 7) % 256);
    // Chunks of an awkward size, so parts are cut across them.
    const streamOf = () => new ReadableStream<Uint8Array>({
      start(controller) {
        for (let at = 0; at < bytes.length; at += 100_003) controller.enqueue(bytes.slice(at, at + 100_003));
        controller.close();
      },
    });
    const parts: (number | undefined)[] = [];
    await client.objects.upload('streamed', 'sized', streamOf(), { size: bytes.length, onProgress: (p) => parts.push(p.part) });
    expect(parts.sort()).toEqual([1, 2]);
    await client.objects.upload('streamed', 'unsized', streamOf());
    for (const key of ['sized', 'unsized']) expect(sha256((await client.objects.download('streamed', key)).body)).toBe(sha256(bytes));
  });
});

describe('streams', () => {
  it('publish, read, and a consumer whose loop acks what the body returned from and naks what it threw on', async () => {
    const { client } = await userClient();
    await client.streams.create('orders');
    const published = await client.streams.publish('orders', [{ data: { n: 1 }, msg_id: 'o-1' }, { data: { n: 2 } }, { data: { n: 3 } }]);
    expect(published.seqs).toEqual([1, 2, 3]);
    expect((await client.streams.publish('orders', { data: { n: 1 }, msg_id: 'o-1' })).acks?.[0]).toEqual({ seq: 1, duplicate: true });
    expect((await collect(client.streams.read('orders'))).map((m) => m.data)).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);

    await client.streams.createConsumer('orders', 'worker', { ack_wait_seconds: 30 });
    const consumer = client.streams.consumer('orders', 'worker');
    const handled: unknown[] = [];
    let thrown = false;
    await expect((async () => {
      for await (const message of consumer.messages({ batch: 10, waitMs: 0 })) {
        if ((message.data as { n: number }).n === 2 && !thrown) {
          thrown = true;
          throw new Error('the handler failed');
        }
        handled.push(message.data);
      }
    })()).rejects.toThrow('the handler failed');
    expect(handled).toEqual([{ n: 1 }]);
    // 2 was nak'd (the body threw) and 3 was never handed out: both come again; 1 was acked and does not.
    for await (const message of consumer.messages({ waitMs: 2000, stopWhenEmpty: true })) handled.push(message.data);
    expect(handled).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
    expect(await consumer.fetch({ waitMs: 0 })).toEqual([]);
    expect((await collect(client.streams.listConsumers('orders'))).map((c) => c.name)).toEqual(['worker']);
  });

  it('fetch, ack and nak by hand', async () => {
    const { client } = await userClient();
    await client.streams.create('events');
    await client.streams.publish('events', [{ data: 'a' }, { data: 'b' }]);
    await client.streams.createConsumer('events', 'manual');
    const consumer = client.streams.consumer('events', 'manual');
    const [a, b] = await consumer.fetch({ batch: 2 });
    expect([a?.data, b?.data]).toEqual(['a', 'b']);
    await consumer.ack(a!.seq);
    await consumer.nak(b!.seq);
    expect((await consumer.fetch({ batch: 2, waitMs: 2000 })).map((m) => m.data)).toEqual(['b']);
  });
});

describe('accounts (MFA) and offline proofs', () => {
  it('verify(code) returns the proof; it verifies offline for its audience and not for another', async () => {
    const { client } = await userClient({ client_id: 'orders-app' });
    const started = await client.accounts.startTotpRegistration();
    const confirmed = await client.accounts.confirmTotpRegistration({ code: totpCodeAt(started.secret, Date.now() - 30_000), secret: started.secret, name: 'Phone' });
    expect(confirmed.recovery_codes).toHaveLength(10);
    expect((await client.accounts.listFactors()).factors?.map((f) => f.name) ?? []).toContain('Phone');

    const proof = await client.accounts.verify(totpCodeAt(started.secret, Date.now()));
    const jwksUrl = `${stack.baseUrl}/.well-known/jwks.json`;
    const claims = await verifyProof(proof.mfa_token, { jwksUrl, audience: 'orders-app', purpose: 'sign_in' });
    expect(claims).toMatchObject({ aud: 'orders-app', amr: ['otp'], purpose: 'sign_in' });
    await expect(verifyProof(proof.mfa_token, { jwksUrl, audience: 'billing-app' })).rejects.toMatchObject({ code: 'ERR_JWT_CLAIM_VALIDATION_FAILED', claim: 'aud' });

    const byRecovery = await client.accounts.verify(confirmed.recovery_codes[0]!);
    expect(byRecovery).toMatchObject({ remaining: 9 });
    const wrong = await client.accounts.verify(confirmed.recovery_codes[0]!).catch((error: unknown) => error);
    expect(wrong).toBeInstanceOf(FlowgateError);
    expect(wrong).toMatchObject({ error: 'invalid_code' });
    expect((await collect(client.accounts.events())).length).toBeGreaterThan(0);
  });
});

describe('triggers, deliveries and webhooks.sign', () => {
  it('create, list, get, update; a delivery signed by webhooks.sign runs the flow and is listed; delete', async () => {
    const { client } = await userClient();
    expect(await client.triggers.listFlows()).toContain('echo');
    const secret = 'a-github-webhook-secret';
    const trigger = await client.triggers.create({ flow: 'echo', name: 'Orders', signature: { service: 'github', secret } });
    expect(trigger).toMatchObject({ name: 'Orders', flow: 'echo' });
    expect((await collect(client.triggers.list())).map((t) => t.id)).toEqual([trigger.id]);
    expect((await client.triggers.update(trigger.id, { description: 'from the shop' })).description).toBe('from the shop');
    expect((await client.triggers.get(trigger.id)).description).toBe('from the shop');

    const body = JSON.stringify({ action: 'opened', number: 7 });
    const signed = await sign('github', secret, body, { headers: { 'X-GitHub-Event': 'pull_request' } });
    const answer = await fetch(trigger.url, { method: 'POST', headers: signed.headers, body: signed.body });
    expect(answer.status, await answer.clone().text()).toBe(200);
    // Forged: the same headers over another body.
    expect((await fetch(trigger.url, { method: 'POST', headers: signed.headers, body: '{"forged":true}' })).status).toBe(401);

    let deliveries: Awaited<ReturnType<typeof collect<import('../../client/src/index.js').Delivery>>> = [];
    for (const deadline = Date.now() + 60_000; !deliveries.some((d) => d.status === 'succeeded' && d.type === 'pull_request');) {
      expect(Date.now()).toBeLessThan(deadline);
      await new Promise((done) => setTimeout(done, 200));
      deliveries = await collect(client.deliveries.list(trigger.id));
    }
    const delivered = deliveries.find((d) => d.status === 'succeeded')!;
    expect(await client.deliveries.get(trigger.id, delivered.execution_id)).toMatchObject({ execution_id: delivered.execution_id, type: 'pull_request' });
    expect(await client.deliveries.replay(trigger.id, delivered.execution_id)).toMatchObject({});
    await client.triggers.delete(trigger.id);
    expect(await collect(client.triggers.list())).toEqual([]);
  });

  it('signs as every sender a secret can sign for, each accepted by the receiver\'s own verifier', async () => {
    expect(SIGNABLE_SENDERS).toEqual(expect.arrayContaining(['stripe', 'github', 'slack', 'svix', 'standard_webhooks', 'gitlab', 'shopify', 'twilio', 'custom']));
    expect(SIGNABLE_SENDERS).not.toContain('discord');
    const now = Math.floor(Date.now() / 1000);
    const body = JSON.stringify({ id: 'evt_1', type: 'test.event', webhookTimestamp: now * 1000 });
    const failures: string[] = [];
    for (const id of SIGNABLE_SENDERS.filter((s) => s !== 'custom' && s !== 'twilio')) {
      // A secret in the form the row's key takes (sign() itself checks each signature with the receiver's verifier).
      const row = senderRow(id)!;
      const scheme = row.verification.primitive === 'any_of' ? row.verification.schemes[0] : row.verification;
      const key = scheme.primitive === 'hmac' ? scheme.key : undefined;
      const raw = 'k'.repeat(32);
      const secret = scheme.primitive === 'basic' ? 'user:pass'
        : scheme.primitive === 'static_token' && scheme.location === 'named_header' ? 'X-Hook-Token: abc'
          : key?.format === 'base64' ? `${key.strip_prefix ?? ''}${Buffer.from(raw).toString('base64')}`
            : key?.format === 'hex' ? Buffer.from(raw).toString('hex') : `${row.secret_prefix ?? ''}${raw}`;
      await sign(id, secret, body, { url: 'https://gateway.example/webhooks/abc' }).catch((error: Error) => failures.push(`${id}: ${error.message}`));
    }
    expect(failures).toEqual([]);
    // Twilio signs a form's fields; custom, the trigger's own settings.
    await sign('twilio', raw32(), 'From=%2B15550001&Body=hi', { url: 'https://gateway.example/webhooks/abc', contentType: 'application/x-www-form-urlencoded' });
    const custom = { algorithm: 'sha256', key: { format: 'text' }, content: [{ part: 'body' }], signature: { from: 'header', name: 'x-sig', prefix: 'sha256=' }, encoding: 'hex' };
    expect((await sign('custom', 's3cret', '{}', { custom })).headers['x-sig']).toMatch(/^sha256=[0-9a-f]{64}$/);
    await expect(sign('discord', 'x', '{}')).rejects.toThrow(/key of its own/);
    await expect(sign('nope', 'x', '{}')).rejects.toThrow(/unknown sender "nope"/);
  });

  it('the headers are what the senders\' own libraries accept (stripe-node, standardwebhooks)', async () => {
    const payload = '{"id":"evt_1","object":"event","type":"invoice.paid"}';
    const stripeSigned = await sign('stripe', 'whsec_test_secret', payload);
    expect(new Stripe('sk_test_x').webhooks.constructEvent(payload, stripeSigned.headers['stripe-signature']!, 'whsec_test_secret').type).toBe('invoice.paid');
    const secret = `whsec_${Buffer.from(raw32()).toString('base64')}`;
    const standard = await sign('standard_webhooks', secret, payload);
    expect(new Webhook(secret).verify(payload, standard.headers)).toMatchObject({ type: 'invoice.paid' });
  });
});

describe('apiKeys', () => {
  it('create a key, act with it as apiKey, list, revoke: a revoked key is 401', async () => {
    const { client } = await userClient();
    const created = await client.apiKeys.create({ scopes: ['storage'] });
    const withKey = createClient({ baseUrl: stack.baseUrl, apiKey: created.api_key });
    await withKey.kv.createBucket('from-ci');
    await withKey.kv.put('from-ci', 'built', 'yes');
    expect(await client.kv.getString('from-ci', 'built')).toBe('yes');
    expect((await collect(client.apiKeys.list())).map((k) => k.id)).toContain(created.id);
    await client.apiKeys.revoke(created.id);
    await expect(withKey.kv.getString('from-ci', 'built')).rejects.toMatchObject({ status: 401, error: 'unauthorized' });
    expect((await collect(client.apiKeys.events())).length).toBeGreaterThan(0);
  });
});

describe('in a browser', () => {
  it('the browser entry, bundled for the browser, does a kv round trip from Chromium', async () => {
    const bundle = await build({
      entryPoints: [join(import.meta.dirname, '../../client/src/index.ts')],
      bundle: true, write: false, format: 'iife', globalName: 'Flowgate', platform: 'browser', target: 'es2022', logLevel: 'silent',
    });
    const page = browser.page;
    await page.goto(`${stack.baseUrl}/health`);
    await page.addScriptTag({ content: bundle.outputFiles[0]!.text });
    const token = await stack.token(`client-browser-${Date.now()}`);
    const result = await page.evaluate(async ({ baseUrl, token }) => {
      const { createClient } = (globalThis as any).Flowgate as { createClient: (o: object) => FlowgateClient };
      const client = createClient({ baseUrl, token });
      await client.kv.createBucket('browser');
      await client.kv.put('browser', 'Zoë/a?b#c', 'from Chromium');
      const keys: string[] = [];
      for await (const key of client.kv.keys('browser')) keys.push(key);
      return { value: await client.kv.getString('browser', 'Zoë/a?b#c'), keys, agent: (globalThis as any).navigator.userAgent as string };
    }, { baseUrl: stack.baseUrl, token });
    expect(result).toMatchObject({ value: 'from Chromium', keys: ['Zoë/a?b#c'] });
    expect(result.agent).toMatch(/Chrome/);
  });
});
