import { Buffer } from 'node:buffer';
import { createHmac, randomBytes } from 'node:crypto';
import { verify as verifyWithOctokit } from '@octokit/webhooks-methods';
import '@shopify/shopify-api/adapters/node';
import { ApiVersion, LogSeverity, shopifyApi } from '@shopify/shopify-api';
import { Webhook } from 'standardwebhooks';
import Stripe from 'stripe';
import { LinearWebhookClient } from '@linear/sdk/webhooks';
import braintree from 'braintree';
import Razorpay from 'razorpay';
import { Webhook as SvixWebhook } from 'svix';
import { senderRow } from '../functions/domain/webhooks/senders/catalog.js';
import type { KeyFetcher } from '../functions/domain/webhooks/senders/context.js';
import { verifySender } from '../functions/domain/webhooks/senders/verify.js';
import { senderSdks } from '../test/support/sender-sdks.js';
import { signGithub, signShopify, signSlack, signStandardWebhooks, signStripe, signTwilio } from '../test/support/signers.js';
import { asymmetricBench } from './support/asymmetric.js';
import type { ChartRow } from './support/chart-row.js';
import { formEvent, jsonEvent, KB } from './support/payloads.js';
import { compareThroughput, int, median, times, verdict } from './support/timing.js';

const { twilio, verifySlackRequest, AdyenHmacValidator, HubSpotSignature, Paddle, SquareWebhooksHelper } = senderSdks;

/**
 * `npm run bench signatures`: verifications per second of the sender catalog's `verifySender`
 * (the rows, named `… row`), against each sender's own SDK verifying the same signed request, for
 * 1 KB and 100 KB bodies; then the asymmetric sender primitives and their key caches
 * (`support/asymmetric.ts`).
 * Each comparison alternates batches of ours and theirs; the ratio is the median of the per-round
 * ratios (ours / theirs), so a noisy neighbour slows both sides of a round alike.
 */
const SIZES = [KB, 100 * KB] as const;
/** 9 rounds of 40 ms a side (15 of 50 until session 11): `npm run bench` as a whole must stay within ten minutes. */
const ROUNDS = 9;
const BATCH_MS = 40;
const WARMUP_MS = 150;
const TARGET_RATIO = 1;
const TOLERANCE_SECONDS = 300;
const WEBHOOK_URL = 'https://hooks.example.com/webhooks/bench0123456789abcdefghijklmnopq';

/** Stripe's signature helper: `constructEvent` without its JSON.parse. Always set in stripe-node. */
const stripeSignature = new Stripe('sk_test_bench').webhooks.signature!;
const nowSeconds = () => Math.floor(Date.now() / 1000);

interface Case {
  scheme: string;
  /** The sender catalog's row id. */
  service: string;
  /** What `theirs` is, as printed. */
  baseline: string;
  /** One verification each, of the same signed request: ours and the baseline. */
  build(bytes: number): Promise<{ ours: () => unknown; theirs: () => unknown }>;
}

/** Form parameters as Express's `urlencoded()` hands them to twilio-node (parsing is part of the work). */
function formParams(body: string): Record<string, string | string[]> {
  const params: Record<string, string | string[]> = {};
  for (const [name, value] of new URLSearchParams(body)) {
    const seen = params[name];
    params[name] = seen === undefined ? value : Array.isArray(seen) ? [...seen, value] : [seen, value];
  }
  return params;
}

const secret = () => randomBytes(24).toString('base64url');

const NO_KEYS: KeyFetcher = { fetchText: () => Promise.reject(new Error('HMAC senders fetch no keys')) };

/**
 * The sender catalog's verifier as the receiver will call it: the row looked up once, the
 * context built per request with the clock read then. Asynchronous, as `verifySender` is.
 */
function oursSender(id: string, secretText: string, rawBody: Buffer, headers: Record<string, string>, url = WEBHOOK_URL, method = 'POST') {
  const row = senderRow(id)!;
  const secrets = [secretText];
  return () => verifySender(row, { request: { rawBody, headers, url, nowSeconds: nowSeconds() }, secrets, keys: NO_KEYS, method });
}

const hmacHex = (key: string | Buffer, content: string) => createHmac('sha256', key).update(content).digest('hex');
const hmacBase64 = (key: string | Buffer, content: string) => createHmac('sha256', key).update(content).digest('base64');

/** A Braintree form body whose base64 bt_payload is about `bytes` long, signed by the braintree SDK. */
async function braintreeSample(privateKey: string, bytes: number) {
  const gateway = new braintree.BraintreeGateway({ environment: braintree.Environment.Sandbox, merchantId: 'bench', publicKey: 'bench_public', privateKey });
  const sample = await gateway.webhookTesting.sampleNotification('check', 'c'.repeat(Math.max(1, Math.floor((bytes * 3) / 4) - 300)));
  return { gateway, sample, body: new URLSearchParams(sample).toString() };
}

/** An Adyen notification of about `bytes` bytes (padded in an unsigned field), its item signed by the Adyen library. */
function adyenNotification(hexKey: string, bytes: number) {
  const validator = new AdyenHmacValidator();
  const fields = {
    amount: { currency: 'EUR', value: 1130 }, eventCode: 'AUTHORISATION', eventDate: '2024-01-01T01:00:00+01:00',
    merchantAccountCode: 'BenchMerchant', merchantReference: 'order-1', paymentMethod: 'visa', pspReference: '7914073381342284', success: 'true',
    reason: '',
  };
  const empty = JSON.stringify({ live: 'false', notificationItems: [{ NotificationRequestItem: { ...fields, additionalData: { hmacSignature: validator.calculateHmac(fields as never, hexKey) } } }] });
  fields.reason = 'x'.repeat(Math.max(0, bytes - empty.length));
  const item = { ...fields, additionalData: { hmacSignature: validator.calculateHmac(fields as never, hexKey) } };
  return { validator, body: JSON.stringify({ live: 'false', notificationItems: [{ NotificationRequestItem: item }] }) };
}

const CASES: Case[] = [
  // The sender catalog (verifySender over the HMAC primitive), beside each sender's own library.
  {
    scheme: 'stripe row',
    service: 'stripe',
    baseline: 'stripe webhooks.signature.verifyHeader',
    async build(bytes) {
      const key = `whsec_${secret()}`;
      const body = jsonEvent(bytes);
      const rawBody = Buffer.from(body);
      const headers = signStripe({ secret: key, body, timestamp: nowSeconds() });
      return { ours: oursSender('stripe', key, rawBody, headers), theirs: () => stripeSignature.verifyHeader(rawBody, headers['stripe-signature']!, key, TOLERANCE_SECONDS) };
    },
  },
  {
    scheme: 'github row',
    service: 'github',
    baseline: '@octokit/webhooks-methods verify',
    async build(bytes) {
      const key = secret();
      const body = jsonEvent(bytes);
      const headers = await signGithub({ secret: key, body });
      return { ours: oursSender('github', key, Buffer.from(body), headers), theirs: () => verifyWithOctokit(key, body, headers['x-hub-signature-256']!) };
    },
  },
  {
    scheme: 'slack row',
    service: 'slack',
    baseline: '@slack/bolt verifySlackRequest',
    async build(bytes) {
      const key = secret();
      const body = jsonEvent(bytes);
      const headers = signSlack({ secret: key, body, timestamp: nowSeconds() });
      const slackHeaders = { 'x-slack-signature': headers['x-slack-signature']!, 'x-slack-request-timestamp': Number(headers['x-slack-request-timestamp']) };
      return { ours: oursSender('slack', key, Buffer.from(body), headers), theirs: () => verifySlackRequest({ signingSecret: key, body, headers: slackHeaders }) };
    },
  },
  {
    scheme: 'shopify row',
    service: 'shopify',
    baseline: '@shopify/shopify-api webhooks.validate',
    async build(bytes) {
      const key = secret();
      const body = jsonEvent(bytes);
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        'x-shopify-topic': 'orders/create',
        'x-shopify-shop-domain': 'bench.myshopify.com',
        'x-shopify-api-version': ApiVersion.July26,
        'x-shopify-webhook-id': 'b54557e4-bdd9-4b37-8a5f-bf7d70bcd043',
        ...signShopify({ secret: key, body }),
      };
      const shopify = shopifyApi({ apiKey: 'bench', apiSecretKey: key, hostName: 'bench.example.com', apiVersion: ApiVersion.July26, isEmbeddedApp: false, logger: { level: LogSeverity.Error } });
      const rawRequest = { method: 'POST', url: '/webhooks', headers } as never;
      const theirs = async () => {
        const result = await shopify.webhooks.validate({ rawBody: body, rawRequest, rawResponse: {} as never });
        if (!result.valid) throw new Error(`shopify refused: ${result.reason}`);
      };
      return { ours: oursSender('shopify', key, Buffer.from(body), headers), theirs };
    },
  },
  {
    scheme: 'twilio row',
    service: 'twilio',
    baseline: 'twilio validateRequest (+ form parse)',
    async build(bytes) {
      const token = randomBytes(16).toString('hex');
      const body = formEvent(bytes);
      const { url, headers } = signTwilio({ authToken: token, url: WEBHOOK_URL, body, contentType: 'application/x-www-form-urlencoded' });
      const signature = headers['x-twilio-signature']!;
      return { ours: oursSender('twilio', token, Buffer.from(body), headers, url), theirs: () => twilio.validateRequest(token, signature, url, formParams(body)) };
    },
  },
  {
    scheme: 'twilio JSON row',
    service: 'twilio',
    baseline: 'twilio validateRequestWithBody',
    async build(bytes) {
      const token = randomBytes(16).toString('hex');
      const body = jsonEvent(bytes);
      const { url, headers } = signTwilio({ authToken: token, url: WEBHOOK_URL, body, contentType: 'application/json' });
      const signature = headers['x-twilio-signature']!;
      return { ours: oursSender('twilio', token, Buffer.from(body), headers, url), theirs: () => twilio.validateRequestWithBody(token, signature, url, body) };
    },
  },
  {
    scheme: 'svix row',
    service: 'svix',
    baseline: 'svix Webhook#verify (parses the JSON too)',
    async build(bytes) {
      const key = `whsec_${randomBytes(32).toString('base64')}`;
      const body = jsonEvent(bytes);
      const rawBody = Buffer.from(body);
      const now = nowSeconds();
      const webhook = new SvixWebhook(key);
      const headers = { 'svix-id': 'msg_bench', 'svix-timestamp': String(now), 'svix-signature': webhook.sign('msg_bench', new Date(now * 1000), body) };
      // svix has no option to skip its JSON.parse of the verified payload: it is part of its check.
      return { ours: oursSender('svix', key, rawBody, headers), theirs: () => webhook.verify(rawBody, headers) };
    },
  },
  {
    scheme: 'standard_webhooks row',
    service: 'standard_webhooks',
    baseline: 'standardwebhooks Webhook#verify (jsonParse: false)',
    async build(bytes) {
      const key = `whsec_${randomBytes(32).toString('base64')}`;
      const body = jsonEvent(bytes);
      const rawBody = Buffer.from(body);
      const headers = signStandardWebhooks({ secret: key, id: 'msg_bench', timestamp: nowSeconds(), body });
      const webhook = new Webhook(key);
      return { ours: oursSender('standard_webhooks', key, rawBody, headers), theirs: () => webhook.verify(rawBody, headers, { jsonParse: false }) };
    },
  },
  {
    scheme: 'paddle row',
    service: 'paddle',
    baseline: '@paddle/paddle-node-sdk webhooks.isSignatureValid',
    async build(bytes) {
      const key = `pdl_ntfset_${secret()}`;
      const body = jsonEvent(bytes);
      const now = nowSeconds();
      const headers = { 'paddle-signature': `ts=${now};h1=${hmacHex(key, `${now}:${body}`)}` };
      const paddle = new Paddle('pdl_sdbx_apikey_bench');
      // Paddle allows five seconds: both sides read one header, re-signed when the second turns.
      let signedAt = now;
      const current = () => {
        const t = nowSeconds();
        if (t !== signedAt) headers['paddle-signature'] = `ts=${(signedAt = t)};h1=${hmacHex(key, `${t}:${body}`)}`;
        return headers['paddle-signature'];
      };
      const verifyOurs = oursSender('paddle', key, Buffer.from(body), headers);
      return {
        ours: () => (current(), verifyOurs()),
        theirs: () => paddle.webhooks.isSignatureValid(body, key, current()),
      };
    },
  },
  {
    scheme: 'square row',
    service: 'square',
    baseline: 'square WebhooksHelper.verifySignature',
    async build(bytes) {
      const key = secret();
      const body = jsonEvent(bytes);
      const headers = { 'x-square-hmacsha256-signature': hmacBase64(key, WEBHOOK_URL + body) };
      const signatureHeader = headers['x-square-hmacsha256-signature'];
      return {
        ours: oursSender('square', key, Buffer.from(body), headers),
        theirs: () => SquareWebhooksHelper.verifySignature({ requestBody: body, signatureHeader, signatureKey: key, notificationUrl: WEBHOOK_URL }),
      };
    },
  },
  {
    scheme: 'razorpay row',
    service: 'razorpay',
    baseline: 'razorpay validateWebhookSignature',
    async build(bytes) {
      const key = secret();
      const body = jsonEvent(bytes);
      const headers = { 'x-razorpay-signature': hmacHex(key, body) };
      return { ours: oursSender('razorpay', key, Buffer.from(body), headers), theirs: () => Razorpay.validateWebhookSignature(body, headers['x-razorpay-signature'], key) };
    },
  },
  {
    scheme: 'linear row',
    service: 'linear',
    baseline: '@linear/sdk LinearWebhookClient#verify',
    async build(bytes) {
      const key = secret();
      // Linear signs its timestamp inside the body (within a minute): a fresh body per round.
      const event = JSON.parse(jsonEvent(bytes));
      event.webhookTimestamp = Date.now();
      const body = JSON.stringify(event);
      const rawBody = Buffer.from(body);
      const headers = { 'linear-signature': hmacHex(key, body) };
      const client = new LinearWebhookClient(key);
      return { ours: oursSender('linear', key, rawBody, headers), theirs: () => client.verify(rawBody, headers['linear-signature']) };
    },
  },
  {
    scheme: 'hubspot row',
    service: 'hubspot',
    baseline: '@hubspot/api-client Signature.isValid',
    async build(bytes) {
      const key = secret();
      const body = jsonEvent(bytes);
      const timestamp = Date.now();
      const signature = HubSpotSignature.getSignature('POST', 'v3', { signature: '', clientSecret: key, requestBody: body, url: WEBHOOK_URL, timestamp });
      const headers = { 'x-hubspot-signature-v3': signature, 'x-hubspot-request-timestamp': String(timestamp) };
      return {
        ours: oursSender('hubspot', key, Buffer.from(body), headers),
        theirs: () => HubSpotSignature.isValid({ signatureVersion: 'v3', method: 'POST', signature, clientSecret: key, requestBody: body, url: WEBHOOK_URL, timestamp }),
      };
    },
  },
  {
    scheme: 'braintree row',
    service: 'braintree',
    baseline: 'braintree webhookNotification.validateSignature (parse without its XML)',
    async build(bytes) {
      const privateKey = secret();
      const { gateway, sample, body } = await braintreeSample(privateKey, bytes);
      const headers = { 'content-type': 'application/x-www-form-urlencoded' };
      // The form is parsed on our side from the raw body; theirs is handed the two fields, as Express would after its parse.
      const theirs = async () => {
        const fields = new URLSearchParams(body);
        const error = await (gateway.webhookNotification as unknown as { validateSignature(s: string, p: string): Promise<unknown> }).validateSignature(fields.get('bt_signature')!, fields.get('bt_payload')!);
        if (error) throw error;
      };
      void sample;
      return { ours: oursSender('braintree', privateKey, Buffer.from(body), headers), theirs };
    },
  },
  {
    scheme: 'adyen row',
    service: 'adyen',
    baseline: '@adyen/api-library HmacValidator#validateHMAC (+ JSON.parse)',
    async build(bytes) {
      const hexKey = randomBytes(32).toString('hex').toUpperCase();
      const { validator, body } = adyenNotification(hexKey, bytes);
      const rawBody = Buffer.from(body);
      // Both sides read the items from the raw bytes, as received: decoding and JSON.parse are part of either check.
      const theirs = () => JSON.parse(rawBody.toString()).notificationItems.every((i: { NotificationRequestItem: never }) => validator.validateHMAC(i.NotificationRequestItem, hexKey));
      return { ours: oursSender('adyen', hexKey, rawBody, { 'content-type': 'application/json' }), theirs };
    },
  },
];

export default async function signaturesBench() {
  const rows = [];
  console.log(`verifications/s, median of ${ROUNDS} alternating rounds of ~${BATCH_MS} ms; ratio = median per-round ours/theirs; target ≥ ${TARGET_RATIO.toFixed(1)}x`);
  console.log(`${'scheme'.padEnd(22)}${'body'.padStart(7)}${'ours/s'.padStart(12)}${'theirs/s'.padStart(12)}${'ratio'.padStart(9)}   baseline`);
  for (const testCase of CASES) {
    for (const bytes of SIZES) {
      const { ours: oursOp, theirs } = await testCase.build(bytes);
      // Both must accept the request before either is timed (the SDKs throw when they refuse).
      if ((await oursOp()) !== true) throw new Error(`${testCase.scheme}: our verifier refused a valid request`);
      await theirs();
      const result = await compareThroughput({ name: 'ours', op: oursOp }, { name: 'theirs', op: theirs }, { rounds: ROUNDS, batchMs: BATCH_MS, warmupMs: WARMUP_MS });
      const row = {
        scheme: testCase.scheme,
        service: testCase.service,
        body_bytes: bytes,
        ours_ops_per_s: median(result.a),
        baseline: testCase.baseline,
        baseline_ops_per_s: median(result.b),
        ratio: median(result.ratios),
        ratio_samples: result.ratios,
        target_met: median(result.ratios) >= TARGET_RATIO,
      };
      rows.push(row);
      console.log(`${row.scheme.padEnd(22)}${`${bytes / KB} KB`.padStart(7)}${int(row.ours_ops_per_s).padStart(12)}${int(row.baseline_ops_per_s).padStart(12)}${times(row.ratio).padStart(9)}${row.target_met ? '' : ' !'}  ${row.baseline}`);
    }
  }
  const missed = rows.filter((row) => !row.target_met);
  console.log(`target: every scheme and size ≥ ${TARGET_RATIO.toFixed(1)}x: ${verdict(missed.length === 0)}${missed.length ? ` (under: ${missed.map((r) => `${r.scheme} ${r.body_bytes / KB} KB ${times(r.ratio)}`).join(', ')})` : ''}`);
  const chart: ChartRow[] = rows.map((row) => ({
    label: `${row.scheme} ${row.body_bytes / KB} KB`,
    group: 'verifications/s, ours ÷ sender SDK',
    value: row.ratio,
    target: TARGET_RATIO,
    better: 'higher',
    scale: 'log',
    text: `${times(row.ratio)} (${int(row.ours_ops_per_s)} vs ${int(row.baseline_ops_per_s)}/s)`,
  }));
  // The asymmetric senders and the key caches have no target: their figures are reported beside the HMAC ones.
  const asymmetric = await asymmetricBench();
  return {
    rounds: ROUNDS,
    batch_ms: BATCH_MS,
    target_ratio: TARGET_RATIO,
    target_met: missed.length === 0,
    rows,
    asymmetric_rows: asymmetric.rows,
    chart: [...chart, ...asymmetric.chart],
  };
}
