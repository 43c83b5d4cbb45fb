import '@shopify/shopify-api/adapters/node';
import { createHmac } from 'node:crypto';
import { ApiVersion, LogSeverity, shopifyApi } from '@shopify/shopify-api';
import { JSON_BODY, proveHmacSender } from '../../support/sender-proof.js';

// Shopify publishes no signer: signed as https://shopify.dev/docs/apps/build/webhooks/verify-deliveries
// describes, and checked by @shopify/shopify-api's webhooks.validate.
proveHmacSender('shopify', {
  secret: 'shpss_proof_one',
  otherSecret: 'shpss_proof_two',
  sign: (secret) => ({
    body: JSON_BODY,
    headers: {
      'Content-Type': 'application/json',
      // The headers Shopify sends with every webhook; the SDK refuses a request without them.
      'X-Shopify-Topic': 'orders/create',
      'X-Shopify-Shop-Domain': 'proof.myshopify.com',
      'X-Shopify-API-Version': ApiVersion.July26,
      'X-Shopify-Webhook-Id': 'b54557e4-bdd9-4b37-8a5f-bf7d70bcd043',
      'X-Shopify-Hmac-Sha256': createHmac('sha256', secret).update(JSON_BODY).digest('base64'),
    },
  }),
  official: async (sent, secret) => {
    const shopify = shopifyApi({ apiKey: 'proof', apiSecretKey: secret, hostName: 'proof.example.com', apiVersion: ApiVersion.July26, isEmbeddedApp: false, logger: { level: LogSeverity.Error } });
    const headers = Object.fromEntries(Object.entries(sent.headers).map(([name, value]) => [name.toLowerCase(), value]));
    const result = await shopify.webhooks.validate({ rawBody: sent.body.toString(), rawRequest: { method: 'POST', url: '/webhooks', headers } as never, rawResponse: {} as never });
    return result.valid;
  },
});
