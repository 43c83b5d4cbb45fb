/**
 * Writes the data directory fixture of this release: `npx tsx bin/make-data-fixture.ts` makes
 * `test/fixtures/data-dirs/<package.json version>/` (a data directory and `manifest.json`), which
 * `test/upgrades/data-dir-<version>.test.ts` opens with later code. Run it on the release's own
 * commit, once per layout change (docs/local-stack.md, "The data directory"). It starts the local stack on a
 * fresh data directory, puts one of each kind of stored thing in it over HTTP, stops it cleanly,
 * and copies what a later start needs: not the lock, the pid file or LevelDB's text logs.
 */
import { createHash, createHmac } from 'node:crypto';
import { cp, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import type { CustomSignatureConfig } from '../functions/domain/webhooks/signatures/custom.js';
import { LAYOUT_VERSION } from '../local/data-dir.js';
import { startLocalStack, type LocalStack } from '../local/stack.js';
import { call } from '../test/support/local-stack.js';
import { signCustom, signStripe } from '../test/support/signers.js';
import { totpCodeAt } from '../test/support/totp.js';

const ROOT = resolve(import.meta.dirname, '..');
/** A part of a multipart upload is 5 MiB (S3's smallest but the last): this makes two parts. */
const MULTIPART_SIZE = 5 * 1024 * 1024 + 4096;
/** What is left out of the copy: the running stack's lock and pid, and LevelDB's human-readable logs. */
const LEFT_OUT = new Set(['lock', 'flowgate.pid', 'address.json', 'LOG', 'LOG.old']);

/** What the fixture holds, for the test that opens it. Values a test compares are here; secrets it needs too. */
export interface DataDirManifest {
  flowgate_version: string;
  layout: number;
  /** When it was written: executions are kept 7 days, so a test reads them with its clock set here. */
  written_at: string;
  /** The `sub` (and account) of every bearer token the fixture was written with. */
  subject: string;
  api_key: { id: string; value: string };
  kv: {
    buckets: Record<string, { ttl_seconds: number | null; description: string | null }>;
    /** Values that read back: bucket, key, content type, text. */
    values: { bucket: string; key: string; content_type: string; text: string }[];
    /** Values written to a bucket with a 1 s TTL: gone by the time anyone reads them. */
    expired: { bucket: string; key: string }[];
  };
  objects: {
    store: string;
    /** Objects written through the API (at most a few KB): their bytes in base64. */
    inline: { key: string; content_type: string; metadata: Record<string, string>; base64: string }[];
    /** The object uploaded in parts: its bytes are `multipartBytes(size)`, checked by digest. */
    multipart: { key: string; content_type: string; size: number; parts: number; sha256: string };
  };
  stream: {
    name: string;
    consumer: string;
    published: { seq: number; data: unknown; msg_id: string }[];
    acked: number[];
    /** Delivered once, never acknowledged: due again. */
    pending: number[];
    /** Never delivered to the consumer. */
    undelivered: number[];
  };
  triggers: {
    id: string;
    webhook_id: string;
    flow: string;
    signature: { service: string; secret: string; custom?: CustomSignatureConfig };
    /** Its executions, newest first, as the list showed them. */
    executions: { execution_id: string; event_id: string; status: string; body: string }[];
  }[];
  totp: { secret: string; factor_id: string; recovery_codes: string[] };
  /** The `kid` of the key that signs step-up proofs (`/.well-known/jwks.json`). */
  mfa_signing_kid: string;
}

/**
 * The multipart object's bytes: 4 KiB of SHA-256 output repeated, each 4 KiB block then marked with
 * its index. Every block differs (a part moved or dropped shows), yet git's zlib keeps the 5 MiB to a few KB.
 */
export function multipartBytes(size: number): Buffer {
  const block = Buffer.alloc(4096);
  for (let i = 0; i < 4096 / 32; i++) createHash('sha256').update(`flowgate data fixture ${i}`).digest().copy(block, i * 32);
  const bytes = Buffer.alloc(size);
  for (let offset = 0, index = 0; offset < size; offset += 4096, index++) {
    block.copy(bytes, offset);
    if (offset + 8 <= size) bytes.writeBigUInt64BE(BigInt(index), offset);
  }
  return bytes;
}

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
/** Twice percent-encoded per segment, as keys travel in URLs (docs/kv.md, "Keys in URLs"). */
const keyPath = (key: string) => key.split('/').map((segment) => encodeURIComponent(encodeURIComponent(segment))).join('/');

async function expectStatus(response: Promise<{ status: number; text: string; json: any }>, status: number, what: string) {
  const res = await response;
  if (res.status !== status) throw new Error(`${what}: ${res.status} ${res.text}`);
  return res.json;
}

async function until<T>(what: string, read: () => Promise<T | undefined>, withinMs = 30_000): Promise<T> {
  for (const deadline = Date.now() + withinMs; Date.now() < deadline; await new Promise((r) => setTimeout(r, 100))) {
    const value = await read();
    if (value !== undefined) return value;
  }
  throw new Error(`${what} did not happen within ${withinMs} ms`);
}

/** Fills a stack's data directory with one of each kind of stored thing; returns what it wrote. */
export async function fill(stack: LocalStack, subject: string): Promise<Omit<DataDirManifest, 'flowgate_version' | 'layout' | 'written_at'>> {
  const token = await stack.token(subject);
  const request = (method: string, path: string, options: Parameters<typeof call>[3] = {}) => call(stack, method, path, { token, ...options });

  const created = await expectStatus(request('POST', '/api-keys'), 201, 'create API key');
  const api_key = { id: created.data.id as string, value: created.data.api_key as string };

  // KV: values without a lifetime, one with a century's, and one that expires a second after it is written.
  const buckets = {
    kept: { ttl_seconds: null, description: 'values without a lifetime' },
    'long-lived': { ttl_seconds: 100 * 365 * 24 * 3600, description: 'values that outlive any test' },
    'short-lived': { ttl_seconds: 1, description: 'values that expire at once' },
  };
  for (const [name, config] of Object.entries(buckets)) await expectStatus(request('PUT', `/storage/kv/${name}`, { body: config }), 201, `create bucket ${name}`);
  const values = [
    { bucket: 'kept', key: 'greeting', content_type: 'text/plain', text: 'hello from 1.0.0' },
    { bucket: 'kept', key: 'config/app settings?.json', content_type: 'application/json', text: '{"theme":"dark","retries":3}' },
    { bucket: 'long-lived', key: 'session/abc', content_type: 'text/plain', text: 'lives for a century' },
  ];
  const expired = [{ bucket: 'short-lived', key: 'gone' }];
  for (const v of [...values, ...expired.map((e) => ({ ...e, content_type: 'text/plain', text: 'expires in a second' }))]) {
    await expectStatus(request('PUT', `/storage/kv/${v.bucket}/keys/${keyPath(v.key)}`, { rawBody: v.text, headers: { 'content-type': v.content_type } }), 200, `put ${v.key}`);
  }

  // Objects: two through the API, one uploaded in two parts straight to S3.
  const store = 'files';
  await expectStatus(request('PUT', `/storage/objects/${store}`, { body: { description: 'objects of 1.0.0' } }), 201, 'create store');
  const inline: DataDirManifest['objects']['inline'] = [
    { key: 'notes/readme.txt', content_type: 'text/plain', metadata: { author: 'fixture' }, base64: Buffer.from('Kept across upgrades.\n').toString('base64') },
    { key: 'bin/block.bin', content_type: 'application/octet-stream', metadata: {}, base64: createHash('sha512').update('block').digest().toString('base64') },
  ];
  for (const o of inline) {
    const headers = { 'content-type': o.content_type, ...Object.fromEntries(Object.entries(o.metadata).map(([name, value]) => [`x-meta-${name}`, value])) };
    await expectStatus(request('PUT', `/storage/objects/${store}/objects/${keyPath(o.key)}`, { rawBody: Buffer.from(o.base64, 'base64'), headers }), 200, `put ${o.key}`);
  }
  const bytes = multipartBytes(MULTIPART_SIZE);
  const multipart = { key: 'big/parts.bin', content_type: 'application/octet-stream', size: bytes.length, parts: 0, sha256: sha256(bytes) };
  const upload = (await expectStatus(request('POST', `/storage/objects/${store}/uploads`, { body: { key: multipart.key, size: multipart.size, content_type: multipart.content_type } }), 201, 'start upload')).data;
  const parts: { part_number: number; etag: string }[] = [];
  let offset = 0;
  for (const part of upload.parts as { part_number: number; size: number; url: string }[]) {
    const res = await fetch(part.url, { method: 'PUT', body: bytes.subarray(offset, offset + part.size) });
    if (res.status !== 200) throw new Error(`upload part ${part.part_number}: ${res.status} ${await res.text()}`);
    parts.push({ part_number: part.part_number, etag: res.headers.get('etag')! });
    offset += part.size;
  }
  multipart.parts = parts.length;
  if (parts.length < 2) throw new Error('the multipart object must have at least two parts');
  await expectStatus(request('POST', `/storage/objects/${store}/uploads/${upload.id}/complete`, { body: { parts } }), 200, 'complete upload');

  // A stream whose consumer is part-way: 1-2 acknowledged, 3-4 delivered and pending, 5-6 never delivered.
  const stream = { name: 'orders', consumer: 'shipper', published: [] as { seq: number; data: unknown; msg_id: string }[], acked: [1, 2], pending: [3, 4], undelivered: [5, 6] };
  await expectStatus(request('PUT', `/storage/streams/${stream.name}`, { body: { description: 'a stream of 1.0.0' } }), 201, 'create stream');
  const messages = [1, 2, 3, 4, 5, 6].map((n) => ({ data: { order: n, item: `item-${n}` }, msg_id: `order-${n}` }));
  const { seqs } = (await expectStatus(request('POST', `/storage/streams/${stream.name}/messages`, { body: { messages } }), 200, 'publish')).data;
  stream.published = messages.map((m, i) => ({ seq: seqs[i], ...m }));
  // ack_wait 1 s: what was delivered and not acknowledged is due again whenever the fixture is opened.
  await expectStatus(request('PUT', `/storage/streams/${stream.name}/consumers/${stream.consumer}`, { body: { ack_wait_seconds: 1 } }), 201, 'create consumer');
  const fetched = (await expectStatus(request('POST', `/storage/streams/${stream.name}/consumers/${stream.consumer}/fetch`, { body: { batch: 4 } }), 200, 'fetch')).data.messages as { seq: number }[];
  if (fetched.map((m) => m.seq).join() !== '1,2,3,4') throw new Error(`fetched ${fetched.map((m) => m.seq)}`);
  await expectStatus(request('POST', `/storage/streams/${stream.name}/consumers/${stream.consumer}/ack`, { body: { seqs: stream.acked } }), 200, 'ack');

  // Triggers with signed deliveries, their secrets sealed at rest: a Stripe one and a custom HMAC one.
  const triggers: DataDirManifest['triggers'] = [];
  const now = () => Math.floor(Date.now() / 1000);
  const custom: CustomSignatureConfig = { algorithm: 'sha256', header: 'x-signature', encoding: 'hex', prefix: 'sha256=' };
  const senders = [
    {
      signature: { service: 'stripe', secret: 'whsec_flowgate-data-fixture-1.0.0' },
      events: ['evt_fixture_1', 'evt_fixture_2'].map((id) => JSON.stringify({ id, type: 'invoice.paid', data: { object: { amount: 100 } } })),
      sign: (secret: string, body: string) => signStripe({ secret, body, timestamp: now() }),
    },
    {
      signature: { service: 'custom', secret: 'flowgate-data-fixture-hmac-secret', custom },
      events: [JSON.stringify({ id: 'custom_fixture_1', type: 'build.finished', ok: true })],
      sign: (secret: string, body: string) => signCustom(custom, secret, body),
    },
  ];
  for (const sender of senders) {
    const trigger = (await expectStatus(request('POST', '/triggers', { body: { flow: 'echo', signature: sender.signature } }), 201, 'create trigger')).data;
    for (const body of sender.events) {
      const res = await fetch(trigger.url, { method: 'POST', headers: { 'content-type': 'application/json', ...sender.sign(sender.signature.secret, body) }, body });
      if (res.status !== 200) throw new Error(`deliver to ${sender.signature.service}: ${res.status} ${await res.text()}`);
    }
    // One refused (a wrong secret): recorded, with its body, and replayable.
    const forged = JSON.stringify({ id: `${sender.signature.service}_forged`, type: 'invoice.paid' });
    const refused = await fetch(trigger.url, { method: 'POST', headers: { 'content-type': 'application/json', ...sender.sign(createHmac('sha256', 'x').update(forged).digest('hex'), forged) }, body: forged });
    if (refused.status !== 401) throw new Error(`a forged delivery was answered ${refused.status}`);
    const executions = await until('the deliveries to finish', async () => {
      const list = (await request('GET', `/triggers/${trigger.id}/executions`)).json.data.executions as { execution_id: string; event_id: string; status: string }[];
      return list.length === sender.events.length + 1 && list.filter((e) => e.status === 'succeeded').length === sender.events.length ? list : undefined;
    });
    const bodyOf = async (id: string) => (await request('GET', `/triggers/${trigger.id}/executions/${id}`)).json.data.request.body as string;
    triggers.push({
      id: trigger.id,
      webhook_id: trigger.webhook_id,
      flow: 'echo',
      signature: sender.signature,
      executions: await Promise.all(executions.map(async (e) => ({ execution_id: e.execution_id, event_id: e.event_id, status: e.status, body: await bodyOf(e.execution_id) }))),
    });
  }

  // A TOTP factor enrolled with a real code, and its recovery codes.
  const { secret } = (await expectStatus(request('POST', '/accounts/totp-registration'), 200, 'start TOTP registration')).data;
  const confirmed = (await expectStatus(request('POST', '/accounts/confirm-totp-registration', { body: { code: totpCodeAt(secret, Date.now()), secret, name: 'Fixture phone' } }), 200, 'confirm TOTP')).data;
  const factors = (await expectStatus(request('GET', '/accounts/factors'), 200, 'list factors')).data;
  const totp = { secret, factor_id: factors.factors[0].id as string, recovery_codes: confirmed.recovery_codes as string[] };
  const jwks = (await expectStatus(request('GET', '/.well-known/jwks.json'), 200, 'read JWKS'));

  // The value with a 1 s lifetime reads as missing before the stack stops.
  await until('the short-lived value to expire', async () => (await request('GET', `/storage/kv/short-lived/keys/gone`)).status === 404 || undefined);

  return {
    subject,
    api_key,
    kv: { buckets, values, expired },
    objects: { store, inline, multipart },
    stream,
    triggers,
    totp,
    mfa_signing_kid: jwks.keys[0].kid,
  };
}

async function listFiles(dir: string): Promise<string[]> {
  return (await readdir(dir, { recursive: true, withFileTypes: true })).filter((e) => e.isFile()).map((e) => relative(dir, join(e.parentPath, e.name))).sort();
}

async function main() {
  // As \`npm start\` does: the SDK's notice that its 2027 releases need Node 22 says nothing about this run.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const version = (JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
  const target = resolve(process.argv[2] ?? join(ROOT, 'test/fixtures/data-dirs', version));
  if (await stat(target).catch(() => undefined)) throw new Error(`${target} exists; remove it first to write it again`);
  const work = await mkdtemp(join(tmpdir(), 'flowgate-fixture-'));
  try {
    const dataDir = join(work, 'data');
    const stack = await startLocalStack({ port: 0, dataDir });
    let filled: Awaited<ReturnType<typeof fill>>;
    const writtenAt = new Date().toISOString();
    try {
      filled = await fill(stack, 'fixture-user');
    } finally {
      // A clean stop: the flow worker done, dynalite's LevelDB closed, the lock released.
      await stack.stop();
    }
    await cp(dataDir, target, { recursive: true, filter: (source) => !LEFT_OUT.has(source.split(/[\\/]/).pop()!) });
    const manifest: DataDirManifest = { flowgate_version: version, layout: LAYOUT_VERSION, written_at: writtenAt, ...filled };
    await writeFile(join(target, '..', `${version}.manifest.json`), `${JSON.stringify(manifest, null, 2)}\n`);
    const files = await listFiles(target);
    const sizes = await Promise.all(files.map(async (file) => (await stat(join(target, file))).size));
    console.log(`Wrote ${target} (${files.length} files, ${(sizes.reduce((a, b) => a + b, 0) / 1024).toFixed(0)} KiB) and ${version}.manifest.json beside it:`);
    for (const [i, file] of files.entries()) console.log(`  ${file}  ${sizes[i]}`);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  await main();
  process.exit(0);
}
