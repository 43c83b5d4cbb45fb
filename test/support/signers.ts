/**
 * Real signatures for test requests, made with each sender's own SDK where one exists, so the
 * verifiers are checked against the senders rather than against themselves.
 */
import { createHmac } from 'node:crypto';
import { sign as signWithOctokit } from '@octokit/webhooks-methods';
import { Webhook } from 'standardwebhooks';
import Stripe from 'stripe';
import { senderSdks } from './sender-sdks.js';
import type { CustomSignatureConfig } from '../../functions/domain/webhooks/signatures/custom.js';

export type SignedHeaders = Record<string, string>;

const stripe = new Stripe('sk_test_x');

/** `stripe-signature` as Stripe sends it (`stripe.webhooks.generateTestHeaderString`). */
export function signStripe(input: { secret: string; body: string; timestamp: number }): SignedHeaders {
  const header = stripe.webhooks.generateTestHeaderString({
    payload: input.body,
    secret: input.secret,
    timestamp: input.timestamp,
  });
  return { 'stripe-signature': header };
}

/** `x-hub-signature-256` as GitHub sends it (`@octokit/webhooks-methods`, which is async). */
export async function signGithub(input: { secret: string; body: string }): Promise<SignedHeaders> {
  return { 'x-hub-signature-256': await signWithOctokit(input.secret, input.body) };
}

/** Slack's headers, per https://api.slack.com/authentication/verifying-requests-from-slack (no signing SDK). */
export function signSlack(input: { secret: string; body: string; timestamp: number }): SignedHeaders {
  const digest = createHmac('sha256', input.secret).update(`v0:${input.timestamp}:${input.body}`).digest('hex');
  return { 'x-slack-signature': `v0=${digest}`, 'x-slack-request-timestamp': String(input.timestamp) };
}

/** Shopify's header, per Shopify's webhook documentation (no signing SDK). */
export function signShopify(input: { secret: string; body: string }): SignedHeaders {
  return { 'x-shopify-hmac-sha256': createHmac('sha256', input.secret).update(input.body).digest('base64') };
}

/**
 * Twilio's signature (`twilio.getExpectedTwilioSignature`). A form body is signed as its
 * parameters; any other body is bound by a `bodySHA256` query parameter, so the returned `url`
 * (where the request must be sent) differs from the input for those.
 */
export function signTwilio(input: { authToken: string; url: string; body: string; contentType: string }): {
  url: string;
  headers: SignedHeaders;
} {
  const isForm = input.contentType.split(';')[0]?.trim().toLowerCase() === 'application/x-www-form-urlencoded';
  const url = isForm ? input.url : withQueryParam(input.url, 'bodySHA256', senderSdks.twilio.getExpectedBodyHash(input.body));
  const params = isForm ? formParams(input.body) : {};
  const signature = senderSdks.twilio.getExpectedTwilioSignature(input.authToken, url, params);
  return { url, headers: { 'content-type': input.contentType, 'x-twilio-signature': signature } };
}

/** Standard Webhooks headers (`new Webhook(secret).sign`); `timestamp` in unix seconds. */
export function signStandardWebhooks(input: { secret: string; id: string; timestamp: number; body: string }): SignedHeaders {
  const signature = new Webhook(input.secret).sign(input.id, new Date(input.timestamp * 1000), input.body);
  return { 'webhook-id': input.id, 'webhook-timestamp': String(input.timestamp), 'webhook-signature': signature };
}

/** Headers for a custom HMAC scheme; `timestamp` is required when the config has a timestamp header. */
export function signCustom(config: CustomSignatureConfig, secret: string, body: string, timestamp?: number): SignedHeaders {
  if (config.timestamp_header !== undefined && timestamp === undefined) {
    throw new TypeError('signCustom: this config signs a timestamp; pass one');
  }
  const content = config.timestamp_header === undefined ? body : `${timestamp}.${body}`;
  const digest = createHmac(config.algorithm, secret).update(content).digest(config.encoding);
  const headers: SignedHeaders = { [config.header.toLowerCase()]: `${config.prefix ?? ''}${digest}` };
  if (config.timestamp_header !== undefined) headers[config.timestamp_header.toLowerCase()] = String(timestamp);
  return headers;
}

/** Form parameters as Express would hand them to twilio-node: repeated names become arrays. */
function formParams(body: string): Record<string, string | string[]> {
  const params = new Map<string, string[]>();
  for (const [name, value] of new URLSearchParams(body)) params.set(name, [...(params.get(name) ?? []), value]);
  return Object.fromEntries([...params].map(([name, values]) => [name, values.length === 1 ? values[0] : values]));
}

function withQueryParam(url: string, name: string, value: string): string {
  return `${url}${url.includes('?') ? '&' : '?'}${name}=${value}`;
}
