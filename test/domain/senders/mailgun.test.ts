import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { NOW, proveHmacSender, rowOf, verifySent, type SentRequest } from '../../support/sender-proof.js';

// Mailgun publishes no verifying library: signed as
// https://documentation.mailgun.com/docs/mailgun/user-manual/tracking-messages/#securing-webhooks
// describes: `signature.signature` = hex HMAC-SHA256(signing key, timestamp + token), in the JSON body.
const TOKEN = '5a2b0f6e1c3d4e8f9a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e';

function delivery(key: string, timestamp: number, token = TOKEN, event = 'delivered'): SentRequest {
  const signature = createHmac('sha256', key).update(`${timestamp}${token}`).digest('hex');
  const body = JSON.stringify({ signature: { timestamp: String(timestamp), token, signature }, 'event-data': { event, id: 'evt_1' } });
  return { body, headers: { 'Content-Type': 'application/json' } };
}

const parsed = (sent: SentRequest) => JSON.parse(sent.body.toString());

proveHmacSender('mailgun', {
  secret: 'key-mailgun-proof-one',
  otherSecret: 'key-mailgun-proof-two',
  sign: (key, now) => delivery(key, now),
  // Mailgun signs the timestamp and the token, not the event: a changed token must fail.
  tamper: (sent) => {
    const body = parsed(sent);
    body.signature.token = `${body.signature.token.slice(1)}0`;
    return { ...sent, body: JSON.stringify(body) };
  },
  withoutSignature: (sent) => {
    const body = parsed(sent);
    delete body.signature.signature;
    return { ...sent, body: JSON.stringify(body) };
  },
});

describe('mailgun (Mailgun) body shapes', () => {
  it('verifySender(mailgun) returns false for a body that is not JSON', async () => {
    expect(await verifySent(rowOf('mailgun'), { body: 'timestamp=1&token=2&signature=3', headers: {} }, ['k'])).toBe(false);
  });

  it('verifySender(mailgun) returns true for a changed event (Mailgun signs only timestamp and token)', async () => {
    const signed = parsed(delivery('k', NOW));
    signed['event-data'].event = 'failed';
    expect(await verifySent(rowOf('mailgun'), { body: JSON.stringify(signed), headers: {} }, ['k'])).toBe(true);
  });
});
