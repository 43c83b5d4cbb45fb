import { Webhook } from 'standardwebhooks';
import { accepts, atClock, JSON_BODY, proveHmacSender } from '../../support/sender-proof.js';

// Signed by the reference library's Webhook#sign, checked by its Webhook#verify.
proveHmacSender('standard_webhooks', {
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  otherSecret: 'whsec_c2Vjb25kLXNlY3JldC1mb3Itcm90YXRpb24=',
  sign: (secret, now) => ({
    body: JSON_BODY,
    headers: { 'webhook-id': 'msg_proof', 'webhook-timestamp': String(now), 'webhook-signature': new Webhook(secret).sign('msg_proof', new Date(now * 1000), JSON_BODY) },
  }),
  official: (sent, secret, now) => atClock(now, () => accepts(() => new Webhook(secret).verify(sent.body, sent.headers))),
});
