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
 * The catalog's `sendgrid` row. SendGrid documents no window, nor whether a retry (it retries
 * for up to 24 hours) is signed anew, so a signed timestamp may be 25 hours old (and 5 minutes
 * ahead); the timestamp is signed, so it cannot be changed. SendGrid's library checks no time, so
 * the vector (from 2020) is checked at its own time, as SendGrid would have sent it.
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

/** Shortly after the vector was signed: when SendGrid would have delivered it. */
const VECTOR_NOW = Number(VECTOR.timestamp) + 5;
const vectorVerdicts = (body: string, headers: Record<string, string>, publicKey: string) => verdicts(body, headers, publicKey, VECTOR_NOW);

const vectorHeaders = (signature = VECTOR.signature, timestamp = VECTOR.timestamp) => ({
  'X-Twilio-Email-Event-Webhook-Signature': signature,
  'X-Twilio-Email-Event-Webhook-Timestamp': timestamp,
});

describe("sendgrid: ECDSA P-256 as @sendgrid/eventwebhook verifies it, on SendGrid's vector", () => {
  it('the vector passes both', async () => {
    expect(await vectorVerdicts(VECTOR.payload, vectorHeaders(), VECTOR.publicKey)).toEqual({ ours: true, theirs: true });
  });

  it('a changed body fails both', async () => {
    expect(await vectorVerdicts('payload', vectorHeaders(), VECTOR.publicKey)).toEqual({ ours: false, theirs: false });
  });

  it("the vector's other key fails both", async () => {
    expect(await vectorVerdicts(VECTOR.payload, vectorHeaders(), VECTOR.otherKey)).toEqual({ ours: false, theirs: false });
  });

  it('a changed timestamp fails both (it is signed)', async () => {
    expect(await vectorVerdicts(VECTOR.payload, vectorHeaders(VECTOR.signature, '1588788368'), VECTOR.publicKey)).toEqual({ ours: false, theirs: false });
  });

  it('a missing signature header fails both', async () => {
    expect(await vectorVerdicts(VECTOR.payload, { 'X-Twilio-Email-Event-Webhook-Timestamp': VECTOR.timestamp }, VECTOR.publicKey)).toEqual({ ours: false, theirs: false });
  });

  it('a missing timestamp header fails both', async () => {
    expect(await vectorVerdicts(VECTOR.payload, { 'X-Twilio-Email-Event-Webhook-Signature': VECTOR.signature }, VECTOR.publicKey)).toEqual({ ours: false, theirs: false });
  });

  it("checkSenderSecret accepts the vector's keys, as SendGrid shows them", () => {
    expect(checkSenderSecret(SENDGRID, VECTOR.publicKey)).toBeUndefined();
    expect(checkSenderSecret(SENDGRID, VECTOR.otherKey)).toBeUndefined();
  });

  it('a timestamp over 25 hours old or over 5 minutes ahead fails ours (SendGrid\'s library checks no time); within the window it passes', async () => {
    const at = (nowSeconds: number) => verdicts(VECTOR.payload, vectorHeaders(), VECTOR.publicKey, nowSeconds);
    const sent = Number(VECTOR.timestamp);
    expect(await at(sent + 25 * 3600 + 1)).toEqual({ ours: false, theirs: true });
    expect(await at(sent + 25 * 3600)).toEqual({ ours: true, theirs: true });
    expect(await at(sent - 301)).toEqual({ ours: false, theirs: true });
    expect(await at(sent - 300)).toEqual({ ours: true, theirs: true });
    expect(await at(1_700_000_000)).toEqual({ ours: false, theirs: true });
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
