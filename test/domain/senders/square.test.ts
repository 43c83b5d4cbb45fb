import { senderSdks } from '../../support/sender-sdks.js';
import { createHmac } from 'node:crypto';
import { JSON_BODY, proveHmacSender, WEBHOOK_URL } from '../../support/sender-proof.js';

// Square's SDK verifies but does not sign: signed as https://developer.squareup.com/docs/webhooks/step3validate
// describes (base64 HMAC-SHA256 of notification URL + body), checked by WebhooksHelper.verifySignature.
proveHmacSender('square', {
  secret: 'square-signature-key-one',
  otherSecret: 'square-signature-key-two',
  sign: (secret) => ({
    body: JSON_BODY,
    url: WEBHOOK_URL,
    headers: { 'X-Square-HmacSha256-Signature': createHmac('sha256', secret).update(WEBHOOK_URL + JSON_BODY).digest('base64') },
  }),
  tamper: (sent) => ({ ...sent, url: `${WEBHOOK_URL}x` }),
  official: (sent, signatureKey) =>
    senderSdks.SquareWebhooksHelper.verifySignature({ requestBody: sent.body.toString(), signatureHeader: sent.headers['X-Square-HmacSha256-Signature']!, signatureKey, notificationUrl: sent.url! }),
});
