import { senderSdks } from '../../support/sender-sdks.js';
import { atClock, JSON_BODY, proveHmacSender, WEBHOOK_URL } from '../../support/sender-proof.js';

// Signed by @hubspot/api-client's Signature.getSignature (v3: method + URI + body + timestamp in
// ms), checked by its Signature.isValid.
const URL = `${WEBHOOK_URL}?portal=62515`;

proveHmacSender('hubspot', {
  secret: 'hubspot-client-secret-one',
  otherSecret: 'hubspot-client-secret-two',
  sign: (clientSecret, now) => ({
    body: JSON_BODY,
    url: URL,
    method: 'POST',
    headers: {
      'X-HubSpot-Signature-v3': senderSdks.HubSpotSignature.getSignature('POST', 'v3', { signature: '', clientSecret, requestBody: JSON_BODY, url: URL, timestamp: now * 1000 }),
      'X-HubSpot-Request-Timestamp': String(now * 1000),
    },
  }),
  tamper: (sent) => ({ ...sent, method: 'PUT' }),
  official: (sent, clientSecret, now) =>
    atClock(now, () =>
      senderSdks.HubSpotSignature.isValid({
        signatureVersion: 'v3',
        method: sent.method!,
        signature: sent.headers['X-HubSpot-Signature-v3']!,
        clientSecret,
        requestBody: sent.body.toString(),
        url: sent.url!,
        timestamp: Number(sent.headers['X-HubSpot-Request-Timestamp']),
      }),
    ),
});
