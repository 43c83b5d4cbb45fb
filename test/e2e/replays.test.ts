import { createHmac } from 'node:crypto';
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dynamoClient } from '../../functions/adapters/aws/clients/dynamo.js';
import { DynamoExecutionStore } from '../../functions/adapters/aws/dynamo-execution-store.js';
import { replayClaim } from '../../functions/domain/webhooks/replay-key.js';
import { senderRow } from '../../functions/domain/webhooks/senders/catalog.js';
import { HttpsKeyFetcher } from '../../functions/adapters/https-key-fetcher.js';
import type { KeyFetcher } from '../../functions/domain/webhooks/senders/context.js';
import { PAYPAL_CERT_URL, signPayPal } from '../support/asymmetric-signers.js';
import { selfSignedCertificate } from '../support/certificates.js';
import { localFetcher, startKeyServer, type KeyServer } from '../support/key-server.js';
import { useLocalStack } from '../support/local-stack.js';
import { signGithub, signStandardWebhooks, signStripe } from '../support/signers.js';
import { createTrigger, deliver, waitForExecutions } from '../support/webhooks.js';

/**
 * Replays and retries over HTTP on the local stack, as the threat model of the verifier review has
 * them: an attacker who knows a trigger's URL and has seen one genuine delivery, but not its secret.
 * Deduplication keys on signed material only, and a signed delivery is never run twice within its
 * sender's tolerance (`functions/domain/webhooks/replay-key.ts`).
 */
const crc32 = createRequire(import.meta.url)('buffer-crc32') as { unsigned(input: string | Buffer): number };

const PAYPAL_WEBHOOK_ID = '1JE4291016473214C';
const paypalSigner = selfSignedCertificate({ commonName: 'messageverificationcerts.paypal.com' });
let server: KeyServer;
let fetcher: KeyFetcher | undefined;
const senderKeys: KeyFetcher = { fetchText: (url) => fetcher!.fetchText(url) };
beforeAll(async () => {
  server = await startKeyServer();
  fetcher = localFetcher(server, new HttpsKeyFetcher({ ca: server.ca }));
  const { host, pathname } = new URL(PAYPAL_CERT_URL);
  server.routes.set(`/${host}${pathname}`, { body: paypalSigner.pem });
});
afterAll(async () => server?.close());

/** Before the stack (and its receiver) started: a delivery signed then may have been claimed by an older version. */
const signedBeforeStart = Math.floor(Date.now() / 1000) - 5;
const stack = useLocalStack({ senderKeys });

const nowSeconds = () => Math.floor(Date.now() / 1000);
const statuses = (executions: { status: string }[]) => executions.map((e) => e.status).sort();
/** The trigger's executions once `total` are recorded, none still queued or running, and a flow has succeeded. */
const settled = (token: string, triggerId: string, total: number) =>
  waitForExecutions(stack, token, triggerId, (list) => list.length === total && list.some((e) => e.status === 'succeeded') && list.every((e) => e.status !== 'queued' && e.status !== 'running'));

describe('stripe: an exact replay of a captured delivery', () => {
  const secret = 'whsec_replay_e2e';
  const body = JSON.stringify({ id: 'evt_replayed', type: 'charge.succeeded', data: { object: { amount: 100 } } });

  it('with deduplicate off, is refused as duplicate within the tolerance and the flow runs once', async () => {
    const token = await stack.token('replay-owner');
    const trigger = await createTrigger(stack, token, { flow: 'echo', signature: { service: 'stripe', secret } });
    const capture = signStripe({ secret, body, timestamp: nowSeconds() });
    expect((await deliver(trigger.url, body, capture)).json).toEqual({ status: 'accepted', event_id: 'evt_replayed' });
    const replay = await deliver(trigger.url, body, capture);
    expect(replay.status).toBe(200);
    expect(replay.json).toEqual({ status: 'duplicate' });
    const executions = await settled(token, trigger.id, 2);
    expect(statuses(executions)).toEqual(['duplicate', 'succeeded']);
    expect(executions.every((e) => e.event_id === 'evt_replayed')).toBe(true);
  });

  it('with deduplicate off, a retry Stripe signed anew still runs: only the same signed bytes are a replay', async () => {
    const token = await stack.token('replay-owner');
    const trigger = await createTrigger(stack, token, { flow: 'echo', signature: { service: 'stripe', secret } });
    const t = nowSeconds();
    expect((await deliver(trigger.url, body, signStripe({ secret, body, timestamp: t - 30 }))).json).toMatchObject({ status: 'accepted' });
    expect((await deliver(trigger.url, body, signStripe({ secret, body, timestamp: t }))).json).toMatchObject({ status: 'accepted' });
    expect(statuses(await settled(token, trigger.id, 2))).toEqual(['succeeded', 'succeeded']);
  });
});

describe('upgrade from 1.0.0: an exact replay claimed by the older version', () => {
  it('a delivery 1.0.0 took (its claim item) is still a duplicate when replayed to this version, though this version keys claims on the record', async () => {
    const secret = 'whsec_upgrade_e2e';
    const body = JSON.stringify({ id: 'evt_before_upgrade', type: 'charge.succeeded' });
    const token = await stack.token('upgrade-owner');
    const trigger = await createTrigger(stack, token, { flow: 'echo', signature: { service: 'stripe', secret } });
    const capture = signStripe({ secret, body, timestamp: signedBeforeStart });
    // What 1.0.0 wrote when it took the delivery: a claim item on the exact signed content (`claimEvent`).
    const claim = replayClaim(senderRow('stripe')!, false, { method: 'POST', url: trigger.url, headers: capture as Record<string, string>, rawBody: Buffer.from(body), body: { kind: 'json' as const, value: JSON.parse(body) as unknown } }, 'evt_before_upgrade')!;
    expect(claim.key).toMatch(/^sha256:/);
    await new DynamoExecutionStore(dynamoClient(stack.aws), stack.engines.env.EXECUTIONS_TABLE!, Date.now).claimEvent(trigger.id, claim.key, claim.ttlSeconds);
    const replay = await deliver(trigger.url, body, capture);
    expect(replay.json).toEqual({ status: 'duplicate' });
    // A delivery signed after this version started is claimed on its record alone, as before.
    const fresh = signStripe({ secret, body, timestamp: nowSeconds() });
    expect((await deliver(trigger.url, body, fresh)).json).toEqual({ status: 'accepted', event_id: 'evt_before_upgrade' });
    expect((await deliver(trigger.url, body, fresh)).json).toEqual({ status: 'duplicate' });
  });
});

describe('an idempotency-key header, which no sender signs, no longer drives deduplication of a signed trigger', () => {
  const secret = 'github-replay-e2e';

  it('two different signed events with the same forged idempotency-key both run', async () => {
    const token = await stack.token('idempotency-owner');
    const trigger = await createTrigger(stack, token, { flow: 'echo', deduplicate: true, signature: { service: 'github', secret } });
    const first = JSON.stringify({ action: 'opened', number: 1 });
    const second = JSON.stringify({ action: 'opened', number: 2 });
    expect((await deliver(trigger.url, first, { ...(await signGithub({ secret, body: first })), 'idempotency-key': 'same' })).json).toMatchObject({ status: 'accepted' });
    expect((await deliver(trigger.url, second, { ...(await signGithub({ secret, body: second })), 'idempotency-key': 'same' })).json).toMatchObject({ status: 'accepted' });
    const executions = await waitForExecutions(stack, token, trigger.id, (list) => list.filter((e) => e.status === 'succeeded').length === 2);
    expect(statuses(executions)).toEqual(['succeeded', 'succeeded']);
  });

  it('a replayed capture with a fresh idempotency-key (and delivery id) is still a duplicate', async () => {
    const token = await stack.token('idempotency-owner');
    const trigger = await createTrigger(stack, token, { flow: 'echo', deduplicate: true, signature: { service: 'github', secret } });
    const body = JSON.stringify({ action: 'closed', number: 3 });
    const signed = await signGithub({ secret, body });
    expect((await deliver(trigger.url, body, { ...signed, 'x-github-delivery': 'd-1', 'idempotency-key': 'k-1' })).json).toMatchObject({ status: 'accepted' });
    expect((await deliver(trigger.url, body, { ...signed, 'x-github-delivery': 'd-2', 'idempotency-key': 'k-2' })).json).toEqual({ status: 'duplicate' });
    expect(statuses(await settled(token, trigger.id, 2))).toEqual(['duplicate', 'succeeded']);
  });
});

describe('mailgun: the token is single-use (Mailgun signs the token and timestamp, not event-data)', () => {
  const key = 'key-mailgun-replay-e2e';
  const token = '9c3ab4f3a0a34c2e8d1e6b5a7f0c2d4e6f8a0b1c2d3e4f5a6b';
  const delivery = (event: Record<string, unknown>, timestamp: number) => JSON.stringify({
    signature: { timestamp: String(timestamp), token, signature: createHmac('sha256', key).update(`${timestamp}${token}`).digest('hex') },
    'event-data': event,
  });

  it('a second delivery with a seen token, with event-data of the attacker\'s choosing, is refused and the flow runs once, on the genuine event', async () => {
    const owner = await stack.token('mailgun-owner');
    const trigger = await createTrigger(stack, owner, { flow: 'echo', signature: { service: 'mailgun', secret: key } });
    const t = nowSeconds();
    expect((await deliver(trigger.url, delivery({ event: 'delivered', id: 'e-1' }, t))).json).toMatchObject({ status: 'accepted' });
    const forged = await deliver(trigger.url, delivery({ event: 'clicked', id: 'e-2', url: 'https://attacker.example/' }, t));
    expect(forged.json).toEqual({ status: 'duplicate' });
    const executions = await settled(owner, trigger.id, 2);
    expect(statuses(executions)).toEqual(['duplicate', 'succeeded']);
    expect(executions.find((e) => e.status === 'succeeded').output.received['event-data']).toEqual({ event: 'delivered', id: 'e-1' });
  });

  it('a token spent by a delivery the event filter ignored cannot come back with a body rewritten to pass it', async () => {
    const owner = await stack.token('mailgun-owner');
    const trigger = await createTrigger(stack, owner, { flow: 'echo', event_filter: ['wanted'], signature: { service: 'mailgun', secret: key } });
    const t = nowSeconds();
    expect((await deliver(trigger.url, delivery({ event: 'opened', id: 'e-3' }, t))).json).toEqual({ status: 'ignored', event_id: expect.any(String), reason: expect.any(String) });
    // Mailgun signs nothing of the body but its signature: a top-level `type` is the attacker's to add.
    const rewritten = JSON.stringify({ ...JSON.parse(delivery({ event: 'opened', id: 'e-3' }, t)), type: 'wanted' });
    expect((await deliver(trigger.url, rewritten)).json).toEqual({ status: 'duplicate' });
    const executions = await waitForExecutions(stack, owner, trigger.id, (list) => list.length === 2);
    expect(statuses(executions)).toEqual(['duplicate', 'ignored']);
  });
});

/**
 * Four bytes appended to `prefix`, and `suffix` after them, that give the whole the CRC32
 * `target`: CRC32 is linear, so any body can be given any CRC (the forgery PayPal's scheme allows).
 * Works backwards from the target through the suffix, then picks the table entries whose top bytes
 * build the register (https://www.cosic.esat.kuleuven.be/publications/article-14.pdf).
 */
function forgeCrc(prefix: string, suffix: string, target: number): Buffer {
  const table = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const byTop = new Map(table.map((entry, index) => [entry >>> 24, index]));
  let wanted = ~target >>> 0;
  for (const byte of [...Buffer.from(suffix)].reverse()) {
    const index = byTop.get(wanted >>> 24)!;
    wanted = ((((wanted ^ table[index]!) << 8) | ((index ^ byte) & 0xff)) >>> 0);
  }
  const indexes: number[] = [];
  for (let r = wanted, k = 0; k < 4; k++) {
    const index = byTop.get(r >>> 24)!;
    indexes.unshift(index);
    r = ((r ^ table[index]!) << 8) >>> 0;
  }
  let register = ~crc32.unsigned(prefix) >>> 0;
  return Buffer.from(indexes.map((index) => {
    const byte = (register ^ index) & 0xff;
    register = ((register >>> 8) ^ table[index]!) >>> 0;
    return byte;
  }));
}

/** A JSON body of the attacker's, padded so that its CRC32 is `target`'s (printable padding, so it stays JSON). */
function bodyWithCrc(target: number, amount: string): string {
  for (let nonce = 0; ; nonce++) {
    const prefix = `{"id":"WH-FORGED","event_type":"PAYMENT.CAPTURE.COMPLETED","resource":{"amount":{"currency_code":"USD","value":"${amount}"}},"pad":"${nonce}`;
    const bytes = forgeCrc(prefix, '"}', target);
    if (bytes.every((b) => b >= 0x20 && b < 0x7f && b !== 0x22 && b !== 0x5c)) return `${prefix}${bytes.toString('latin1')}"}`;
  }
}

describe('paypal: a transmission id is single-use (PayPal binds the body only by its CRC32)', () => {
  it('a body of the attacker\'s with the same CRC32, under a seen transmission id, is refused and the flow runs once', async () => {
    const owner = await stack.token('paypal-owner');
    const trigger = await createTrigger(stack, owner, { flow: 'echo', signature: { service: 'paypal', secret: PAYPAL_WEBHOOK_ID } });
    const genuine = JSON.stringify({ id: 'WH-1', event_type: 'PAYMENT.CAPTURE.COMPLETED', resource: { amount: { currency_code: 'USD', value: '7.47' } } });
    const forged = bodyWithCrc(crc32.unsigned(genuine), '9999.00');
    expect(crc32.unsigned(forged)).toBe(crc32.unsigned(genuine));
    const transmissionTime = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
    const headers = signPayPal({ body: genuine, webhookId: PAYPAL_WEBHOOK_ID, transmissionTime, transmissionId: 'b2f1a3c0-0000-11ef-9f00-0242ac120002' }, paypalSigner.privateKey);
    expect((await deliver(trigger.url, genuine, headers)).json).toMatchObject({ status: 'accepted' });
    // The same signature verifies over the forged body: the CRC is all PayPal signs of it.
    expect((await deliver(trigger.url, forged, headers)).json).toEqual({ status: 'duplicate' });
    const executions = await settled(owner, trigger.id, 2);
    expect(statuses(executions)).toEqual(['duplicate', 'succeeded']);
    expect(executions.find((e) => e.status === 'succeeded').output.received.resource.amount.value).toBe('7.47');
  });
});

describe('svix and Standard Webhooks: a retry with the same id, signed anew, runs a deduplicating trigger\'s flow once', () => {
  const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
  const body = JSON.stringify({ type: 'invoice.paid', data: { id: 'inv_1' } });
  /** Svix signs as Standard Webhooks does, with `svix-` headers. */
  const svixHeaders = (id: string, timestamp: number) => Object.fromEntries(
    Object.entries(signStandardWebhooks({ secret, id, timestamp, body })).map(([name, value]) => [name.replace(/^webhook-/, 'svix-'), value]),
  );

  for (const [service, sign] of [['svix', svixHeaders], ['standard_webhooks', (id: string, timestamp: number) => signStandardWebhooks({ secret, id, timestamp, body })]] as const) {
    it(`${service}: the retry answers duplicate and the flow sees the sender's id`, async () => {
      const owner = await stack.token('svix-owner');
      const trigger = await createTrigger(stack, owner, { flow: 'echo', deduplicate: true, signature: { service, secret } });
      const t = nowSeconds();
      expect((await deliver(trigger.url, body, sign('msg_retried', t - 20))).json).toEqual({ status: 'accepted', event_id: 'msg_retried' });
      expect((await deliver(trigger.url, body, sign('msg_retried', t))).json).toEqual({ status: 'duplicate' });
      const executions = await settled(owner, trigger.id, 2);
      expect(statuses(executions)).toEqual(['duplicate', 'succeeded']);
      expect(executions.find((e) => e.status === 'succeeded').output.event_id).toBe('msg_retried');
    });
  }
});
