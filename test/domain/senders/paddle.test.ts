import { senderSdks } from '../../support/sender-sdks.js';
import { createHmac } from 'node:crypto';
import { atClock, JSON_BODY, proveHmacSender } from '../../support/sender-proof.js';

// Paddle's SDK verifies but does not sign: signed as https://developer.paddle.com/webhooks/signature-verification
// describes (`ts=…;h1=hex(HMAC-SHA256(secret, ts:body))`), checked by the SDK's webhooks.isSignatureValid.
const paddle = new senderSdks.Paddle('pdl_sdbx_apikey_proof');

proveHmacSender('paddle', {
  secret: 'pdl_ntfset_proof_one',
  otherSecret: 'pdl_ntfset_proof_two',
  sign: (secret, now) => ({
    body: JSON_BODY,
    headers: { 'Paddle-Signature': `ts=${now};h1=${createHmac('sha256', secret).update(`${now}:${JSON_BODY}`).digest('hex')}` },
  }),
  official: (sent, secret, now) => atClock(now, () => paddle.webhooks.isSignatureValid(sent.body.toString(), secret, sent.headers['Paddle-Signature']!)),
});
