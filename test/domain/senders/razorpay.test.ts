import { createHmac } from 'node:crypto';
import Razorpay from 'razorpay';
import { JSON_BODY, proveHmacSender } from '../../support/sender-proof.js';

// Razorpay's SDK verifies but does not sign: signed as https://razorpay.com/docs/webhooks/validate-test/
// describes (hex HMAC-SHA256 of the body), checked by Razorpay.validateWebhookSignature.
proveHmacSender('razorpay', {
  secret: 'razorpay-webhook-secret-one',
  otherSecret: 'razorpay-webhook-secret-two',
  sign: (secret) => ({ body: JSON_BODY, headers: { 'X-Razorpay-Signature': createHmac('sha256', secret).update(JSON_BODY).digest('hex') } }),
  official: (sent, secret) => Razorpay.validateWebhookSignature(sent.body.toString(), sent.headers['X-Razorpay-Signature']!, secret),
});
