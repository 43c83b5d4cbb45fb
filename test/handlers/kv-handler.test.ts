import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { DynamoApiKeyStore } from '../../functions/adapters/aws/dynamo-api-key-store.js';
import { DynamoKvStore } from '../../functions/adapters/aws/dynamo-kv-store.js';
import { SqsSweepQueue } from '../../functions/adapters/aws/sqs-sweep-queue.js';
import { KvService } from '../../functions/domain/kv/service.js';
import { createKvHandler } from '../../functions/handlers/kv.js';
import { createTokenVerifier } from '../../functions/adapters/jwt-token-verifier.js';
import { Authenticator } from '../../functions/domain/authenticator.js';
import type { HttpEvent } from '../../functions/shared/http.js';
import { mintLocalToken } from '../../local/token.js';
import { useEngines } from '../support/engines.js';

const SECRET = 'kv-handler-test-secret';
const local = useEngines();
let authenticator: Authenticator;

beforeAll(async () => {
  authenticator = new Authenticator(createTokenVerifier({ secret: SECRET, algorithms: ['HS256'] }), new DynamoApiKeyStore(local.dynamo, local.engines.env.AUTH_TABLE!));
});

const handlerWith = (options: { table?: string; queueUrl?: string } = {}) => createKvHandler(new KvService({
  store: new DynamoKvStore(local.dynamo, options.table ?? local.engines.env.KV_TABLE!),
  sweeps: new SqsSweepQueue(local.sqs, options.queueUrl ?? local.engines.queueUrls.kvSweep),
  now: Date.now,
  randomBytes,
  settleMs: 1000,
}), authenticator);

async function event(routeKey: string, pathParameters: Record<string, string>, body?: { bytes: Buffer; contentType: string }): Promise<HttpEvent> {
  const [method, template] = routeKey.split(' ') as [string, string];
  const path = template.replace(/\{([A-Za-z_]+)\+?\}/g, (_, name: string) => pathParameters[name]!);
  const headers: Record<string, string> = { authorization: `Bearer ${await mintLocalToken({ secret: SECRET, sub: 'handler-user' })}` };
  if (body) headers['content-type'] = body.contentType;
  return {
    version: '2.0', routeKey, rawPath: path, rawQueryString: '', headers, pathParameters,
    requestContext: { http: { method, path, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: '' } },
    body: body?.bytes.toString('base64'), isBase64Encoded: body !== undefined,
  } as unknown as HttpEvent;
}

describe('kv handler', () => {
  it('an unexpected fault is a plain 500 internal_error with nothing internal in it', async () => {
    const res = await handlerWith({ table: 'no-such-table' })(await event('GET /storage/kv/{bucket}', { bucket: 'b' }));
    expect(res).toEqual({ statusCode: 500, headers: { 'content-type': 'application/json' }, body: '{"error":"internal_error"}' });
  });

  it('a purge whose sweep the queue refuses is 503 unavailable', async () => {
    const handler = handlerWith({ queueUrl: `${local.engines.queueUrls.kvSweep}-gone` });
    await handler(await event('PUT /storage/kv/{bucket}', { bucket: 'refused' }));
    const res = await handler(await event('DELETE /storage/kv/{bucket}/purge', { bucket: 'refused' }));
    expect(res.statusCode).toBe(503);
    expect(res.body).toBe('{"error":"unavailable"}');
  });

  it('stores a base64-encoded request body as its bytes and answers values base64-encoded', async () => {
    const handler = handlerWith();
    await handler(await event('PUT /storage/kv/{bucket}', { bucket: 'binary' }));
    const bytes = randomBytes(300);
    const put = await handler(await event('PUT /storage/kv/{bucket}/keys/{key+}', { bucket: 'binary', key: 'a/b' }, { bytes, contentType: 'image/png' }));
    expect(JSON.parse(put.body!)).toEqual({ data: { key: 'a/b', revision: 1 } });
    const res = await handler(await event('GET /storage/kv/{bucket}/keys/{key+}', { bucket: 'binary', key: 'a/b' }));
    expect(res.isBase64Encoded).toBe(true);
    expect(res.headers).toMatchObject({ 'content-type': 'image/png', 'x-content-type-options': 'nosniff' });
    expect(Buffer.from(res.body!, 'base64').equals(bytes)).toBe(true);
  });

  it('GET /storage/kv lists the caller\'s buckets a page at a time, in the shape of every list route', async () => {
    const handler = handlerWith();
    for (const bucket of ['list-b', 'list-a', 'list-c']) await handler(await event('PUT /storage/kv/{bucket}', { bucket }));
    const list = async (query: Record<string, string>) => {
      const listing = { ...(await event('GET /storage/kv', {})), queryStringParameters: query, rawQueryString: new URLSearchParams(query).toString() };
      const res = await handler(listing as HttpEvent);
      return { status: res.statusCode, body: JSON.parse(res.body!) };
    };
    const first = await list({ limit: '2' });
    expect(first.status).toBe(200);
    expect(first.body.data.buckets).toHaveLength(2);
    expect(first.body.data.buckets[0]).toEqual({ name: expect.any(String), description: null, ttl_seconds: null, max_value_bytes: expect.any(Number), created_at: expect.any(String) });
    expect(first.body.data.next_cursor).toEqual(expect.any(String));
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page = await list(cursor ? { limit: '1', cursor } : { limit: '1' });
      expect(page.body.data.buckets.length).toBeLessThanOrEqual(1);
      seen.push(...page.body.data.buckets.map((b: { name: string }) => b.name));
      cursor = page.body.data.next_cursor;
    } while (cursor);
    // Every bucket of the account once, in name order (the tests above made some too).
    expect(seen).toEqual([...seen].sort());
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen.filter((n) => n.startsWith('list-'))).toEqual(['list-a', 'list-b', 'list-c']);
    expect(await list({ limit: '0' })).toEqual({ status: 400, body: { error: 'validation_error', message: 'limit must be an integer from 1 to 1000' } });
  });
});
