import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { WebhookBody } from '../../functions/domain/webhooks/body.js';
import {
  DEDUP_WINDOW_SECONDS, deduplicationKey, replayClaim, singleUseKey, singleUseWindowSeconds, toleranceOf, type ReceivedRequest,
} from '../../functions/domain/webhooks/replay-key.js';
import { SENDERS, customRow, senderRow } from '../../functions/domain/webhooks/senders/catalog.js';
import type { SenderRow } from '../../functions/domain/webhooks/senders/catalog-types.js';
import { signStripe } from '../support/signers.js';

const row = (id: string): SenderRow => senderRow(id)!;
const sha256 = (text: string) => `sha256:${createHash('sha256').update(text).digest('base64url')}`;

/** A request as the receiver hands it over: raw bytes, lower-case headers, the body parsed as JSON. */
function received(body: string, headers: Record<string, string> = {}): ReceivedRequest {
  const parsed: WebhookBody = { kind: 'json', value: JSON.parse(body) };
  return { rawBody: Buffer.from(body), headers, url: 'https://hooks.example.com/webhooks/wh_1', method: 'POST', body: parsed };
}

const STRIPE_BODY = JSON.stringify({ id: 'evt_1', type: 'charge.succeeded' });
const stripe = (t: number, extra: Record<string, string> = {}) => received(STRIPE_BODY, { ...signStripe({ secret: 'whsec_x', body: STRIPE_BODY, timestamp: t }), ...extra });

describe('deduplicationKey(row, request): the signed id the row names, else the SHA-256 of the signed content', () => {
  const cases: [string, ReceivedRequest, string][] = [
    ['stripe (body id)', stripe(1_700_000_000), 'id:evt_1'],
    ['slack (body event_id)', received('{"event_id":"Ev1","type":"event_callback"}'), 'id:Ev1'],
    ['square (body event_id)', received('{"event_id":"sq-1"}'), 'id:sq-1'],
    ['aws_sns (body MessageId)', received('{"MessageId":"m-1","Type":"Notification"}'), 'id:m-1'],
    ['svix (svix-id)', received('{}', { 'svix-id': 'msg_s' }), 'id:msg_s'],
    ['resend (svix-id)', received('{}', { 'svix-id': 'msg_r' }), 'id:msg_r'],
    ['clerk (svix-id)', received('{}', { 'svix-id': 'msg_c' }), 'id:msg_c'],
    ['standard_webhooks (webhook-id)', received('{}', { 'webhook-id': 'msg_w' }), 'id:msg_w'],
    ['twitch (twitch-eventsub-message-id)', received('{}', { 'twitch-eventsub-message-id': 'tw-1' }), 'id:tw-1'],
    ['paypal (paypal-transmission-id)', received('{"id":"WH-1"}', { 'paypal-transmission-id': 'tx-1' }), 'id:tx-1'],
    ['mailgun (signature.token)', received('{"signature":{"timestamp":"1","token":"tok","signature":"s"},"event-data":{"id":"e"}}'), 'id:tok'],
  ];
  for (const [name, request, key] of cases) {
    it(`${name} keys on ${key}`, () => {
      expect(deduplicationKey(row(name.split(' ')[0]!), request)).toBe(key);
    });
  }

  it('github keys on the SHA-256 of the body it signs, never on the unsigned x-github-delivery', () => {
    const body = '{"action":"opened"}';
    expect(deduplicationKey(row('github'), received(body, { 'x-github-delivery': 'a' }))).toBe(sha256(body));
    expect(deduplicationKey(row('github'), received(body, { 'x-github-delivery': 'b' }))).toBe(sha256(body));
    expect(deduplicationKey(row('github'), received('{"action":"closed"}', { 'x-github-delivery': 'a' }))).not.toBe(sha256(body));
  });

  it('an idempotency-key header changes no signed trigger\'s key, for any row', () => {
    for (const sender of SENDERS.filter((r) => r.verification.primitive !== 'configured' && r.verification.primitive !== 'unsupported')) {
      const plain = received('{"id":"evt_9","event_id":"e9","MessageId":"m9"}', { 'svix-id': 's', 'webhook-id': 'w' });
      const forged = { ...plain, headers: { ...plain.headers, 'idempotency-key': 'forged' } };
      if (sender.delivery_id?.from === 'header' && sender.delivery_id.name === 'idempotency-key') continue; // GitLab's own (unsigned) id
      expect(deduplicationKey(sender, forged), sender.id).toBe(deduplicationKey(sender, plain));
    }
  });

  it("a row whose own id is unsigned (gitlab's Idempotency-Key) keys on the body instead", () => {
    const body = '{"object_kind":"push"}';
    expect(deduplicationKey(row('gitlab'), received(body, { 'idempotency-key': 'one' }))).toBe(sha256(body));
    expect(deduplicationKey(row('gitlab'), received(body, { 'idempotency-key': 'two' }))).toBe(sha256(body));
  });

  it('a custom row with a timestamp keys on its content without the timestamp: a retry signed anew collapses', () => {
    const custom = customRow({
      algorithm: 'sha256', key: { format: 'text' }, encoding: 'hex',
      content: [{ part: 'timestamp' }, { part: 'literal', text: '.' }, { part: 'body' }],
      signature: { from: 'header', name: 'x-sig' },
      timestamp: { source: { from: 'header', name: 'x-ts' }, format: 'unix_seconds', tolerance_seconds: 300 },
    });
    const first = received('{"a":1}', { 'x-ts': '100', 'x-sig': 'aa' });
    const retry = received('{"a":1}', { 'x-ts': '200', 'x-sig': 'bb' });
    expect(deduplicationKey(custom, retry)).toBe(deduplicationKey(custom, first));
    expect(deduplicationKey(custom, first)).toBe(sha256('.{"a":1}'));
    expect(singleUseKey(custom, retry)).not.toBe(singleUseKey(custom, first));
  });
});

describe('singleUseKey(row, request): what a second use of is refused within the window', () => {
  it('stripe: an exact replay has the key of the capture; a retry signed anew has its own', () => {
    expect(singleUseKey(row('stripe'), stripe(1_700_000_000))).toBe(singleUseKey(row('stripe'), stripe(1_700_000_000)));
    expect(singleUseKey(row('stripe'), stripe(1_700_000_001))).not.toBe(singleUseKey(row('stripe'), stripe(1_700_000_000)));
    expect(singleUseKey(row('stripe'), stripe(1_700_000_000))).toBe(sha256(`1700000000.${STRIPE_BODY}`));
  });

  it('stripe: what the signature does not cover (another v0 item, an idempotency-key) does not make a replay new', () => {
    const capture = stripe(1_700_000_000);
    const dressed = { ...capture, headers: { 'stripe-signature': `${capture.headers['stripe-signature']},v0=junk`, 'idempotency-key': 'new' } };
    expect(singleUseKey(row('stripe'), dressed)).toBe(singleUseKey(row('stripe'), capture));
  });

  it('mailgun: the token, whatever event-data says (Mailgun does not sign it)', () => {
    const a = received('{"signature":{"timestamp":"1","token":"tok","signature":"s"},"event-data":{"event":"delivered"}}');
    const b = received('{"signature":{"timestamp":"1","token":"tok","signature":"s"},"event-data":{"event":"clicked","url":"https://evil.example"}}');
    expect(singleUseKey(row('mailgun'), b)).toBe(singleUseKey(row('mailgun'), a));
    expect(singleUseKey(row('mailgun'), a)).toBe('id:tok');
  });

  it('paypal: the transmission id, whatever body of the same CRC32 comes with it', () => {
    const headers = { 'paypal-transmission-id': 'tx-9', 'paypal-transmission-time': '2024-01-01T00:00:00Z' };
    expect(singleUseKey(row('paypal'), received('{"a":1}', headers))).toBe('id:tx-9');
    expect(singleUseKey(row('paypal'), received('{"b":2}', headers))).toBe('id:tx-9');
  });

  it('discord (Ed25519): the signed timestamp and body', () => {
    const body = '{"type":2}';
    expect(singleUseKey(row('discord'), received(body, { 'x-signature-timestamp': '1700000000' }))).toBe(sha256(`1700000000${body}`));
  });
});

describe('replayClaim(row, deduplicate, request, eventId): at most one claim per delivery', () => {
  it('an unsigned trigger claims its event id only when it deduplicates, as before', () => {
    expect(replayClaim(undefined, true, received('{}'), 'evt_u')).toEqual({ key: 'evt_u', ttlSeconds: DEDUP_WINDOW_SECONDS });
    expect(replayClaim(undefined, false, received('{}'), 'evt_u')).toBeUndefined();
  });

  it('stripe without deduplicate claims its signed content for twice its tolerance; with it, its id for the deduplication window', () => {
    expect(replayClaim(row('stripe'), false, stripe(1_700_000_000), 'evt_1')).toEqual({ key: sha256(`1700000000.${STRIPE_BODY}`), ttlSeconds: 600 });
    expect(replayClaim(row('stripe'), true, stripe(1_700_000_000), 'evt_1')).toEqual({ key: 'id:evt_1', ttlSeconds: DEDUP_WINDOW_SECONDS });
  });

  it('mailgun and paypal claim their single-use id whatever deduplicate says', () => {
    const mailgun = received('{"signature":{"timestamp":"1","token":"tok","signature":"s"}}');
    expect(replayClaim(row('mailgun'), false, mailgun, 'x')).toEqual({ key: 'id:tok', ttlSeconds: 600 });
    expect(replayClaim(row('mailgun'), true, mailgun, 'x')).toEqual({ key: 'id:tok', ttlSeconds: DEDUP_WINDOW_SECONDS });
    expect(replayClaim(row('paypal'), false, received('{}', { 'paypal-transmission-id': 'tx' }), 'x')).toEqual({ key: 'id:tx', ttlSeconds: 600 });
  });

  it('a sender that signs no timestamp claims nothing without deduplicate (a capture of it verifies for ever)', () => {
    expect(replayClaim(row('github'), false, received('{}'), 'x')).toBeUndefined();
  });
});

describe('the catalog\'s replay fields', () => {
  it('every delivery_id a row says is signed is covered by its HMAC content (a signed header, or a body it signs)', () => {
    for (const sender of SENDERS) {
      const { delivery_id: id, verification } = sender;
      if (!id?.signed || verification.primitive !== 'hmac' || !Array.isArray(verification.content)) continue;
      const parts = verification.content;
      const covered = id.from === 'header'
        ? parts.some((part) => part.part === 'header' && part.name === id.name)
        : parts.some((part) => part.part === 'body');
      expect(covered, sender.id).toBe(true);
    }
  });

  it('every single-use row has a timestamp tolerance (its window) and names its replay key', () => {
    const singleUse = SENDERS.filter((sender) => sender.single_use);
    expect(singleUse.map((sender) => sender.id).sort()).toEqual(['mailgun', 'paypal']);
    for (const sender of singleUse) {
      expect(toleranceOf(sender.verification), sender.id).toBeGreaterThan(0);
      expect(sender.replay_key, sender.id).toBeDefined();
      expect(sender.limits, sender.id).toMatch(/accepted once/);
    }
    expect(singleUseWindowSeconds(row('mailgun'))).toBe(600);
  });
});
