/**
 * PayPal webhooks, proven from PayPal's documentation (PayPal publishes no offline verifier; its
 * alternative is the verify-webhook-signature API, which needs the account's credentials):
 * https://developer.paypal.com/api/rest/webhooks/rest/ — the PAYPAL-* headers, SHA256withRSA over
 * `<transmission id>|<transmission time>|<webhook id>|<CRC32 of the raw body, unsigned decimal>`
 * with the certificate at PAYPAL-CERT-URL. Deliveries are signed here as that page's Node sample
 * computes the CRC (`buffer-crc32`), and the certificate is served by a local HTTPS server standing
 * in for api.paypal.com, fetched through the real HttpsKeyFetcher.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpsKeyFetcher } from '../../../functions/adapters/https-key-fetcher.js';
import { PAYPAL_TOLERANCE_SECONDS } from '../../../functions/domain/webhooks/senders/catalog.js';
import { checkSenderSecret } from '../../../functions/domain/webhooks/senders/secrets.js';
import { verifySender } from '../../../functions/domain/webhooks/senders/verify.js';
import { PAYPAL_CERT_URL, signPayPal } from '../../support/asymmetric-signers.js';
import { selfSignedCertificate } from '../../support/certificates.js';
import { localFetcher, startKeyServer, type KeyServer } from '../../support/key-server.js';
import { rowOf } from '../../support/sender-proof.js';
import { contextFor } from '../../support/verify-context.js';

/**
 * The catalog's `paypal` row: certificates only from PayPal's API hosts (live and sandbox, old and
 * `api-m` names) under `/v1/notifications/certs/`, and a transmission time within
 * PAYPAL_TOLERANCE_SECONDS (PayPal documents no window; the constant says what that assumes).
 */
const PAYPAL = rowOf('paypal');
const WEBHOOK_ID = '1JE4291016473214C';
const BODY = JSON.stringify({
  id: 'WH-2WR32451HC0233532-67976317FL4543714',
  event_version: '1.0',
  create_time: '2023-11-14T22:13:15.000Z',
  resource_type: 'capture',
  event_type: 'PAYMENT.CAPTURE.COMPLETED',
  summary: 'Payment completed for $ 7.47 USD',
  resource: { id: '2DC87612EK520411B', amount: { currency_code: 'USD', value: '7.47' }, status: 'COMPLETED' },
});

const signer = selfSignedCertificate({ commonName: 'messageverificationcerts.paypal.com' });
const impostor = selfSignedCertificate({ commonName: 'messageverificationcerts.paypal.com' });
const nowSeconds = () => Math.floor(Date.now() / 1000);
const transmissionTime = (seconds = nowSeconds()) => new Date(seconds * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');

let server: KeyServer;
let keys: ReturnType<typeof localFetcher>;
beforeAll(async () => {
  server = await startKeyServer();
  const { host, pathname } = new URL(PAYPAL_CERT_URL);
  server.routes.set(`/${host}${pathname}`, { body: signer.pem });
  keys = localFetcher(server, new HttpsKeyFetcher({ ca: server.ca }));
});
afterAll(() => server.close());

const verify = (body: string, headers: Record<string, string>, secrets = [WEBHOOK_ID]) =>
  verifySender(PAYPAL, contextFor({ body, headers, secrets, keys, nowSeconds: nowSeconds() }));

describe('paypal: SHA256withRSA by the certificate at PAYPAL-CERT-URL, as PayPal documents it', () => {
  it('a genuine delivery passes', async () => {
    expect(await verify(BODY, signPayPal({ body: BODY, webhookId: WEBHOOK_ID, transmissionTime: transmissionTime() }, signer.privateKey))).toBe(true);
  });

  it('a changed body fails (its CRC32 is signed)', async () => {
    const headers = signPayPal({ body: BODY, webhookId: WEBHOOK_ID, transmissionTime: transmissionTime() }, signer.privateKey);
    expect(await verify(BODY.replace('7.47', '747.00'), headers)).toBe(false);
  });

  it("a signature by a key other than the certificate's fails", async () => {
    expect(await verify(BODY, signPayPal({ body: BODY, webhookId: WEBHOOK_ID, transmissionTime: transmissionTime() }, impostor.privateKey))).toBe(false);
  });

  it("a delivery for another webhook (another account's) fails", async () => {
    expect(await verify(BODY, signPayPal({ body: BODY, webhookId: '5GP028458E2496506', transmissionTime: transmissionTime() }, signer.privateKey))).toBe(false);
  });

  it('a missing PAYPAL-TRANSMISSION-SIG fails', async () => {
    const { 'PAYPAL-TRANSMISSION-SIG': _, ...headers } = signPayPal({ body: BODY, webhookId: WEBHOOK_ID, transmissionTime: transmissionTime() }, signer.privateKey);
    expect(await verify(BODY, headers)).toBe(false);
  });

  it('a stale transmission time fails', async () => {
    expect(await verify(BODY, signPayPal({ body: BODY, webhookId: WEBHOOK_ID, transmissionTime: transmissionTime(nowSeconds() - PAYPAL_TOLERANCE_SECONDS - 1) }, signer.privateKey))).toBe(false);
  });

  it('a certificate URL off PayPal\'s hosts fails without being fetched', async () => {
    const certUrl = 'https://paypal.evil.example/v1/notifications/certs/CERT-1';
    server.routes.set('/paypal.evil.example/v1/notifications/certs/CERT-1', { body: impostor.pem });
    const headers = signPayPal({ body: BODY, webhookId: WEBHOOK_ID, transmissionTime: transmissionTime(), certUrl }, impostor.privateKey);
    expect(await verify(BODY, headers)).toBe(false);
    expect(server.hits.get('/paypal.evil.example/v1/notifications/certs/CERT-1')).toBeUndefined();
  });

  it('checkSenderSecret accepts both webhook IDs', () => {
    expect(checkSenderSecret(PAYPAL, WEBHOOK_ID)).toBeUndefined();
    expect(checkSenderSecret(PAYPAL, '5GP028458E2496506')).toBeUndefined();
  });

  it('webhook ID rotation: a delivery for either ID passes, and the certificate was fetched once for all of these', async () => {
    const headers = signPayPal({ body: BODY, webhookId: WEBHOOK_ID, transmissionTime: transmissionTime() }, signer.privateKey);
    expect(await verify(BODY, headers, ['5GP028458E2496506', WEBHOOK_ID])).toBe(true);
    const { host, pathname } = new URL(PAYPAL_CERT_URL);
    expect(server.hits.get(`/${host}${pathname}`)).toBe(1);
  });
});
