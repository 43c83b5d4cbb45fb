import braintree from 'braintree';
import { describe, expect, it } from 'vitest';
import { accepts, proveHmacSender, rowOf, verifySent, type SentRequest } from '../../support/sender-proof.js';

// Signed by the braintree SDK's webhookTesting.sampleNotification (the `publicKey|hex` pair over
// bt_payload, keyed with SHA1 of the private key), checked by its webhookNotification.parse.
// Braintree posts both as an application/x-www-form-urlencoded body.
const gatewayFor = (privateKey: string) =>
  new braintree.BraintreeGateway({ environment: braintree.Environment.Sandbox, merchantId: 'proof_merchant', publicKey: 'proof_public_key', privateKey });

const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();
const fieldsOf = (sent: SentRequest) => Object.fromEntries(new URLSearchParams(sent.body.toString()));

proveHmacSender('braintree', {
  secret: 'proof_private_key_one',
  otherSecret: 'proof_private_key_two',
  sign: async (privateKey) => {
    const sample = await gatewayFor(privateKey).webhookTesting.sampleNotification('subscription_went_past_due', 'sub_proof');
    return { body: form(sample), headers: { 'Content-Type': 'application/x-www-form-urlencoded' } };
  },
  tamper: (sent) => {
    const fields = fieldsOf(sent);
    // One base64 letter of the payload changed: still a well-formed payload, no longer the signed one.
    const payload = fields.bt_payload!;
    const changed = payload.replace(/[A-Za-z]/, (c) => (c === 'A' ? 'B' : 'A'));
    return { ...sent, body: form({ ...fields, bt_payload: changed }) };
  },
  withoutSignature: (sent) => {
    const { bt_signature: _dropped, ...rest } = fieldsOf(sent);
    return { ...sent, body: form(rest) };
  },
  official: (sent, privateKey) => {
    const { bt_signature, bt_payload } = fieldsOf(sent);
    return accepts(() => gatewayFor(privateKey).webhookNotification.parse(bt_signature!, bt_payload!));
  },
});

describe('braintree (Braintree) signature pairs', () => {
  it('verifySender(braintree) returns true when the matching pair follows a pair of another key', async () => {
    const sample = await gatewayFor('proof_private_key_one').webhookTesting.sampleNotification('check', 'check_proof');
    const signature = `other_public_key|${'0'.repeat(40)}&${sample.bt_signature}`;
    const sent = { body: form({ ...sample, bt_signature: signature }), headers: {} };
    expect(await verifySent(rowOf('braintree'), sent, ['proof_private_key_one'])).toBe(true);
  });

  it('verifySender(braintree) returns false when bt_signature is given twice (ambiguous)', async () => {
    const sample = await gatewayFor('proof_private_key_one').webhookTesting.sampleNotification('check', 'check_proof');
    const body = `${form(sample)}&bt_signature=${encodeURIComponent(sample.bt_signature)}`;
    expect(await verifySent(rowOf('braintree'), { body, headers: {} }, ['proof_private_key_one'])).toBe(false);
  });
});
