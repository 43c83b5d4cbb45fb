import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { chmod, cp, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createLocalJWKSet, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { multipartBytes, type DataDirManifest } from '../../bin/make-data-fixture.js';
import { DataDirError, LAYOUT_VERSION } from '../../local/data-dir.js';
import { startLocalStack, type LocalStack } from '../../local/stack.js';
import { call } from '../support/local-stack.js';
import { signCustom, signStripe } from '../support/signers.js';
import { totpCodeAt } from '../support/totp.js';

/**
 * The data directory release 1.0.0 wrote (`bin/make-data-fixture.ts`), opened by today's code: every
 * kind of stored thing in it behaves as it did, over the public HTTP API only, so a change to how
 * items are kept that would strand old data fails here. Each test file gets a copy; the fixture is
 * never written to.
 */
const VERSION = '1.0.0';
const FIXTURES = resolve(import.meta.dirname, '../fixtures/data-dirs');
const manifest = JSON.parse(readFileSync(join(FIXTURES, `${VERSION}.manifest.json`), 'utf8')) as DataDirManifest;

let root: string;
let stack: LocalStack;
let token: string;
/**
 * Executions are kept 7 days, and a fixture is older than that: the stack's clock (the receiver's
 * and the trigger routes') runs from an hour after the fixture was written, as for a user who
 * upgrades within the week. Everything else runs on the real clock.
 */
const offsetMs = Date.parse(manifest.written_at) + 3600_000 - Date.now();
const fixtureNow = () => Date.now() + offsetMs;

/** A copy of the fixture, with the modes a data directory has (git keeps neither 0700 nor 0600). */
async function copyOfFixture(name: string): Promise<string> {
  const dir = join(root, name);
  await cp(join(FIXTURES, VERSION), dir, { recursive: true });
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    await chmod(join(entry.parentPath, entry.name), entry.isDirectory() ? 0o700 : 0o600);
  }
  await chmod(dir, 0o700);
  return dir;
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'flowgate-upgrade-'));
  stack = await startLocalStack({ port: 0, dataDir: await copyOfFixture('data'), now: fixtureNow, visibilityTimeoutSeconds: 10 });
  token = await stack.token(manifest.subject);
});
afterAll(async () => {
  await stack?.stop();
  if (root) await rm(root, { recursive: true, force: true });
});

const request = (method: string, path: string, options: Parameters<typeof call>[3] = {}) => call(stack, method, path, { token, ...options });
const keyPath = (key: string) => key.split('/').map((segment) => encodeURIComponent(encodeURIComponent(segment))).join('/');
const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

async function until<T>(what: string, read: () => Promise<T | undefined>, withinMs = 30_000): Promise<T> {
  for (const deadline = Date.now() + withinMs; Date.now() < deadline; await new Promise((r) => setTimeout(r, 100))) {
    const value = await read();
    if (value !== undefined) return value;
  }
  throw new Error(`${what} did not happen within ${withinMs} ms`);
}

describe(`a data directory written by ${VERSION}`, () => {
  it('is reopened as it is: same layout, nothing unfinished to recover', async () => {
    expect(manifest.layout).toBe(1);
    expect(stack.data?.created).toBe(false);
    // Every count of what a restart found unfinished is 0: the fixture was written by a clean stop.
    expect(Object.entries(stack.data!.recovered).filter(([, count]) => count !== 0)).toEqual([]);
    expect(JSON.parse(await readFile(join(stack.data!.path, 'layout.json'), 'utf8'))).toEqual({ layout: LAYOUT_VERSION });
  });

  it('KV: buckets keep their configuration, values read back with their type, and the expired value is gone', async () => {
    const buckets = (await request('GET', '/storage/kv')).json.data.buckets as { name: string; ttl_seconds: number | null; description: string | null }[];
    expect(Object.fromEntries(buckets.map((b) => [b.name, { ttl_seconds: b.ttl_seconds, description: b.description }]))).toEqual(manifest.kv.buckets);
    for (const value of manifest.kv.values) {
      const res = await request('GET', `/storage/kv/${value.bucket}/keys/${keyPath(value.key)}`);
      expect(res.status, value.key).toBe(200);
      expect(res.text).toBe(value.text);
      expect(res.headers.get('content-type')).toBe(value.content_type);
    }
    expect((await request('GET', '/storage/kv/kept/keys')).json.data.keys).toEqual(manifest.kv.values.filter((v) => v.bucket === 'kept').map((v) => v.key).sort());
    for (const { bucket, key } of manifest.kv.expired) {
      expect((await request('GET', `/storage/kv/${bucket}/keys/${keyPath(key)}`)).status).toBe(404);
      expect((await request('GET', `/storage/kv/${bucket}/keys`)).json.data.keys).toEqual([]);
    }
    // And the buckets still take writes.
    expect((await request('PUT', '/storage/kv/kept/keys/after-upgrade', { rawBody: 'new', headers: { 'content-type': 'text/plain' } })).status).toBe(200);
    expect((await request('GET', '/storage/kv/kept/keys/after-upgrade')).text).toBe('new');
  });

  it('objects: each reads back byte for byte with its type and metadata, the multipart one too, and the usage is as it was', async () => {
    const { store, inline, multipart } = manifest.objects;
    for (const object of inline) {
      const res = await fetch(`${stack.baseUrl}/storage/objects/${store}/objects/${keyPath(object.key)}`, { headers: { authorization: `Bearer ${token}` } });
      expect(res.status, object.key).toBe(200);
      expect(Buffer.from(await res.arrayBuffer()).toString('base64')).toBe(object.base64);
      expect(res.headers.get('content-type')).toBe(object.content_type);
      for (const [name, value] of Object.entries(object.metadata)) expect(res.headers.get(`x-meta-${name}`)).toBe(value);
    }
    const redirect = await fetch(`${stack.baseUrl}/storage/objects/${store}/objects/${keyPath(multipart.key)}`, { headers: { authorization: `Bearer ${token}` }, redirect: 'manual' });
    expect(redirect.status).toBe(307);
    const bytes = Buffer.from(await (await fetch(redirect.headers.get('location')!)).arrayBuffer());
    expect(bytes.length).toBe(multipart.size);
    expect(sha256(bytes)).toBe(multipart.sha256);
    expect(bytes.equals(multipartBytes(multipart.size))).toBe(true);
    const head = await request('HEAD', `/storage/objects/${store}/objects/${keyPath(multipart.key)}`);
    expect([head.status, head.headers.get('content-length'), head.headers.get('content-type')]).toEqual([200, String(multipart.size), multipart.content_type]);

    const listed = (await request('GET', `/storage/objects/${store}/objects`)).json.data.objects as { key: string; size: number }[];
    const sizes = [...inline.map((o) => [o.key, Buffer.from(o.base64, 'base64').length] as const), [multipart.key, multipart.size] as const];
    expect(listed.map((o) => [o.key, o.size])).toEqual(sizes.map(([key, size]) => [key, size]).sort(([a], [b]) => (a! < b! ? -1 : 1)));
    expect((await request('GET', `/storage/objects/${store}`)).json.data).toMatchObject({ objects: sizes.length, bytes: sizes.reduce((sum, [, size]) => sum + size, 0) });
  });

  it('streams: the consumer resumes where it was, the pending messages delivered again and the acknowledged ones not', async () => {
    const { name, consumer, published, acked, pending, undelivered } = manifest.stream;
    const base = `/storage/streams/${name}`;
    expect((await request('GET', base)).json.data).toMatchObject({ messages: published.length, first_seq: 1, last_seq: published.length, consumers: 1 });
    expect((await request('GET', `${base}/consumers/${consumer}`)).json.data).toMatchObject({
      ack_floor: Math.max(...acked), delivered_seq: Math.max(...pending), num_ack_pending: pending.length, num_pending: undelivered.length,
    });
    const fetched = (await request('POST', `${base}/consumers/${consumer}/fetch`, { body: { batch: 100 } })).json.data.messages as { seq: number; data: unknown; deliveries: number }[];
    expect(fetched.map((m) => [m.seq, m.deliveries])).toEqual([...pending.map((seq) => [seq, 2]), ...undelivered.map((seq) => [seq, 1])]);
    expect(fetched.map((m) => m.data)).toEqual([...pending, ...undelivered].map((seq) => published.find((m) => m.seq === seq)!.data));
    expect((await request('POST', `${base}/consumers/${consumer}/ack`, { body: { seqs: fetched.map((m) => m.seq) } })).status).toBe(200);
    expect((await request('POST', `${base}/consumers/${consumer}/fetch`, { body: { batch: 100 } })).json.data.messages).toEqual([]);
    // The log reads back in order, and a publish continues its sequence.
    expect(((await request('GET', `${base}/messages`)).json.data.messages as { seq: number; data: unknown; msg_id: string }[]).map((m) => [m.seq, m.data, m.msg_id]))
      .toEqual(published.map((m) => [m.seq, m.data, m.msg_id]));
    expect((await request('POST', `${base}/messages`, { body: { messages: [{ data: 'after upgrade' }] } })).json.data.seqs).toEqual([published.length + 1]);
  });

  it('triggers: the deliveries list as they were, a stored delivery replays through the flow, and the sealed signing secrets still verify', async () => {
    const listed = (await request('GET', '/triggers')).json.data.triggers as { id: string; signature: { service: string } }[];
    expect(listed.map((t) => [t.id, t.signature.service]).sort()).toEqual(manifest.triggers.map((t) => [t.id, t.signature.service]).sort());
    for (const trigger of manifest.triggers) {
      const executions = (await request('GET', `/triggers/${trigger.id}/executions`)).json.data.executions as { execution_id: string; event_id: string; status: string }[];
      expect(executions.map((e) => [e.execution_id, e.event_id, e.status])).toEqual(trigger.executions.map((e) => [e.execution_id, e.event_id, e.status]));
      for (const execution of trigger.executions) {
        expect((await request('GET', `/triggers/${trigger.id}/executions/${execution.execution_id}`)).json.data.request.body).toBe(execution.body);
      }

      // A succeeded delivery and the refused one (its body was stored) run again through the flow.
      for (const original of [trigger.executions.find((e) => e.status === 'succeeded')!, trigger.executions.find((e) => e.status === 'refused')!]) {
        const replay = await request('POST', `/triggers/${trigger.id}/executions/${original.execution_id}/replay`);
        expect(replay.status, replay.text).toBe(202);
        expect(replay.json.data.replay_of).toBe(original.execution_id);
        const done = await until('the replay to run', async () => {
          const execution = (await request('GET', `/triggers/${trigger.id}/executions/${replay.json.data.execution_id}`)).json.data;
          return execution.status === 'succeeded' || execution.status === 'failed' ? execution : undefined;
        }, 60_000);
        expect(done).toMatchObject({ status: 'succeeded', event_id: original.event_id, replay_of: original.execution_id });
        expect(done.output.received).toEqual(JSON.parse(original.body));
      }

      // A new delivery signed with the secret 1.0.0 sealed is accepted; one signed with another is refused.
      const body = JSON.stringify({ id: `after_upgrade_${trigger.signature.service}`, type: 'invoice.paid' });
      const sign = (secret: string) => trigger.signature.service === 'stripe'
        ? signStripe({ secret, body, timestamp: Math.floor(fixtureNow() / 1000) })
        : signCustom(trigger.signature.custom!, secret, body);
      const url = `${stack.webhookBaseUrl}/${trigger.webhook_id}`;
      const deliver = (headers: Record<string, string>) => call(stack, 'POST', url.slice(stack.baseUrl.length), { rawBody: body, headers: { 'content-type': 'application/json', ...headers } });
      expect((await deliver(sign(trigger.signature.secret))).json).toMatchObject({ status: 'accepted' });
      expect((await deliver(sign(`${trigger.signature.secret}-not`))).status).toBe(401);
    }
  });

  it('TOTP: the factor verifies a fresh code with a proof signed by the same key, and a recovery code works once', async () => {
    const { secret, factor_id, recovery_codes } = manifest.totp;
    expect((await request('GET', '/accounts/factors')).json.data).toMatchObject({ factors: [{ id: factor_id, type: 'totp' }], recovery_codes_remaining: recovery_codes.length });
    expect((await request('POST', '/accounts/totp-registration')).json).toEqual({ error: 'already_registered', message: expect.any(String) });

    const verified = await request('POST', '/accounts/totp/verify', { body: { code: totpCodeAt(secret, fixtureNow()) } });
    expect(verified.status, verified.text).toBe(200);
    expect(verified.json.data.factor_id).toBe(factor_id);
    const jwks = (await call(stack, 'GET', '/.well-known/jwks.json')).json;
    expect(jwks.keys.map((k: { kid: string }) => k.kid)).toContain(manifest.mfa_signing_kid);
    const { protectedHeader, payload } = await jwtVerify(verified.json.data.mfa_token, createLocalJWKSet(jwks), { algorithms: ['ES256'], currentDate: new Date(fixtureNow()) });
    expect([protectedHeader.kid, payload.sub]).toEqual([manifest.mfa_signing_kid, manifest.subject]);

    const [code] = recovery_codes;
    const used = await request('POST', '/accounts/recovery-codes/verify', { body: { code } });
    expect(used.status, used.text).toBe(200);
    expect(used.json.data.remaining).toBe(recovery_codes.length - 1);
    expect((await request('POST', '/accounts/recovery-codes/verify', { body: { code } })).json).toEqual({ error: 'invalid_code', message: expect.any(String) });
  });

  it('API keys: the key, minted before scopes, is listed and reaches storage and triggers (its scopes since 1.1.0), not key management', async () => {
    const { id, value } = manifest.api_key;
    const listed = await request('GET', '/api-keys');
    expect(listed.status, listed.text).toBe(200);
    expect(listed.json.data.api_keys.map((k: { id: string }) => k.id)).toEqual([id]);
    const { bucket, key, text } = manifest.kv.values[0]!;
    expect((await call(stack, 'GET', `/storage/kv/${bucket}/keys/${keyPath(key)}`, { apiKey: value })).text).toBe(text);
    expect((await call(stack, 'GET', '/triggers', { apiKey: value })).status).toBe(200);
    expect((await call(stack, 'GET', '/api-keys', { apiKey: value })).status).toBe(401);
    expect((await call(stack, 'GET', '/storage/kv', { apiKey: `${value.slice(0, -1)}x` })).status).toBe(401);
  });
});

describe('a data directory of a layout newer than this code reads', () => {
  it('is refused with a message that says so, and left as it was', async () => {
    const dir = await copyOfFixture('newer');
    await writeFile(join(dir, 'layout.json'), `${JSON.stringify({ layout: LAYOUT_VERSION + 1 })}\n`);
    const files = async () => Object.fromEntries(await Promise.all((await readdir(dir, { recursive: true, withFileTypes: true })).filter((e) => e.isFile()).map(async (e) => [join(e.parentPath, e.name), sha256(await readFile(join(e.parentPath, e.name)))])));
    const before = await files();
    const refused = await startLocalStack({ port: 0, dataDir: dir }).then(async (opened) => {
      await opened.stop();
      return undefined;
    }, (error: unknown) => error);
    expect(refused).toBeInstanceOf(DataDirError);
    expect((refused as Error).message).toBe(`The data directory ${dir} was written by a newer Flowgate (layout ${LAYOUT_VERSION + 1}; this one reads layout ${LAYOUT_VERSION}); update Flowgate, or choose another directory with FLOWGATE_DATA_DIR`);
    expect(await files()).toEqual(before);
  });
});
