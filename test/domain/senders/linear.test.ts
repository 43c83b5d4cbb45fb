import { createHmac } from 'node:crypto';
import { LinearWebhookClient } from '@linear/sdk/webhooks';
import { accepts, atClock, proveHmacSender } from '../../support/sender-proof.js';

// Linear's SDK verifies but does not sign: signed as https://linear.app/developers/webhooks#securing-webhooks
// describes (hex HMAC-SHA256 of the body, `webhookTimestamp` in ms inside the signed body),
// checked by LinearWebhookClient#verify.
const bodyAt = (now: number) => `{"action":"create","type":"Issue","data":{"id":"iss_1"},"webhookTimestamp":${now * 1000}}`;

proveHmacSender('linear', {
  secret: 'lin_wh_proof_one',
  otherSecret: 'lin_wh_proof_two',
  sign: (secret, now) => ({ body: bodyAt(now), headers: { 'Linear-Signature': createHmac('sha256', secret).update(bodyAt(now)).digest('hex') } }),
  official: (sent, secret, now) =>
    atClock(now, () => accepts(() => new LinearWebhookClient(secret).verify(Buffer.from(sent.body), sent.headers['Linear-Signature']!))),
});
