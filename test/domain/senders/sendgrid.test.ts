/**
 * SendGrid's signed Event Webhook, proven by SendGrid's own `@sendgrid/eventwebhook`
 * (`convertPublicKeyToECDSA` + `verifySignature`) and by the vector its libraries share in their
 * tests (Go, C#, Python, Ruby, Java, Node: the same key, payload, timestamp and signature).
 * https://www.twilio.com/docs/sendgrid/for-developers/tracking-events/getting-started-event-webhook-security-features
 */
import { generateKeyPairSync, sign } from 'node:crypto';
import { EventWebhook } from '@sendgrid/eventwebhook';
import { describe, expect, it } from 'vitest';
import { checkSenderSecret } from '../../../functions/domain/webhooks/senders/secrets.js';
import { verifySender } from '../../../functions/domain/webhooks/senders/verify.js';
import { rowOf } from '../../support/sender-proof.js';
import { contextFor } from '../../support/verify-context.js';

/**
 * The catalog's `sendgrid` row. It sets no tolerance: SendGrid documents none, nor whether a
 * retry (it retries for up to 24 hours) is signed anew, so refusing old timestamps could refuse
 * SendGrid itself. The timestamp is signed, so it cannot be changed; an old one is accepted.
 */
const SENDGRID = rowOf('sendgrid');

/** SendGrid's shared test vector. */
const VECTOR = {
  publicKey: 'MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEEDr2LjtURuePQzplybdC+u4CwrqDqBaWjcMMsTbhdbcwHBcepxo7yAQGhHPTnlvFYPAZFceEu/1FwCM/QmGUhA==',
  otherKey: 'MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEqTxd43gyp8IOEto2LdIfjRQrIbsd4SXZkLW6jDutdhXSJCWHw8REntlo7aNDthvj+y7GjUuFDb/R1NGe1OPzpA==',
  payload: '{"category":"example_payload","event":"test_event","message_id":"message_id"}',
  signature: 'MEUCIQCtIHJeH93Y+qpYeWrySphQgpNGNr/U+UyUlBkU6n7RAwIgJTz2C+8a8xonZGi6BpSzoQsbVRamr2nlxFDWYNH2j/0=',
  timestamp: '1588788367',
};

const eventWebhook = new EventWebhook();

async function verdicts(body: string, headers: Record<string, string>, publicKey: string, nowSeconds?: number) {
  const ours = await verifySender(SENDGRID, contextFor({ body, headers, secrets: [publicKey], nowSeconds }));
  let theirs: boolean;
  try {
    theirs = eventWebhook.verifySignature(
      eventWebhook.convertPublicKeyToECDSA(publicKey),
      body,
      headers['X-Twilio-Email-Event-Webhook-Signature'] ?? '',
      headers['X-Twilio-Email-Event-Webhook-Timestamp'] ?? '',
    );
  } catch {
    theirs = false; // starkbank-ecdsa throws on a signature it cannot parse
  }
  return { ours, theirs };
}

const vectorHeaders = (signature = VECTOR.signature, timestamp = VECTOR.timestamp) => ({
  'X-Twilio-Email-Event-Webhook-Signature': signature,
  'X-Twilio-Email-Event-Webhook-Timestamp': timestamp,
});

describe("sendgrid: ECDSA P-256 as @sendgrid/eventwebhook verifies it, on SendGrid's vector", () => {
  it('the vector passes both', async () => {
    expect(await verdicts(VECTOR.payload, vectorHeaders(), VECTOR.publicKey)).toEqual({ ours: true, theirs: true });
  });

  it('a changed body fails both', async () => {
    expect(await verdicts('payload', vectorHeaders(), VECTOR.publicKey)).toEqual({ ours: false, theirs: false });
  });

  it("the vector's other key fails both", async () => {
    expect(await verdicts(VECTOR.payload, vectorHeaders(), VECTOR.otherKey)).toEqual({ ours: false, theirs: false });
  });

  it('a changed timestamp fails both (it is signed)', async () => {
    expect(await verdicts(VECTOR.payload, vectorHeaders(VECTOR.signature, '1588788368'), VECTOR.publicKey)).toEqual({ ours: false, theirs: false });
  });

  it('a missing signature header fails both', async () => {
    expect(await verdicts(VECTOR.payload, { 'X-Twilio-Email-Event-Webhook-Timestamp': VECTOR.timestamp }, VECTOR.publicKey)).toEqual({ ours: false, theirs: false });
  });

  it('a missing timestamp header fails both', async () => {
    expect(await verdicts(VECTOR.payload, { 'X-Twilio-Email-Event-Webhook-Signature': VECTOR.signature }, VECTOR.publicKey)).toEqual({ ours: false, theirs: false });
  });

  it("checkSenderSecret accepts the vector's keys, as SendGrid shows them", () => {
    expect(checkSenderSecret(SENDGRID, VECTOR.publicKey)).toBeUndefined();
    expect(checkSenderSecret(SENDGRID, VECTOR.otherKey)).toBeUndefined();
  });

  it('an old timestamp passes both: SendGrid documents no window, so the row sets none (the vector is from 2020)', async () => {
    expect(await verdicts(VECTOR.payload, vectorHeaders(), VECTOR.publicKey, 1_700_000_000)).toEqual({ ours: true, theirs: true });
  });
});

describe('sendgrid: a request signed with a fresh key pair', () => {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const keyText = publicKey.export({ format: 'der', type: 'spki' }).toString('base64');
  const body = '[{"email":"example@test.com","timestamp":1513299569,"event":"processed","sg_message_id":"14c583da911.filter0001.16648.5515E0B88.0"}]\r\n';
  const timestamp = '1700000000';
  const headers = vectorHeaders(sign('sha256', Buffer.from(timestamp + body), privateKey).toString('base64'), timestamp);

  it('passes both, and a rotation with the old key first passes ours', async () => {
    expect(await verdicts(body, headers, keyText)).toEqual({ ours: true, theirs: true });
    expect(await verifySender(SENDGRID, contextFor({ body, headers, secrets: [VECTOR.publicKey, keyText] }))).toBe(true);
  });

  it('one changed byte fails both', async () => {
    expect(await verdicts(body.replace('processed', 'processes'), headers, keyText)).toEqual({ ours: false, theirs: false });
  });
});
