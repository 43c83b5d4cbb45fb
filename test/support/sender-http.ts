/**
 * Each sender of test/support/sender-deliveries.ts as it sends over HTTP: the trigger settings its
 * secret goes in, and its delivery signed the way the sender signs (by the sender's own library
 * where signers.ts has one, else from its documentation, cited in shared/senders.md). Key material
 * the senders publish (PayPal's and SNS's certificates, Google's key set) is served from memory by
 * {@link SENDER_KEYS}, which a local stack takes as its `senderKeys`.
 */
import { createHash, createHmac, generateKeyPairSync, sign } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import type { KeyFetcher } from '../../functions/domain/webhooks/senders/context.js';
import { PAYPAL_CERT_URL, signPayPal, signSns } from './asymmetric-signers.js';
import { certificateChain, selfSignedCertificate } from './certificates.js';
import { googleJwks, googleKey, signGooglePush } from './jwt-signers.js';
import { signCustom, signGithub, signShopify, signSlack, signStandardWebhooks, signStripe, signTwilio } from './signers.js';

/** A delivery as it goes on the wire. */
export interface SentDelivery {
  url: string;
  headers: Record<string, string>;
  body: string;
}

export interface HttpSender {
  /** The trigger's settings for this sender: its `signature`, and anything else its delivery needs. */
  trigger: Record<string, unknown>;
  /**
   * `body` (JSON text) and `headers`, sent to `url`, signed at `now` (unix seconds). `nonce` stands
   * for what a sender makes anew for every request it sends (Mailgun's token, PayPal's transmission
   * id): the same nonce is the same request, retried.
   */
  sign(request: SentDelivery & { now: number; nonce: string }): SentDelivery | Promise<SentDelivery>;
  /**
   * How the sender retries, where it is not by signing the same content anew: `same bytes` where
   * the signed time is inside the body and the row's id is unsigned, so only a resend of the very
   * same bytes is known as the same delivery.
   */
  retry?: 'same bytes';
}

const SECRET = 'e2e-sender-signing-secret';
const WHSEC = `whsec_${Buffer.from('e2e-sender-events-whsec-key-32b').toString('base64')}`;
const hmac = (algorithm: 'sha1' | 'sha256', key: string | Buffer, content: string, encoding: 'hex' | 'base64') => createHmac(algorithm, key).update(content).digest(encoding);
const rfc3339 = (now: number) => new Date(now * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
/** A value of `length` hex characters, the same for the same nonce. */
const fromNonce = (nonce: string, length: number) => createHash('sha256').update(nonce).digest('hex').slice(0, length);

/** A sender that signs the body alone, keyed by the secret's text. */
function bodyHmac(service: string, header: string, encoding: 'hex' | 'base64', prefix = '', algorithm: 'sha1' | 'sha256' = 'sha256'): HttpSender {
  return {
    trigger: { signature: { service, secret: SECRET } },
    sign: (r) => ({ ...r, headers: { ...r.headers, [header]: `${prefix}${hmac(algorithm, SECRET, r.body, encoding)}` } }),
  };
}

/** Svix and its senders: Standard Webhooks signing under `svix-*` names, the message id the delivery's own. */
function svix(service: string): HttpSender {
  return {
    trigger: { signature: { service, secret: WHSEC } },
    sign: (r) => {
      const signed = signStandardWebhooks({ secret: WHSEC, id: r.headers['svix-id']!, timestamp: r.now, body: r.body });
      return { ...r, headers: { ...r.headers, ...Object.fromEntries(Object.entries(signed).map(([name, value]) => [name.replace(/^webhook-/, 'svix-'), value])) } };
    },
  };
}

const discordKeys = generateKeyPairSync('ed25519');
const DISCORD_PUBLIC_KEY = (discordKeys.publicKey.export({ format: 'der', type: 'spki' }) as Buffer).subarray(-32).toString('hex');
const BIGCOMMERCE_CLIENT_SECRET = 'e2ebigcommerceclientsecret0123';
const PAYPAL_WEBHOOK_ID = '1JE4291016473214C';
const paypalSigner = selfSignedCertificate({ commonName: 'messageverificationcerts.paypal.com' });
const SNS_TOPIC = 'arn:aws:sns:us-west-2:123456789012:MyTopic';
const SNS_CERT_URL = 'https://sns.us-west-2.amazonaws.com/SimpleNotificationService-e2e.pem';
/** A test root stands in for the public root AWS's signing certificates chain to. */
const sns = certificateChain({ commonName: 'sns.amazonaws.com' });
const GOOGLE_JWKS_URL = 'https://www.googleapis.com/oauth2/v3/certs';
const google = googleKey('e2e-sender-events');
const PUSH_AUDIENCE = 'https://hooks.example.com/pubsub';
const PUSH_EMAIL = 'push@my-project.iam.gserviceaccount.com';

/** The senders' published keys, served from memory in place of their hosts. */
const PUBLISHED = new Map([[PAYPAL_CERT_URL, paypalSigner.pem], [SNS_CERT_URL, sns.leaf.pem], [GOOGLE_JWKS_URL, googleJwks(google)]]);
export const SENDER_KEYS: KeyFetcher = {
  fetchText: async (url) => PUBLISHED.get(url) ?? Promise.reject(new Error(`nothing published at ${url}`)),
  trustedRoots: [sns.root.pem],
};

export const HTTP_SENDERS: Readonly<Record<string, HttpSender>> = {
  stripe: { trigger: { signature: { service: 'stripe', secret: 'whsec_e2e_stripe' } }, sign: (r) => ({ ...r, headers: { ...r.headers, ...signStripe({ secret: 'whsec_e2e_stripe', body: r.body, timestamp: r.now }) } }) },
  github: { trigger: { signature: { service: 'github', secret: SECRET } }, sign: async (r) => ({ ...r, headers: { ...r.headers, ...(await signGithub({ secret: SECRET, body: r.body })) } }) },
  gitlab: { trigger: { signature: { service: 'gitlab', secret: SECRET } }, sign: (r) => ({ ...r, headers: { ...r.headers, 'x-gitlab-token': SECRET } }) },
  // The secret_token given to setWebhook, sent back in a header with every Update.
  telegram: { trigger: { signature: { service: 'telegram', secret: SECRET } }, sign: (r) => ({ ...r, headers: { ...r.headers, 'x-telegram-bot-api-secret-token': SECRET } }) },
  bitbucket: bodyHmac('bitbucket', 'x-hub-signature', 'hex', 'sha256='),
  slack: { trigger: { signature: { service: 'slack', secret: SECRET } }, sign: (r) => ({ ...r, headers: { ...r.headers, ...signSlack({ secret: SECRET, body: r.body, timestamp: r.now }) } }) },
  discord: {
    trigger: { signature: { service: 'discord', secret: DISCORD_PUBLIC_KEY } },
    sign: (r) => ({ ...r, headers: { ...r.headers, 'x-signature-timestamp': String(r.now), 'x-signature-ed25519': sign(null, Buffer.from(`${r.now}${r.body}`), discordKeys.privateKey).toString('hex') } }),
  },
  shopify: { trigger: { signature: { service: 'shopify', secret: SECRET } }, sign: (r) => ({ ...r, headers: { ...r.headers, ...signShopify({ secret: SECRET, body: r.body }) } }) },
  woocommerce: bodyHmac('woocommerce', 'x-wc-webhook-signature', 'base64'),
  // Signed as BigCommerce's docs verify: the standardwebhooks library keyed by base64(client secret).
  bigcommerce: {
    trigger: { signature: { service: 'bigcommerce', secret: BIGCOMMERCE_CLIENT_SECRET } },
    sign: (r) => {
      const id = `msg_${fromNonce(r.nonce, 27)}`;
      const signature = new Webhook(Buffer.from(BIGCOMMERCE_CLIENT_SECRET).toString('base64')).sign(id, new Date(r.now * 1000), r.body);
      return { ...r, headers: { ...r.headers, 'webhook-id': id, 'webhook-timestamp': String(r.now), 'webhook-signature': signature } };
    },
  },
  // An Event Streams sink posts JSON: Twilio binds the body by a bodySHA256 query parameter in the signed URL.
  twilio: {
    trigger: { signature: { service: 'twilio', secret: SECRET } },
    sign: (r) => {
      const signed = signTwilio({ authToken: SECRET, url: r.url, body: r.body, contentType: 'application/json' });
      return { ...r, url: signed.url, headers: { ...r.headers, ...signed.headers } };
    },
  },
  // Mailgun signs a fresh token and the time, in the body beside event-data.
  mailgun: {
    trigger: { signature: { service: 'mailgun', secret: SECRET } },
    sign: (r) => {
      const timestamp = String(r.now);
      const token = fromNonce(r.nonce, 50);
      const body = { ...JSON.parse(r.body), signature: { timestamp, token, signature: hmac('sha256', SECRET, timestamp + token, 'hex') } };
      return { ...r, body: JSON.stringify(body) };
    },
  },
  postmark: {
    trigger: { signature: { service: 'postmark', secret: 'postmark-hooks:e2e-p@ss' } },
    sign: (r) => ({ ...r, headers: { ...r.headers, authorization: `Basic ${Buffer.from('postmark-hooks:e2e-p@ss').toString('base64')}` } }),
  },
  resend: svix('resend'),
  clerk: svix('clerk'),
  svix: svix('svix'),
  standard_webhooks: {
    trigger: { signature: { service: 'standard_webhooks', secret: WHSEC } },
    sign: (r) => ({ ...r, headers: { ...r.headers, ...signStandardWebhooks({ secret: WHSEC, id: r.headers['webhook-id']!, timestamp: r.now, body: r.body }) } }),
  },
  paddle: {
    trigger: { signature: { service: 'paddle', secret: 'pdl_ntfset_01e2e_secret' } },
    sign: (r) => ({ ...r, headers: { ...r.headers, 'paddle-signature': `ts=${r.now};h1=${hmac('sha256', 'pdl_ntfset_01e2e_secret', `${r.now}:${r.body}`, 'hex')}` } }),
  },
  lemon_squeezy: bodyHmac('lemon_squeezy', 'x-signature', 'hex'),
  paypal: {
    trigger: { signature: { service: 'paypal', secret: PAYPAL_WEBHOOK_ID } },
    sign: (r) => {
      const transmissionId = [8, 4, 4, 4, 12].map((length, i) => fromNonce(`${r.nonce}${i}`, length)).join('-');
      const headers = signPayPal({ body: r.body, webhookId: PAYPAL_WEBHOOK_ID, transmissionId, transmissionTime: rfc3339(r.now) }, paypalSigner.privateKey);
      // Lower case, so they replace the delivery's own transmission id rather than join it.
      return { ...r, headers: { ...r.headers, ...Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value])) } };
    },
  },
  // Square signs the notification URL it calls, then the body.
  square: {
    trigger: { signature: { service: 'square', secret: SECRET } },
    sign: (r) => ({ ...r, headers: { ...r.headers, 'x-square-hmacsha256-signature': hmac('sha256', SECRET, r.url + r.body, 'base64') } }),
  },
  razorpay: bodyHmac('razorpay', 'x-razorpay-signature', 'hex'),
  coinbase_commerce: bodyHmac('coinbase_commerce', 'x-cc-webhook-signature', 'hex'),
  zoom: {
    trigger: { signature: { service: 'zoom', secret: SECRET } },
    sign: (r) => ({ ...r, headers: { ...r.headers, 'x-zm-request-timestamp': String(r.now), 'x-zm-signature': `v0=${hmac('sha256', SECRET, `v0:${r.now}:${r.body}`, 'hex')}` } }),
  },
  twitch: {
    trigger: { signature: { service: 'twitch', secret: SECRET } },
    sign: (r) => {
      const timestamp = rfc3339(r.now);
      const signature = hmac('sha256', SECRET, r.headers['twitch-eventsub-message-id']! + timestamp + r.body, 'hex');
      return { ...r, headers: { ...r.headers, 'twitch-eventsub-message-timestamp': timestamp, 'twitch-eventsub-message-signature': `sha256=${signature}` } };
    },
  },
  calendly: {
    trigger: { signature: { service: 'calendly', secret: SECRET } },
    sign: (r) => ({ ...r, headers: { ...r.headers, 'calendly-webhook-signature': `t=${r.now},v1=${hmac('sha256', SECRET, `${r.now}.${r.body}`, 'hex')}` } }),
  },
  typeform: bodyHmac('typeform', 'typeform-signature', 'base64', 'sha256='),
  intercom: bodyHmac('intercom', 'x-hub-signature', 'hex', 'sha1=', 'sha1'),
  // Linear signs a body that carries its own time, webhookTimestamp in milliseconds. Its
  // Linear-Delivery header is unsigned and not documented stable, so a retry signed anew (a new
  // webhookTimestamp) is new signed content: deduplicated only when resent as the same bytes.
  linear: {
    retry: 'same bytes',
    trigger: { signature: { service: 'linear', secret: SECRET } },
    sign: (r) => {
      const body = JSON.stringify({ ...JSON.parse(r.body), webhookTimestamp: r.now * 1000 });
      return { ...r, body, headers: { ...r.headers, 'linear-signature': hmac('sha256', SECRET, body, 'hex') } };
    },
  },
  jira: bodyHmac('jira', 'x-hub-signature', 'hex', 'sha256='),
  notion: bodyHmac('notion', 'x-notion-signature', 'hex', 'sha256='),
  vercel: bodyHmac('vercel', 'x-vercel-signature', 'hex', '', 'sha1'),
  sentry: bodyHmac('sentry', 'sentry-hook-signature', 'hex'),
  pagerduty: bodyHmac('pagerduty', 'x-pagerduty-signature', 'hex', 'v1='),
  zendesk: {
    trigger: { signature: { service: 'zendesk', secret: SECRET } },
    sign: (r) => {
      const timestamp = rfc3339(r.now);
      return { ...r, headers: { ...r.headers, 'x-zendesk-webhook-signature-timestamp': timestamp, 'x-zendesk-webhook-signature': hmac('sha256', SECRET, timestamp + r.body, 'base64') } };
    },
  },
  docusign: bodyHmac('docusign', 'x-docusign-signature-1', 'base64'),
  // The whole POST as one event: its type is the envelope's `object` (split, each change is an event: test/e2e/receiver-batches.test.ts).
  meta: {
    trigger: { split_batches: false, signature: { service: 'meta', secret: SECRET, verify_token: 'meta-e2e-verify-token' } },
    sign: (r) => ({ ...r, headers: { ...r.headers, 'x-hub-signature-256': `sha256=${hmac('sha256', SECRET, r.body, 'hex')}` } }),
  },
  custom: {
    trigger: { signature: { service: 'custom', secret: SECRET, custom: { algorithm: 'sha256', header: 'X-Signature', encoding: 'hex', prefix: 'sha256=' } } },
    sign: (r) => ({ ...r, headers: { ...r.headers, ...signCustom({ algorithm: 'sha256', header: 'X-Signature', encoding: 'hex', prefix: 'sha256=' }, SECRET, r.body) } }),
  },
  google_pubsub: {
    trigger: { signature: { service: 'google_pubsub', secret: `${PUSH_AUDIENCE} ${PUSH_EMAIL}` } },
    sign: async (r) => ({ ...r, headers: { ...r.headers, ...(await signGooglePush(google, { aud: PUSH_AUDIENCE, email: PUSH_EMAIL, iat: r.now })) } }),
  },
  // SNS posts its JSON as text/plain, signed by the certificate at SigningCertURL.
  aws_sns: {
    trigger: { signature: { service: 'aws_sns', secret: SNS_TOPIC } },
    sign: (r) => ({
      ...r,
      body: signSns({ ...JSON.parse(r.body), SigningCertURL: SNS_CERT_URL }, sns.leaf.privateKey),
      headers: { ...r.headers, 'content-type': 'text/plain; charset=UTF-8', 'x-amz-sns-message-type': 'Notification' },
    }),
  },
  // The whole POST as one event, known by its envelope's eventId (split, each event is one: test/e2e/receiver-batches.test.ts).
  okta: {
    trigger: { split_batches: false, signature: { service: 'okta', secret: 'Authorization: okta-e2e-secret' } },
    sign: (r) => ({ ...r, headers: { ...r.headers, authorization: 'okta-e2e-secret' } }),
  },
};

/** Rows that read a type or an id and have no delivery sent over HTTP, and why: none can be created as a trigger. */
export const ROWS_NOT_SENT: Readonly<Record<string, string>> = {
  plaid: 'unsupported: no trigger can verify it, so none can be created',
};

/** Rows whose delivery is sent over HTTP but whose delivery id is not, and why. */
export const IDS_NOT_SENT: Readonly<Record<string, string>> = {
  discord: 'the id is an Interaction\'s snowflake (read in test/domain/senders/event-types.test.ts): Interactions are answered at once and never retried, and Webhook Events, sent here, carry no id',
};
