import { Buffer } from 'node:buffer';
import { randomBytes } from 'node:crypto';
import { verify as verifyWithOctokit } from '@octokit/webhooks-methods';
import '@shopify/shopify-api/adapters/node';
import { ApiVersion, LogSeverity, shopifyApi } from '@shopify/shopify-api';
import { verifySlackRequest } from '@slack/bolt';
import { Webhook } from 'standardwebhooks';
import Stripe from 'stripe';
import twilio from 'twilio';
import { verifySignature, type SignatureService } from '../functions/domain/webhooks/signatures/index.js';
import { signGithub, signShopify, signSlack, signStandardWebhooks, signStripe, signTwilio } from '../test/support/signers.js';
import { asymmetricBench } from './support/asymmetric.js';
import type { ChartRow } from './support/chart-row.js';
import { formEvent, jsonEvent, KB } from './support/payloads.js';
import { compareThroughput, int, median, times, verdict } from './support/timing.js';

/**
 * `npm run bench signatures`: verifications per second of `verifySignature` against each sender's
 * own SDK verifying the same signed request, for 1 KB and 100 KB bodies; then the asymmetric
 * sender primitives and their key caches (`support/asymmetric.ts`).
 * Each comparison alternates batches of ours and theirs; the ratio is the median of the per-round
 * ratios (ours / theirs), so a noisy neighbour slows both sides of a round alike.
 */
const SIZES = [KB, 100 * KB] as const;
const ROUNDS = 15;
const BATCH_MS = 50;
const WARMUP_MS = 150;
const TARGET_RATIO = 1;
const TOLERANCE_SECONDS = 300;
const WEBHOOK_URL = 'https://hooks.example.com/webhooks/bench0123456789abcdefghijklmnopq';

/** Stripe's signature helper: `constructEvent` without its JSON.parse. Always set in stripe-node. */
const stripeSignature = new Stripe('sk_test_bench').webhooks.signature!;
const nowSeconds = () => Math.floor(Date.now() / 1000);

interface Case {
  scheme: string;
  service: SignatureService;
  /** What `theirs` is, as printed. */
  baseline: string;
  /** One verification each, of the same signed request: ours and the baseline. */
  build(bytes: number): Promise<{ ours: () => unknown; theirs: () => unknown }>;
}

/** Our verifier as the receiver calls it: raw bytes, lower-case headers, the clock read per request. */
function ours(service: SignatureService, secret: string, rawBody: Buffer, headers: Record<string, string>, url = WEBHOOK_URL) {
  const config = { service, secrets: [secret] };
  return () => verifySignature(config, { rawBody, headers, url, nowSeconds: nowSeconds() });
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

const CASES: Case[] = [
  {
    scheme: 'stripe',
    service: 'stripe',
    baseline: 'stripe webhooks.signature.verifyHeader',
    async build(bytes) {
      const key = `whsec_${secret()}`;
      const body = jsonEvent(bytes);
      const rawBody = Buffer.from(body);
      const headers: Record<string, string> = { 'content-type': 'application/json', ...signStripe({ secret: key, body, timestamp: nowSeconds() }) };
      // The raw bytes, as Stripe's docs ask (`express.raw()`); verifyHeader is constructEvent without the JSON.parse.
      return { ours: ours('stripe', key, rawBody, headers), theirs: () => stripeSignature.verifyHeader(rawBody, headers['stripe-signature']!, key, TOLERANCE_SECONDS) };
    },
  },
  {
    scheme: 'github',
    service: 'github',
    baseline: '@octokit/webhooks-methods verify',
    async build(bytes) {
      const key = secret();
      const body = jsonEvent(bytes);
      const headers: Record<string, string> = { 'content-type': 'application/json', ...(await signGithub({ secret: key, body })) };
      // Octokit takes the payload only as a string (and is async).
      return { ours: ours('github', key, Buffer.from(body), headers), theirs: () => verifyWithOctokit(key, body, headers['x-hub-signature-256']!) };
    },
  },
  {
    scheme: 'slack',
    service: 'slack',
    baseline: '@slack/bolt verifySlackRequest',
    async build(bytes) {
      const key = secret();
      const body = jsonEvent(bytes);
      const headers: Record<string, string> = { 'content-type': 'application/json', ...signSlack({ secret: key, body, timestamp: nowSeconds() }) };
      // Bolt takes the body as a string and the timestamp as a number, as its own receivers pass them.
      const slackHeaders = { 'x-slack-signature': headers['x-slack-signature']!, 'x-slack-request-timestamp': Number(headers['x-slack-request-timestamp']) };
      return { ours: ours('slack', key, Buffer.from(body), headers), theirs: () => verifySlackRequest({ signingSecret: key, body, headers: slackHeaders }) };
    },
  },
  {
    scheme: 'shopify',
    service: 'shopify',
    baseline: '@shopify/shopify-api webhooks.validate',
    async build(bytes) {
      const key = secret();
      const body = jsonEvent(bytes);
      // The headers Shopify sends with every webhook; the SDK refuses a request without them.
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        'x-shopify-topic': 'orders/create',
        'x-shopify-shop-domain': 'bench.myshopify.com',
        'x-shopify-api-version': ApiVersion.July26,
        'x-shopify-webhook-id': 'b54557e4-bdd9-4b37-8a5f-bf7d70bcd043',
        ...signShopify({ secret: key, body }),
      };
      // One app, configured once at module scope as an app would; `validate` is its public webhook check.
      const shopify = shopifyApi({ apiKey: 'bench', apiSecretKey: key, hostName: 'bench.example.com', apiVersion: ApiVersion.July26, isEmbeddedApp: false, logger: { level: LogSeverity.Error } });
      const rawRequest = { method: 'POST', url: '/webhooks', headers } as never;
      const theirs = async () => {
        const result = await shopify.webhooks.validate({ rawBody: body, rawRequest, rawResponse: {} as never });
        if (!result.valid) throw new Error(`shopify refused: ${result.reason}`);
      };
      return { ours: ours('shopify', key, Buffer.from(body), headers), theirs };
    },
  },
  {
    scheme: 'twilio (JSON)',
    service: 'twilio',
    baseline: 'twilio validateRequestWithBody',
    async build(bytes) {
      const token = randomBytes(16).toString('hex');
      const body = jsonEvent(bytes);
      const { url, headers } = signTwilio({ authToken: token, url: WEBHOOK_URL, body, contentType: 'application/json' });
      const signature = headers['x-twilio-signature']!;
      return { ours: ours('twilio', token, Buffer.from(body), headers, url), theirs: () => twilio.validateRequestWithBody(token, signature, url, body) };
    },
  },
  {
    scheme: 'twilio (form)',
    service: 'twilio',
    baseline: 'twilio validateRequest (+ form parse)',
    async build(bytes) {
      const token = randomBytes(16).toString('hex');
      const body = formEvent(bytes);
      const { url, headers } = signTwilio({ authToken: token, url: WEBHOOK_URL, body, contentType: 'application/x-www-form-urlencoded' });
      const signature = headers['x-twilio-signature']!;
      // We verify from the raw body, so the parse Express would do for twilio-node is counted on its side.
      return { ours: ours('twilio', token, Buffer.from(body), headers, url), theirs: () => twilio.validateRequest(token, signature, url, formParams(body)) };
    },
  },
  {
    scheme: 'standard_webhooks',
    service: 'standard_webhooks',
    baseline: 'standardwebhooks Webhook#verify (jsonParse: false)',
    async build(bytes) {
      const key = `whsec_${randomBytes(32).toString('base64')}`;
      const body = jsonEvent(bytes);
      const rawBody = Buffer.from(body);
      const headers: Record<string, string> = { 'content-type': 'application/json', ...signStandardWebhooks({ secret: key, id: 'msg_bench', timestamp: nowSeconds(), body }) };
      // Built once, as an app would at module scope (ours decodes the key on every call);
      // `jsonParse: false` leaves out the JSON.parse that our verifier does not do either.
      const webhook = new Webhook(key);
      return { ours: ours('standard_webhooks', key, rawBody, headers), theirs: () => webhook.verify(rawBody, headers, { jsonParse: false }) };
    },
  },
];

export default async function signaturesBench() {
  const rows = [];
  console.log(`verifications/s, median of ${ROUNDS} alternating rounds of ~${BATCH_MS} ms; ratio = median per-round ours/theirs; target ≥ ${TARGET_RATIO.toFixed(1)}x`);
  console.log(`${'scheme'.padEnd(18)}${'body'.padStart(7)}${'ours/s'.padStart(12)}${'theirs/s'.padStart(12)}${'ratio'.padStart(9)}   baseline`);
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
      console.log(`${row.scheme.padEnd(18)}${`${bytes / KB} KB`.padStart(7)}${int(row.ours_ops_per_s).padStart(12)}${int(row.baseline_ops_per_s).padStart(12)}${times(row.ratio).padStart(9)}${row.target_met ? '' : ' !'}  ${row.baseline}`);
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
