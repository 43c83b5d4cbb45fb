// The sender catalog: one row per sender, naming a verification primitive and its parameters.
// Adding a sender adds a row here and a proof in test/domain/senders/, never a branch in a
// verifier. Ids are those of shared/senders.md (a trigger's `signature.service`).
import { CUSTOM_TOLERANCE_SECONDS, type CustomSignatureConfig } from '../signatures/custom.js';
import type { ContentPart, DeliveryPolicy, HmacKey, HmacParams, RequestValue, SenderRow, TimestampRule } from './catalog-types.js';
import { SNS_SIGNED_FIELDS } from './sns-fields.js';

/* Tolerances, each the sender's own where it names one ---------------------------------------- */

/** Stripe's own default tolerance between the signed timestamp and now. */
export const STRIPE_TOLERANCE_SECONDS = 300;
/** Slack recommends refusing requests more than five minutes from local time. */
export const SLACK_TOLERANCE_SECONDS = 300;
/** The Standard Webhooks specification's (and reference library's) `WEBHOOK_TOLERANCE_IN_SECONDS`. */
export const STANDARD_WEBHOOKS_TOLERANCE_SECONDS = 300;
/** Svix signs as Standard Webhooks do, and its library refuses timestamps five minutes off. */
export const SVIX_TOLERANCE_SECONDS = STANDARD_WEBHOOKS_TOLERANCE_SECONDS;
/** Paddle's SDK (`WebhooksValidator.MAX_VALID_TIME_DIFFERENCE`): five seconds. */
export const PADDLE_TOLERANCE_SECONDS = 5;
/** Zoom's sample verifier refuses requests older than five minutes. */
export const ZOOM_TOLERANCE_SECONDS = 300;
/** Twitch: "make sure the message isn't older than 10 minutes". */
export const TWITCH_TOLERANCE_SECONDS = 600;
/** Calendly's sample code allows three minutes. */
export const CALENDLY_TOLERANCE_SECONDS = 180;
/** HubSpot v3: "reject the request if the timestamp is older than 5 minutes". */
export const HUBSPOT_TOLERANCE_SECONDS = 300;
/** Linear's SDK: `webhookTimestamp` within a minute. */
export const LINEAR_TOLERANCE_SECONDS = 60;
/**
 * Mailgun and Zendesk ask for the timestamp to be checked against the clock without naming a
 * window: five minutes, as Stripe, Slack and Standard Webhooks.
 */
export const MAILGUN_TOLERANCE_SECONDS = 300;
export const ZENDESK_TOLERANCE_SECONDS = 300;
/**
 * Discord documents no window; interactions are delivered at once and never retried (the endpoint
 * has 3 s to answer), so five minutes refuses replays without refusing Discord.
 */
export const DISCORD_TOLERANCE_SECONDS = 300;
/**
 * PayPal documents no window for PAYPAL-TRANSMISSION-TIME. Five minutes assumes a retry, being a
 * new transmission with its own id, is signed anew (unconfirmed: if PayPal's retries reuse the
 * first signature, the row must drop its tolerance).
 */
export const PAYPAL_TOLERANCE_SECONDS = 300;
/**
 * SendGrid documents no window, and retries for up to 24 hours, perhaps with the first signature:
 * a signed timestamp may be 25 hours old, but no more than the usual five minutes ahead.
 */
export const SENDGRID_MAX_AGE_SECONDS = 25 * 3600;
export const SENDGRID_FUTURE_SKEW_SECONDS = 300;
/** google-auth-library's own clock skew for ID tokens (`OAuth2Client.CLOCK_SKEW_SECS_`): five minutes. */
export const GOOGLE_CLOCK_SKEW_SECONDS = 300;
/** Google's ID tokens live one hour (`exp` is `iat` + 3600): none older is Google's own. */
export const GOOGLE_ID_TOKEN_MAX_AGE_SECONDS = 3600;

/* Shared pieces of rows ------------------------------------------------------------------------ */

const TEXT_KEY: HmacKey = { format: 'text' };
const WHSEC_BASE64_KEY: HmacKey = { format: 'base64', strip_prefix: 'whsec_' };
const BODY: ContentPart[] = [{ part: 'body' }];

/** Where an event type or id is: a header (lower case), or a member of the JSON body. */
/**
 * The optional fields of Telegram's `Update`, in the Bot API's order (core.telegram.org/bots/api#update,
 * as aiogram 3.29 and python-telegram-bot list them): which one an Update holds is its type.
 */
export const TELEGRAM_UPDATE_TYPES = [
  'message', 'edited_message', 'channel_post', 'edited_channel_post', 'business_connection', 'business_message',
  'edited_business_message', 'deleted_business_messages', 'guest_message', 'message_reaction', 'message_reaction_count',
  'inline_query', 'chosen_inline_result', 'callback_query', 'shipping_query', 'pre_checkout_query', 'purchased_paid_media',
  'poll', 'poll_answer', 'my_chat_member', 'chat_member', 'chat_join_request', 'chat_boost', 'removed_chat_boost', 'managed_bot',
] as const satisfies readonly [string, ...string[]];

const inHeader = (name: string): RequestValue => ({ from: 'header', name });
const inBody = (...path: string[]): RequestValue => ({ from: 'json', path });

/** HMAC-SHA256 of the raw body, keyed by the secret as text: the most common scheme. */
function bodyHmac(header: string, encoding: 'hex' | 'base64', prefix?: string, algorithm: 'sha1' | 'sha256' = 'sha256'): { primitive: 'hmac' } & HmacParams {
  return { primitive: 'hmac', algorithm, key: TEXT_KEY, content: BODY, signature: { from: 'header', name: header, ...(prefix && { prefix }) }, encoding };
}

/** Svix and Standard Webhooks: `<id>.<timestamp>.<body>`, `v1,<b64>` items, key after `whsec_`. */
function svixStyle(prefix: 'svix' | 'webhook'): { primitive: 'hmac' } & HmacParams {
  const timestamp: TimestampRule = {
    source: { from: 'header', name: `${prefix}-timestamp` },
    format: 'unix_seconds',
    tolerance_seconds: SVIX_TOLERANCE_SECONDS,
  };
  return {
    primitive: 'hmac',
    algorithm: 'sha256',
    key: WHSEC_BASE64_KEY,
    content: [{ part: 'header', name: `${prefix}-id` }, { part: 'literal', text: '.' }, { part: 'timestamp' }, { part: 'literal', text: '.' }, { part: 'body' }],
    signature: { from: 'header', name: `${prefix}-signature`, list: { separator: ' ', assign: ',', key: 'v1' } },
    encoding: 'base64',
    timestamp,
  };
}

/* Delivery time-outs and retries, from shared/sender-events.md (each fact there names its source) */

const MINUTE = 60;
const HOUR = 3600;
const DAY = 24 * HOUR;
/** A figure is a secondary source's, or not confirmed in the sender's own documentation. */
const UNCONFIRMED = true;

/** How long a sender waits for an answer and for how long it retries; `null` where its documentation does not say. */
function waits(timeout_seconds: number | null, retry_window_seconds: number | null, retries: string, unconfirmed = false): DeliveryPolicy {
  return { timeout_seconds, retry_window_seconds, retries, ...(unconfirmed && { unconfirmed: true as const }) };
}

/** docs.svix.com/retries: after the first attempt, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h; 15 s to answer. */
const SVIX_RETRY_DELAYS_SECONDS = [5, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 5 * HOUR, 10 * HOUR, 10 * HOUR];
const SVIX_POLICY = waits(15, SVIX_RETRY_DELAYS_SECONDS.reduce((a, b) => a + b), 'Svix\'s schedule: at once, then 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h (about 27.6 h); 3xx counts as a failure.');
/** BigCommerce's https-webhook-overview: retries after 60, 180, 300, 600, 900, 1800, 3600, 7200, 21600, 50400 and 86400 s. */
const BIGCOMMERCE_RETRY_DELAYS_SECONDS = [60, 180, 300, 600, 900, 1800, 3600, 7200, 21600, 50400, 86400];

const SVIX_DOCS = 'https://docs.svix.com/receiving/verifying-payloads/how-manual';

/** Every sender Flowgate knows, in the order of shared/senders.md, then `standard_webhooks` and `custom`. */
export const SENDERS: readonly SenderRow[] = [
  {
    id: 'stripe',
    name: 'Stripe',
    category: 'payments',
    delivery_policy: waits(null, 3 * DAY, 'Non-2xx: exponential backoff for up to 3 days (a sandbox: 3 times over a few hours).'),
    docs_url: 'https://docs.stripe.com/webhooks#verify-manually',
    secret_label: "The endpoint's signing secret (whsec_…)",
    secret_prefix: 'whsec_',
    handshake: false,
    event_type: { sources: [inBody('type')], example: 'payment_intent.succeeded' },
    delivery_id: { from: 'json', path: ['id'], signed: true },
    verification: {
      primitive: 'hmac',
      algorithm: 'sha256',
      key: TEXT_KEY, // Stripe keys the HMAC with the whole `whsec_…` text, unlike Svix
      content: [{ part: 'timestamp' }, { part: 'literal', text: '.' }, { part: 'body' }],
      signature: { from: 'header', name: 'stripe-signature', list: { separator: ',', assign: '=', key: 'v1' } },
      encoding: 'hex',
      timestamp: { source: { from: 'signature_list', key: 't' }, format: 'unix_seconds', tolerance_seconds: STRIPE_TOLERANCE_SECONDS },
    },
  },
  {
    id: 'github',
    name: 'GitHub',
    category: 'code hosting',
    delivery_policy: waits(10, 0, 'No automatic retry: a delivery without a 2xx within 10 s failed, and may be redelivered by hand or API for 3 days (GitHub Enterprise Server waits 30 s).'),
    docs_url: 'https://docs.github.com/en/webhooks/using-webhooks/validating-webhook-deliveries',
    secret_label: "The webhook's secret",
    handshake: false,
    event_type: { sources: [inHeader('x-github-event')], example: 'pull_request', note: 'The body\'s `action` (`opened`) refines it; a flow reads it.' },
    delivery_id: { from: 'header', name: 'x-github-delivery', signed: false },
    verification: bodyHmac('x-hub-signature-256', 'hex', 'sha256='),
  },
  {
    id: 'gitlab',
    name: 'GitLab',
    category: 'code hosting',
    delivery_policy: waits(10, 0, 'No automatic retry ("Resend request" by hand); after 4 failures in a row the hook is disabled, for a while on 5xx, until re-enabled on 4xx. Self-managed instances set their own time-out.'),
    docs_url: 'https://docs.gitlab.com/user/project/integrations/webhooks/#create-a-webhook',
    secret_label: "The webhook's secret token",
    handshake: false,
    event_type: { sources: [inHeader('x-gitlab-event'), inBody('object_kind')], example: 'Push Hook', note: 'The body\'s `object_kind` (`push`) only when the header is missing.' },
    // GitLab's stable id across retries (X-Gitlab-Event-UUID is shared by recursive hooks).
    delivery_id: { from: 'header', name: 'idempotency-key', signed: false },
    verification: { primitive: 'static_token', location: 'header', header: 'x-gitlab-token' },
    secret_fields: [{ from: 'header', name: 'x-gitlab-token' }],
  },
  {
    id: 'bitbucket',
    name: 'Bitbucket',
    category: 'code hosting',
    delivery_policy: waits(10, null, 'On a 5xx, 2 more attempts with no delay between them (a community answer).', UNCONFIRMED),
    docs_url: 'https://support.atlassian.com/bitbucket-cloud/docs/manage-webhooks/#Secure-webhooks',
    secret_label: "The webhook's secret",
    handshake: false,
    event_type: { sources: [inHeader('x-event-key')], example: 'repo:push' },
    delivery_id: { from: 'header', name: 'x-request-uuid', signed: false },
    verification: bodyHmac('x-hub-signature', 'hex', 'sha256='),
  },
  {
    id: 'slack',
    name: 'Slack',
    category: 'messaging',
    delivery_policy: waits(3, 6 * MINUTE, 'Non-2xx, over 3 s, or a connection error: 3 retries, at once, after 1 min and after 5 min. Interactivity is never retried.'),
    docs_url: 'https://api.slack.com/authentication/verifying-requests-from-slack',
    secret_label: "The app's Signing Secret (Basic Information, App Credentials)",
    handshake: true,
    event_type: { sources: [inBody('event', 'type'), inBody('type')], example: 'app_mention', note: 'The Events API\'s inner `event.type`; an envelope without an event by its own `type` (`url_verification`). Interactivity\'s form field `payload` is not read.' },
    handshake_answer: 'slack_url_verification',
    delivery_id: { from: 'json', path: ['event_id'], signed: true },
    verification: {
      primitive: 'hmac',
      algorithm: 'sha256',
      key: TEXT_KEY,
      content: [{ part: 'literal', text: 'v0:' }, { part: 'timestamp' }, { part: 'literal', text: ':' }, { part: 'body' }],
      signature: { from: 'header', name: 'x-slack-signature', prefix: 'v0=' },
      encoding: 'hex',
      timestamp: { source: { from: 'header', name: 'x-slack-request-timestamp' }, format: 'unix_seconds', tolerance_seconds: SLACK_TOLERANCE_SECONDS },
    },
  },
  {
    id: 'discord',
    name: 'Discord',
    category: 'messaging',
    delivery_policy: waits(3, 10 * MINUTE, 'Webhook Events: no 204 within 3 s, several retries with backoff for up to 10 min. Interactions are never retried.'),
    docs_url: 'https://discord.com/developers/docs/interactions/overview#setting-up-an-endpoint-validating-security-request-headers',
    secret_label: "The application's Public Key (General Information): 64 hex characters",
    handshake: true,
    event_type: { sources: [inBody('event', 'type')], example: 'APPLICATION_AUTHORIZED', note: 'Webhook Events\' inner `event.type`. Interactions carry an integer `type`, which is not read.' },
    // Interactions' snowflake; Webhook Events carry none, so they deduplicate on their signed content.
    delivery_id: { from: 'json', path: ['id'], signed: true },
    handshake_answer: 'discord_ping',
    verification: {
      primitive: 'ed25519',
      signatureHeader: 'x-signature-ed25519',
      signatureEncoding: 'hex',
      timestampHeader: 'x-signature-timestamp',
      toleranceSeconds: DISCORD_TOLERANCE_SECONDS,
    },
  },
  {
    id: 'shopify',
    name: 'Shopify',
    category: 'e-commerce',
    delivery_policy: waits(5, 4 * HOUR, '8 retries over 4 h with exponential backoff; 1 s to connect and 5 s in all.'),
    docs_url: 'https://shopify.dev/docs/apps/build/webhooks/verify-deliveries',
    secret_label: "The app's client secret (or the store's webhook signing key, Settings > Notifications > Webhooks)",
    handshake: false,
    event_type: { sources: [inHeader('x-shopify-topic')], example: 'orders/create' },
    // X-Shopify-Event-Id is the same for every retry and subscription of one event; X-Shopify-Webhook-Id is not.
    delivery_id: { from: 'header', name: 'x-shopify-event-id', signed: false },
    verification: bodyHmac('x-shopify-hmac-sha256', 'base64'),
  },
  {
    id: 'woocommerce',
    name: 'WooCommerce',
    category: 'e-commerce',
    delivery_policy: waits(60, 0, 'No retries; after more than 5 failures in a row (not 2xx-302) the webhook is disabled. Redirects are not followed.'),
    docs_url: 'https://woocommerce.github.io/woocommerce-rest-api-docs/#webhooks',
    secret_label: "The webhook's Secret",
    handshake: true,
    event_type: { sources: [inHeader('x-wc-webhook-topic')], example: 'order.created' },
    delivery_id: { from: 'header', name: 'x-wc-webhook-delivery-id', signed: false },
    handshake_answer: 'woocommerce_ping',
    verification: bodyHmac('x-wc-webhook-signature', 'base64'),
  },
  {
    id: 'bigcommerce',
    name: 'BigCommerce',
    category: 'e-commerce',
    delivery_policy: waits(null, BIGCOMMERCE_RETRY_DELAYS_SECONDS.reduce((a, b) => a + b), 'Not 2xx: 11 retries, 1 min to 24 h apart (about 48 h), then the hook is deactivated.'),
    docs_url: 'https://developer.bigcommerce.com/docs/integrations/webhooks#webhook-security',
    secret_label: 'The app\'s client secret, which signs the webhook-signature header; or a header you set in the hook\'s "headers" when you created it, as a header line Name: value (e.g. X-Hook-Token: a value of your choice)',
    handshake: false,
    event_type: { sources: [inBody('scope')], example: 'store/order/statusUpdated' },
    delivery_id: { from: 'json', path: ['hash'], signed: false },
    // BigCommerce signs as Standard Webhooks do, keyed by the app's client secret as text (its docs
    // hand the library the secret's base64, which the library decodes back). A hook also carries
    // the static headers given when it was created: a pasted header line (which names the header
    // as well as its value) checks that instead, as before BigCommerce signed.
    verification: {
      primitive: 'any_of',
      schemes: [{ ...svixStyle('webhook'), key: TEXT_KEY }, { primitive: 'static_token', location: 'named_header' }],
    },
    secret_fields: [{ from: 'header_named_by_secret' }],
  },
  {
    id: 'twilio',
    name: 'Twilio',
    category: 'telecom',
    delivery_policy: waits(15, null, 'Classic webhooks: 1 retry on a connection failure by default (the URL fragment #rc=0..5 sets more), 15 s in all. Event Streams: backoff for up to 4 h, 5 s time-out.'),
    docs_url: 'https://www.twilio.com/docs/usage/webhooks/webhooks-security',
    secret_label: "The account's Auth Token (Console, Account Info)",
    handshake: true,
    event_type: { sources: [inBody('type')], example: 'com.twilio.messaging.message.delivered', note: 'Event Streams\' CloudEvents `type`. Classic Messaging and Voice webhooks carry none (the URL called says the kind; the status is the form field `MessageStatus` or `CallStatus`): a trigger with an event filter ignores its deliveries.' },
    delivery_id: { from: 'header', name: 'i-twilio-idempotency-token', signed: false },
    verification: {
      primitive: 'hmac',
      algorithm: 'sha1',
      key: TEXT_KEY,
      content: { builder: 'twilio' },
      signature: { from: 'header', name: 'x-twilio-signature' },
      encoding: 'base64',
    },
  },
  {
    id: 'sendgrid',
    name: 'SendGrid Event Webhook',
    category: 'email',
    delivery_policy: waits(null, DAY, 'Non-2xx: retried at increasing intervals for up to 24 h after the event (10 s time-out per a secondary source).'),
    docs_url: 'https://www.twilio.com/docs/sendgrid/for-developers/tracking-events/getting-started-event-webhook-security-features',
    secret_label: 'The Event Webhook Verification Key (Signature Verification): a base64 public key starting MFkw',
    handshake: false,
    event_type: { sources: [], note: 'One POST carries a batch: a JSON array, each element an event whose type (`event`, `delivered`) a filter matches. With `split_batches: false` the POST is one event without a type, and a trigger with an event filter ignores it.' },
    // docs.sendgrid.com …/tracking-events: `sg_event_id` is unique for every event and the recommended dedupe key.
    batch: { list: [], type: [['event']], id: { paths: [['sg_event_id']], signed: true } },
    verification: {
      primitive: 'ecdsa_p256',
      signatureHeader: 'x-twilio-email-event-webhook-signature',
      signatureEncoding: 'base64',
      timestampHeader: 'x-twilio-email-event-webhook-timestamp',
      // SendGrid documents no window, nor whether a retry (it retries for up to 24 hours) is signed
      // anew: a day and an hour covers its retries, and a capture stops verifying after it.
      maxAgeSeconds: SENDGRID_MAX_AGE_SECONDS,
      toleranceSeconds: SENDGRID_FUTURE_SKEW_SECONDS,
    },
  },
  {
    id: 'mailgun',
    name: 'Mailgun',
    category: 'email',
    delivery_policy: waits(null, 8 * HOUR, '200 is done, 406 rejected; any other answer is retried over 8 h (5, 10, 15 min, 1, 2, 4 h).'),
    docs_url: 'https://documentation.mailgun.com/docs/mailgun/user-manual/tracking-messages/#securing-webhooks',
    secret_label: 'The HTTP webhook signing key',
    handshake: false,
    event_type: { sources: [inBody('event-data', 'event')], example: 'delivered', note: 'Mailgun does not sign `event-data`.' },
    delivery_id: { from: 'json', path: ['event-data', 'id'], signed: false },
    // Mailgun signs `signature.{timestamp, token}` only, with an account-wide key: a captured
    // signature verifies over any `event-data`, so each token is accepted once, as Mailgun asks.
    replay_key: { from: 'json', path: ['signature', 'token'] },
    single_use: 'replay_key',
    limits: 'Mailgun signs only signature.timestamp and signature.token, not event-data: the payload itself is unsigned. Each token is accepted once (kept for as long as its timestamp verifies), so a captured signature carries one payload at most; a flow that acts on an event should fetch it from Mailgun by its id.',
    verification: {
      primitive: 'hmac',
      algorithm: 'sha256',
      key: TEXT_KEY,
      content: [
        { part: 'json', path: ['signature', 'timestamp'] },
        { part: 'json', path: ['signature', 'token'] },
      ],
      signature: { from: 'json', path: ['signature', 'signature'] },
      encoding: 'hex',
      timestamp: { source: { from: 'json', path: ['signature', 'timestamp'] }, format: 'unix_seconds', tolerance_seconds: MAILGUN_TOLERANCE_SECONDS },
    },
  },
  {
    id: 'postmark',
    name: 'Postmark',
    category: 'email',
    delivery_policy: waits(null, null, 'Inbound: a non-200 is retried 10 times over about 10.5 h (403 stops them). Bounce, delivery and other outbound hooks: undocumented.'),
    docs_url: 'https://postmarkapp.com/developer/webhooks/webhooks-overview#protecting-your-webhook',
    secret_label: 'The username:password you put in the webhook URL (Basic auth)',
    handshake: false,
    event_type: { sources: [inBody('RecordType')], example: 'Delivery', note: 'Inbound webhooks carry none.' },
    // HTTP Basic in Authorization, which the client derives from https://user:password@… in the webhook URL.
    verification: { primitive: 'basic' },
    secret_fields: [{ from: 'header', name: 'authorization' }],
  },
  {
    id: 'resend',
    name: 'Resend',
    category: 'email',
    delivery_policy: SVIX_POLICY,
    docs_url: 'https://resend.com/docs/dashboard/webhooks/verify-webhooks-requests',
    secret_label: "The webhook's Signing Secret (whsec_…)",
    handshake: false,
    event_type: { sources: [inBody('type')], example: 'email.sent' },
    delivery_id: { from: 'header', name: 'svix-id', signed: true },
    verification: svixStyle('svix'),
  },
  {
    id: 'clerk',
    name: 'Clerk',
    category: 'identity',
    delivery_policy: SVIX_POLICY,
    docs_url: 'https://clerk.com/docs/webhooks/sync-data#verify-webhook-signatures',
    secret_label: "The endpoint's Signing Secret (whsec_…)",
    handshake: false,
    event_type: { sources: [inBody('type')], example: 'user.created' },
    delivery_id: { from: 'header', name: 'svix-id', signed: true },
    verification: svixStyle('svix'),
  },
  {
    id: 'svix',
    name: 'Svix',
    category: 'cloud',
    delivery_policy: SVIX_POLICY,
    docs_url: SVIX_DOCS,
    secret_label: "The endpoint's Signing Secret (whsec_…)",
    handshake: false,
    event_type: { sources: [inBody('type')], example: 'user.created', note: 'The sending application\'s own; `type` by convention.' },
    // A white-labelled Svix sender uses `webhook-*` headers: that is the standard_webhooks row.
    delivery_id: { from: 'header', name: 'svix-id', signed: true },
    verification: svixStyle('svix'),
  },
  {
    id: 'paddle',
    name: 'Paddle Billing',
    category: 'payments',
    delivery_policy: waits(5, 3 * DAY, 'Not 200 within 5 s: up to 60 retries over 3 days (a sandbox: 3 over 15 min); replay by API afterwards.'),
    docs_url: 'https://developer.paddle.com/webhooks/signature-verification',
    secret_label: "The notification destination's secret key (pdl_ntfset_…)",
    handshake: false,
    event_type: { sources: [inBody('event_type')], example: 'transaction.completed' },
    delivery_id: { from: 'json', path: ['event_id'], signed: true },
    verification: {
      primitive: 'hmac',
      algorithm: 'sha256',
      key: TEXT_KEY,
      content: [{ part: 'timestamp' }, { part: 'literal', text: ':' }, { part: 'body' }],
      signature: { from: 'header', name: 'paddle-signature', list: { separator: ';', assign: '=', key: 'h1' } },
      encoding: 'hex',
      timestamp: { source: { from: 'signature_list', key: 'ts' }, format: 'unix_seconds', tolerance_seconds: PADDLE_TOLERANCE_SECONDS },
    },
  },
  {
    id: 'lemon_squeezy',
    name: 'Lemon Squeezy',
    category: 'payments',
    delivery_policy: waits(null, 155, 'Up to 3 retries with exponential backoff (about 5 s, 25 s, 125 s).', UNCONFIRMED),
    docs_url: 'https://docs.lemonsqueezy.com/help/webhooks/signing-requests',
    secret_label: "The webhook's signing secret",
    handshake: false,
    event_type: { sources: [inBody('meta', 'event_name'), inHeader('x-event-name')], example: 'order_created' },
    verification: bodyHmac('x-signature', 'hex'),
  },
  {
    id: 'paypal',
    name: 'PayPal',
    category: 'payments',
    delivery_policy: waits(null, 3 * DAY, 'Non-2xx: up to 25 times over 3 days.', UNCONFIRMED),
    docs_url: 'https://developer.paypal.com/api/rest/webhooks/rest/#link-selfverificationmethod',
    secret_label: 'The Webhook ID (My Apps & Credentials, your app, Webhooks), letters and digits such as 1JE4291016473214C',
    handshake: false,
    event_type: { sources: [inBody('event_type')], example: 'PAYMENT.CAPTURE.COMPLETED' },
    // PayPal binds the body by a CRC32 only, which is no MAC: its id is shown, never trusted.
    delivery_id: { from: 'json', path: ['id'], signed: false },
    // PayPal signs `transmission id|time|webhook id|CRC32(body)`: a CRC32 is no MAC, so with one
    // captured delivery another body of the same CRC verifies too. Each transmission is accepted once.
    replay_key: { from: 'header', name: 'paypal-transmission-id' },
    single_use: 'replay_key',
    limits: 'PayPal binds the body only by its CRC32, which anyone can match with another body: each paypal-transmission-id is accepted once (kept for as long as its transmission time verifies), so a delivery captured after it reached the trigger cannot carry another body of the same CRC.',
    verification: {
      primitive: 'x509_rsa',
      message: 'paypal',
      // Certificates only from PayPal's API hosts (live and sandbox, old and `api-m` names).
      certificateUrl: { hosts: ['api.paypal.com', 'api-m.paypal.com', 'api.sandbox.paypal.com', 'api-m.sandbox.paypal.com'], pathPrefix: '/v1/notifications/certs/' },
      toleranceSeconds: PAYPAL_TOLERANCE_SECONDS,
    },
  },
  {
    id: 'square',
    name: 'Square',
    category: 'payments',
    delivery_policy: waits(10, 72 * HOUR, 'Not 2xx within 10 s (3xx too): retried for up to 72 h, after 1, 2, 4 … 32 min, then hourly.'),
    docs_url: 'https://developer.squareup.com/docs/webhooks/step3validate',
    secret_label: "The subscription's Signature key",
    handshake: false,
    event_type: { sources: [inBody('type')], example: 'payment.updated' },
    delivery_id: { from: 'json', path: ['event_id'], signed: true },
    verification: {
      primitive: 'hmac',
      algorithm: 'sha256',
      key: TEXT_KEY,
      // The notification URL as configured in Square, which is the URL Square called.
      content: [{ part: 'url' }, { part: 'body' }],
      signature: { from: 'header', name: 'x-square-hmacsha256-signature' },
      encoding: 'base64',
    },
  },
  {
    id: 'braintree',
    name: 'Braintree',
    category: 'payments',
    delivery_policy: waits(null, null, 'Undocumented.'),
    docs_url: 'https://developer.paypal.com/braintree/docs/guides/webhooks/parse',
    secret_label: 'The Private Key (API Keys)',
    handshake: false,
    event_type: { sources: [], note: 'The type is the `<kind>` of the base64 XML in the form field `bt_payload` (`subscription_charged_successfully`), which is not decoded yet; a trigger with an event filter ignores its deliveries.' },
    verification: {
      primitive: 'hmac',
      algorithm: 'sha1',
      key: { format: 'sha1_of_text' }, // the braintree SDK's Digest.hmacSha1 keys with SHA1(privateKey)
      content: [{ part: 'form', name: 'bt_payload' }],
      // `publicKey|hexsig` pairs joined by `&`: any pair signed with this private key proves it.
      signature: { from: 'form', name: 'bt_signature', list: { separator: '&', assign: '|' } },
      encoding: 'hex',
    },
  },
  {
    id: 'adyen',
    name: 'Adyen',
    category: 'payments',
    delivery_policy: waits(10, null, 'Not accepted: 3 quick retries (about 9, 18, 27 s), then a retry queue per endpoint.', UNCONFIRMED),
    docs_url: 'https://docs.adyen.com/development-resources/webhooks/secure-webhooks/verify-hmac-signatures',
    secret_label: "The webhook's HMAC key (hex)",
    handshake: true,
    event_type: { sources: [], note: 'One POST carries a batch: `notificationItems[]`, each item an event whose type (`NotificationRequestItem.eventCode`, `AUTHORISATION`) a filter matches. With `split_batches: false` the POST is one event without a type, and a trigger with an event filter ignores it.' },
    // Adyen identifies a notification by its pspReference and eventCode, both in the signed content.
    batch: {
      list: ['notificationItems'],
      type: [['NotificationRequestItem', 'eventCode']],
      id: { paths: [['NotificationRequestItem', 'pspReference'], ['NotificationRequestItem', 'eventCode']], signed: true },
      note: 'The id is `pspReference:eventCode`, the pair Adyen says identifies a notification.',
    },
    verification: {
      primitive: 'hmac',
      algorithm: 'sha256',
      key: { format: 'hex' },
      items: { path: ['notificationItems'] },
      // `pspReference:originalReference:merchantAccountCode:merchantReference:value:currency:eventCode:success`,
      // absent references empty, as @adyen/api-library's HmacValidator joins them.
      content: [
        { part: 'json', path: ['NotificationRequestItem', 'pspReference'] },
        { part: 'literal', text: ':' },
        { part: 'json', path: ['NotificationRequestItem', 'originalReference'], optional: true },
        { part: 'literal', text: ':' },
        { part: 'json', path: ['NotificationRequestItem', 'merchantAccountCode'] },
        { part: 'literal', text: ':' },
        { part: 'json', path: ['NotificationRequestItem', 'merchantReference'], optional: true },
        { part: 'literal', text: ':' },
        { part: 'json', path: ['NotificationRequestItem', 'amount', 'value'] },
        { part: 'literal', text: ':' },
        { part: 'json', path: ['NotificationRequestItem', 'amount', 'currency'] },
        { part: 'literal', text: ':' },
        { part: 'json', path: ['NotificationRequestItem', 'eventCode'] },
        { part: 'literal', text: ':' },
        { part: 'json', path: ['NotificationRequestItem', 'success'] },
      ],
      signature: { from: 'json', path: ['NotificationRequestItem', 'additionalData', 'hmacSignature'] },
      encoding: 'base64',
    },
  },
  {
    id: 'mollie',
    name: 'Mollie (next-gen webhooks)',
    category: 'payments',
    delivery_policy: waits(null, 26 * HOUR, 'About 10 attempts over about 26 h.', UNCONFIRMED),
    docs_url: 'https://docs.mollie.com/reference/webhooks-best-practices',
    secret_label: "The next-gen webhook's shared secret (classic webhooks are unsigned and not supported)",
    handshake: false,
    event_type: { sources: [], note: 'Classic webhooks carry only the resource id, and no type is documented for next-gen ones; a trigger with an event filter ignores its deliveries.' },
    // Classic Mollie webhooks carry only `id=tr_…`, unsigned: the receiver would have to fetch the
    // payment with the account's API key. Only the signed next-gen webhooks are verified.
    verification: bodyHmac('x-mollie-signature', 'hex'),
  },
  {
    id: 'razorpay',
    name: 'Razorpay',
    category: 'payments',
    delivery_policy: waits(5, DAY, 'Any non-2xx: exponential backoff for 24 h from the event, then the webhook is disabled.', UNCONFIRMED),
    docs_url: 'https://razorpay.com/docs/webhooks/validate-test/',
    secret_label: 'The Webhook Secret',
    handshake: false,
    event_type: { sources: [inBody('event')], example: 'payment.captured' },
    delivery_id: { from: 'header', name: 'x-razorpay-event-id', signed: false },
    verification: bodyHmac('x-razorpay-signature', 'hex'),
  },
  {
    id: 'coinbase_commerce',
    name: 'Coinbase Commerce',
    category: 'payments',
    delivery_policy: waits(null, 3 * DAY, 'Exponential backoff for up to 3 days.', UNCONFIRMED),
    docs_url: 'https://docs.cdp.coinbase.com/commerce/docs/webhooks-security',
    secret_label: 'The Shared Secret (Settings, Webhook subscriptions)',
    handshake: false,
    event_type: { sources: [inBody('event', 'type')], example: 'charge:confirmed' },
    delivery_id: { from: 'json', path: ['event', 'id'], signed: true },
    verification: bodyHmac('x-cc-webhook-signature', 'hex'),
  },
  {
    id: 'plaid',
    name: 'Plaid',
    category: 'payments',
    delivery_policy: waits(null, null, 'Undocumented.'),
    docs_url: 'https://plaid.com/docs/api/webhooks/webhook-verification/',
    secret_label: '— (not supported)',
    handshake: false,
    event_type: { sources: [inBody('webhook_code')], example: 'SYNC_UPDATES_AVAILABLE', note: '`webhook_type` (`TRANSACTIONS`) beside it says the product.' },
    verification: {
      primitive: 'unsupported',
      reason:
        "Plaid's verification key is fetched by key id from /webhook_verification_key/get, an API call that needs the account's client_id and secret; a trigger holds one signing secret and no API credentials.",
    },
  },
  {
    id: 'zoom',
    name: 'Zoom',
    category: 'productivity',
    delivery_policy: waits(3, 85 * MINUTE, 'Not 200 or 204 within 3 s: 3 retries, after 5, 20 and 60 min; then none for that event.'),
    docs_url: 'https://developers.zoom.us/docs/api/webhooks/#verify-webhook-events',
    secret_label: "The app's Secret Token (Features, Access)",
    handshake: true,
    event_type: { sources: [inBody('event')], example: 'meeting.started' },
    handshake_answer: 'zoom_url_validation',
    verification: {
      primitive: 'hmac',
      algorithm: 'sha256',
      key: TEXT_KEY,
      content: [{ part: 'literal', text: 'v0:' }, { part: 'timestamp' }, { part: 'literal', text: ':' }, { part: 'body' }],
      signature: { from: 'header', name: 'x-zm-signature', prefix: 'v0=' },
      encoding: 'hex',
      timestamp: { source: { from: 'header', name: 'x-zm-request-timestamp' }, format: 'unix_seconds', tolerance_seconds: ZOOM_TOLERANCE_SECONDS },
    },
  },
  {
    id: 'twitch',
    name: 'Twitch EventSub',
    category: 'messaging',
    delivery_policy: waits(null, null, 'At least once; the number of retries is undocumented, and failing too often revokes the subscription. The time-out is "a few seconds".'),
    docs_url: 'https://dev.twitch.tv/docs/eventsub/handling-webhook-events/#verifying-the-event-message',
    secret_label: 'The secret you gave when creating the EventSub subscription',
    handshake: true,
    event_type: { sources: [inBody('subscription', 'type'), inHeader('twitch-eventsub-subscription-type')], example: 'channel.follow', note: 'The signed body\'s `subscription.type`, which the unsigned `Twitch-Eventsub-Subscription-Type` header repeats.' },
    handshake_answer: 'twitch_callback_verification',
    // The message-type header is not signed: a notification must carry its `event`, so a captured
    // verification (or revocation) replayed as a notification never reaches the flow.
    accepts: { requires: [{ path: ['event'], when_header: 'twitch-eventsub-message-type', equals: 'notification' }] },
    delivery_id: { from: 'header', name: 'twitch-eventsub-message-id', signed: true },
    verification: {
      primitive: 'hmac',
      algorithm: 'sha256',
      key: TEXT_KEY,
      content: [{ part: 'header', name: 'twitch-eventsub-message-id' }, { part: 'timestamp' }, { part: 'body' }],
      signature: { from: 'header', name: 'twitch-eventsub-message-signature', prefix: 'sha256=' },
      encoding: 'hex',
      timestamp: { source: { from: 'header', name: 'twitch-eventsub-message-timestamp' }, format: 'rfc3339', tolerance_seconds: TWITCH_TOLERANCE_SECONDS },
    },
  },
  {
    id: 'microsoft_graph',
    name: 'Microsoft Graph',
    category: 'productivity',
    delivery_policy: waits(3, 4 * HOUR, 'No 2xx within 3 s: exponential backoff for up to 4 h; an endpoint often slower than 10 s is delayed, then dropped.'),
    docs_url: 'https://learn.microsoft.com/en-us/graph/change-notifications-delivery-webhooks#processing-the-change-notification',
    secret_label: 'The clientState you set on the subscription',
    handshake: true,
    event_type: { sources: [], note: 'One POST carries a batch: `value[]`, each notification an event whose type (`changeType`, `created`; `lifecycleEvent` for lifecycle notifications) a filter matches. With `split_batches: false` the POST is one event without a type, and a trigger with an event filter ignores it.' },
    batch: { list: ['value'], type: [['changeType'], ['lifecycleEvent']], note: 'Notifications carry no id: a deduplicating trigger keys on each one\'s SHA-256 (its `clientState` redacted).' },
    handshake_answer: 'microsoft_graph_validation',
    // No signature: each notification of `value` carries the subscription's clientState.
    verification: { primitive: 'static_token', location: 'body_items', array: 'value', field: 'clientState' },
    secret_fields: [{ from: 'json', path: ['value', '*', 'clientState'] }],
  },
  {
    id: 'google_pubsub',
    name: 'Google Pub/Sub push',
    category: 'cloud',
    delivery_policy: waits(10, 7 * DAY, 'Not 102, 200, 201, 202 or 204 within the ack deadline (default 10 s): redelivered with backoff for the retention period (7 days by default), or to a dead-letter topic.', UNCONFIRMED),
    docs_url: 'https://cloud.google.com/pubsub/docs/authenticate-push-subscriptions',
    secret_label: "The push subscription's audience, a space, and its service account email (https://… push@my-project.iam.gserviceaccount.com)",
    handshake: false,
    event_type: { sources: [], note: 'The push envelope carries none: the publisher\'s `message.attributes` (Cloud Storage\'s `eventType`) reach the flow but no filter; a trigger with an event filter ignores its deliveries.' },
    delivery_id: { from: 'json', path: ['message', 'messageId'], signed: false },
    verification: {
      primitive: 'jwt',
      // Any Google Cloud project can push to any URL: the pasted audience and email say which is ours.
      key: 'jwks',
      jwksUrl: 'https://www.googleapis.com/oauth2/v3/certs',
      header: 'authorization',
      scheme: 'Bearer',
      algorithms: ['RS256'],
      issuers: ['accounts.google.com', 'https://accounts.google.com'],
      requiredClaims: ['exp', 'iat'],
      clockToleranceSeconds: GOOGLE_CLOCK_SKEW_SECONDS,
      // An `iat` in the future (past the skew) is refused, as google-auth-library does ("used too early").
      maxTokenAgeSeconds: GOOGLE_ID_TOKEN_MAX_AGE_SECONDS,
    },
    // The bearer token is a credential of Google's for this audience: no flow needs it.
    secret_fields: [{ from: 'header', name: 'authorization' }],
  },
  {
    id: 'aws_sns',
    name: 'Amazon SNS',
    category: 'cloud',
    delivery_policy: waits(null, MINUTE, 'The default HTTP/S policy: 3 retries 20 s apart on a server error; a DeliveryPolicy may retry for up to 3600 s.'),
    docs_url: 'https://docs.aws.amazon.com/sns/latest/dg/sns-verify-signature-of-message.html',
    secret_label: "The topic's ARN (arn:aws:sns:<region>:<account>:<topic>); set the topic's SignatureVersion attribute to 2 (SHA256), the only version accepted",
    handshake: true,
    event_type: { sources: [], note: 'Only the envelope\'s kind (`Type`: `Notification`); the publisher\'s own type is in `Message` or `MessageAttributes`, which the flow reads; a trigger with an event filter ignores its deliveries.' },
    handshake_answer: 'aws_sns_subscription',
    // SNS posts its JSON as text/plain; charset=UTF-8.
    body_as: 'json',
    delivery_id: { from: 'json', path: ['MessageId'], signed: true },
    signed_fields: { by: 'Type', fields: SNS_SIGNED_FIELDS },
    verification: {
      primitive: 'x509_rsa',
      message: 'aws_sns',
      // AWS's regional hosts, China's too, and a `.pem` path. SNS documents no freshness window, and a
      // retry resends the message as first signed, so its Timestamp is not checked.
      certificateUrl: { hosts: ['sns.{region}.amazonaws.com', 'sns.{region}.amazonaws.com.cn'], pathSuffix: '.pem' },
      signerCommonNames: ['sns.amazonaws.com', 'sns.amazonaws.com.cn'],
      // SNS serves only its leaf; its issuer is an Amazon intermediate (crt.r2m01.amazontrust.com
      // and the like, under Amazon Root CA 1) or, for older certificates, a DigiCert one.
      issuerHosts: ['crt.*.amazontrust.com', 'cacerts.digicert.com'],
    },
  },
  {
    id: 'calendly',
    name: 'Calendly',
    category: 'productivity',
    delivery_policy: waits(null, DAY, '3xx, 4xx, 5xx or a time-out: exponential backoff for 24 h, then the subscription is disabled.'),
    docs_url: 'https://developer.calendly.com/api-docs/4c305798a61d3-webhook-signatures',
    secret_label: "The webhook subscription's signing key",
    handshake: false,
    event_type: { sources: [inBody('event')], example: 'invitee.created' },
    verification: {
      primitive: 'hmac',
      algorithm: 'sha256',
      key: TEXT_KEY,
      content: [{ part: 'timestamp' }, { part: 'literal', text: '.' }, { part: 'body' }],
      signature: { from: 'header', name: 'calendly-webhook-signature', list: { separator: ',', assign: '=', key: 'v1' } },
      encoding: 'hex',
      timestamp: { source: { from: 'signature_list', key: 't' }, format: 'unix_seconds', tolerance_seconds: CALENDLY_TOLERANCE_SECONDS },
    },
  },
  {
    id: 'typeform',
    name: 'Typeform',
    category: 'productivity',
    delivery_policy: waits(30, 10 * HOUR, '410 or 404 disables the webhook; 429, 408, 503 and 423 are retried every 2-3 min for 10 h; other failures 5 times over about 3.6 h.'),
    docs_url: 'https://www.typeform.com/developers/webhooks/secure-your-webhooks/',
    secret_label: "The webhook's secret",
    handshake: false,
    event_type: { sources: [inBody('event_type')], example: 'form_response' },
    delivery_id: { from: 'json', path: ['event_id'], signed: true },
    verification: bodyHmac('typeform-signature', 'base64', 'sha256='),
  },
  {
    id: 'hubspot',
    name: 'HubSpot',
    category: 'productivity',
    delivery_policy: waits(5, DAY, 'Connection failures, time-outs, 5xx and 429 are retried, up to 10 times over 24 h; 400, 401, 403, 404 and 405 are not.', UNCONFIRMED),
    docs_url: 'https://developers.hubspot.com/docs/api/webhooks/validating-requests#validate-the-v3-request-signature',
    secret_label: "The app's Client secret",
    handshake: false,
    event_type: { sources: [], note: 'One POST carries a batch: a JSON array, each element an event whose type (`subscriptionType`, `contact.creation`) a filter matches. With `split_batches: false` the POST is one event without a type, and a trigger with an event filter ignores it.' },
    batch: { list: [], type: [['subscriptionType']], id: { paths: [['eventId']], signed: true }, note: '`eventId` is an integer, read as its decimal text.' },
    verification: {
      primitive: 'hmac',
      algorithm: 'sha256',
      key: TEXT_KEY,
      content: [{ part: 'method' }, { part: 'url' }, { part: 'body' }, { part: 'timestamp' }],
      signature: { from: 'header', name: 'x-hubspot-signature-v3' },
      encoding: 'base64',
      timestamp: { source: { from: 'header', name: 'x-hubspot-request-timestamp' }, format: 'unix_milliseconds', tolerance_seconds: HUBSPOT_TOLERANCE_SECONDS },
    },
  },
  {
    id: 'intercom',
    name: 'Intercom',
    category: 'messaging',
    delivery_policy: waits(5, null, 'The number of retries is undocumented; over 1000 errors in 15 min pause deliveries for 15 min, and errors for over 7 days suspend the subscription.', UNCONFIRMED),
    docs_url: 'https://developers.intercom.com/docs/references/webhooks/webhook-models#signed-notifications',
    secret_label: "The app's client_secret (Basic Information)",
    handshake: true,
    event_type: { sources: [inBody('topic')], example: 'conversation.user.created', note: 'Its setup `ping` is a topic too.' },
    delivery_id: { from: 'json', path: ['id'], signed: true },
    verification: bodyHmac('x-hub-signature', 'hex', 'sha1=', 'sha1'),
  },
  {
    id: 'linear',
    name: 'Linear',
    category: 'productivity',
    delivery_policy: waits(5, 7 * HOUR + MINUTE, 'Unavailable, over 5 s or not 200: at most 3 retries, after 1 min, 1 h and 6 h.'),
    docs_url: 'https://linear.app/developers/webhooks#securing-webhooks',
    secret_label: "The webhook's signing secret",
    handshake: false,
    event_type: { sources: [inBody('type')], example: 'Issue', note: '`action` (`create`) beside it says what happened.' },
    delivery_id: { from: 'header', name: 'linear-delivery', signed: false },
    verification: {
      ...bodyHmac('linear-signature', 'hex'),
      // Only the timestamp inside the signed body counts (the linear-timestamp header is not signed).
      timestamp: { source: { from: 'json', path: ['webhookTimestamp'] }, format: 'unix_milliseconds', tolerance_seconds: LINEAR_TOLERANCE_SECONDS },
    },
  },
  {
    id: 'jira',
    name: 'Jira (admin webhooks)',
    category: 'productivity',
    delivery_policy: waits(null, null, 'Retried on 408, 409, 425, 429, 5xx and connection failures or time-outs (up to 5 times); a delivery can be up to 30 min late.', UNCONFIRMED),
    docs_url: 'https://developer.atlassian.com/cloud/jira/platform/webhooks/#secure-admin-webhooks',
    secret_label: "The admin webhook's secret",
    handshake: false,
    event_type: { sources: [inBody('webhookEvent')], example: 'jira:issue_updated' },
    delivery_id: { from: 'header', name: 'x-atlassian-webhook-identifier', signed: false },
    // App (Connect/Forge) webhooks carry a JWT instead: configure those as an app, not here.
    verification: bodyHmac('x-hub-signature', 'hex', 'sha256='),
  },
  {
    id: 'asana',
    name: 'Asana',
    category: 'productivity',
    delivery_policy: waits(10, DAY, 'No success within 10 s: resent for up to 24 h, then given up; no replay.'),
    docs_url: 'https://developers.asana.com/docs/webhooks-guide#security',
    secret_label: 'The X-Hook-Secret Asana sent in the handshake',
    handshake: true,
    event_type: { sources: [], note: 'One POST carries a batch: `events[]`, each an event whose type (`action`, `changed`) a filter matches; its `resource.resource_type` reaches the flow. With `split_batches: false` the POST is one event without a type, and a trigger with an event filter ignores it.' },
    batch: { list: ['events'], type: [['action']], note: 'Events carry no id: a deduplicating trigger keys on each one\'s SHA-256.' },
    handshake_answer: 'asana_hook_secret',
    // The secret arrives in the handshake: a trigger may be created without one.
    secret_from_handshake: true,
    secret_fields: [{ from: 'header', name: 'x-hook-secret' }],
    verification: bodyHmac('x-hook-signature', 'hex'),
  },
  {
    id: 'notion',
    name: 'Notion',
    category: 'productivity',
    delivery_policy: waits(null, DAY, 'Up to 8 attempts within about 24 h; no replay.', UNCONFIRMED),
    docs_url: 'https://developers.notion.com/reference/webhooks#step-3-validating-event-payloads-recommended',
    secret_label: 'The verification_token Notion sent when the subscription was created',
    handshake: true,
    event_type: { sources: [inBody('type')], example: 'page.created' },
    delivery_id: { from: 'json', path: ['id'], signed: true },
    handshake_answer: 'notion_verification',
    // The secret arrives in the handshake: a trigger may be created without one.
    secret_from_handshake: true,
    secret_fields: [{ from: 'json', path: ['verification_token'] }],
    verification: bodyHmac('x-notion-signature', 'hex', 'sha256='),
  },
  {
    id: 'airtable',
    name: 'Airtable',
    category: 'productivity',
    delivery_policy: waits(null, null, 'Undocumented.'),
    docs_url: 'https://airtable.com/developers/web/api/webhooks-overview#webhook-notification-delivery',
    secret_label: 'The macSecretBase64 returned when the webhook was created',
    handshake: false,
    event_type: { sources: [], note: 'A notification only says that the base changed (the payloads are fetched through Airtable\'s API); a trigger with an event filter ignores its deliveries.' },
    verification: { ...bodyHmac('x-airtable-content-mac', 'hex', 'hmac-sha256='), key: { format: 'base64' } },
  },
  {
    id: 'vercel',
    name: 'Vercel',
    category: 'cloud',
    delivery_policy: waits(null, null, 'Undocumented.'),
    docs_url: 'https://vercel.com/docs/webhooks/webhooks-api#securing-webhooks',
    secret_label: "The webhook's secret (shown once, when it is created)",
    handshake: false,
    event_type: { sources: [inBody('type')], example: 'deployment.created' },
    delivery_id: { from: 'json', path: ['id'], signed: true },
    verification: bodyHmac('x-vercel-signature', 'hex', undefined, 'sha1'),
  },
  {
    id: 'netlify',
    name: 'Netlify',
    category: 'cloud',
    delivery_policy: waits(null, null, 'Undocumented.'),
    docs_url: 'https://docs.netlify.com/site-deploys/deploy-notifications/#payload-signature',
    secret_label: "The notification's JWS secret token",
    handshake: false,
    event_type: { sources: [], note: 'The deploy object carries no type: the event is the one chosen for the notification\'s URL; a trigger with an event filter ignores its deliveries.' },
    // Netlify's token carries no time, so there is none to check; its `sha256` claim binds the body.
    verification: { primitive: 'jwt', key: 'secret', header: 'x-webhook-signature', algorithms: ['HS256'], issuers: ['netlify'], bodySha256Claim: 'sha256' },
  },
  {
    id: 'sentry',
    name: 'Sentry',
    category: 'monitoring',
    delivery_policy: waits(null, null, 'Undocumented (believed never retried).'),
    docs_url: 'https://docs.sentry.io/organization/integrations/integration-platform/webhooks/#sentry-hook-signature',
    secret_label: "The integration's Client Secret",
    handshake: false,
    event_type: { sources: [inHeader('sentry-hook-resource')], example: 'issue', note: 'The body\'s `action` (`created`) beside it says what happened.' },
    delivery_id: { from: 'header', name: 'request-id', signed: false },
    // Sentry-Hook-Timestamp is sent but not signed, so it proves nothing and is not checked.
    verification: bodyHmac('sentry-hook-signature', 'hex'),
  },
  {
    id: 'pagerduty',
    name: 'PagerDuty',
    category: 'monitoring',
    delivery_policy: waits(null, null, 'At least once, with exponential backoff; count and window undocumented.'),
    docs_url: 'https://developer.pagerduty.com/docs/webhooks-overview#verifying-signatures',
    secret_label: "The webhook subscription's secret",
    handshake: false,
    event_type: { sources: [inBody('event', 'event_type')], example: 'incident.triggered', note: 'V3 webhooks; legacy v1/v2 batches (`messages[]`) are not split.' },
    delivery_id: { from: 'json', path: ['event', 'id'], signed: true },
    verification: {
      primitive: 'hmac',
      algorithm: 'sha256',
      key: TEXT_KEY,
      content: BODY,
      // `v1=…,v1=…`: one signature per active secret while PagerDuty rotates.
      signature: { from: 'header', name: 'x-pagerduty-signature', list: { separator: ',', assign: '=', key: 'v1' } },
      encoding: 'hex',
    },
  },
  {
    id: 'zendesk',
    name: 'Zendesk',
    category: 'productivity',
    delivery_policy: waits(10, null, 'Only some answers are retried (409, 429 and 503 with a short Retry-After, time-outs); a circuit breaker pauses a webhook that fails often.', UNCONFIRMED),
    docs_url: 'https://developer.zendesk.com/documentation/webhooks/verifying/',
    secret_label: "The webhook's signing secret",
    handshake: false,
    event_type: { sources: [inBody('type')], example: 'zen:event-type:user.created', note: 'Event-subscription webhooks; trigger and automation webhooks send the admin\'s own template.' },
    delivery_id: { from: 'json', path: ['id'], signed: true },
    verification: {
      primitive: 'hmac',
      algorithm: 'sha256',
      key: TEXT_KEY,
      content: [{ part: 'timestamp' }, { part: 'body' }],
      signature: { from: 'header', name: 'x-zendesk-webhook-signature' },
      encoding: 'base64',
      timestamp: { source: { from: 'header', name: 'x-zendesk-webhook-signature-timestamp' }, format: 'rfc3339', tolerance_seconds: ZENDESK_TOLERANCE_SECONDS },
    },
  },
  {
    id: 'docusign',
    name: 'DocuSign Connect',
    category: 'productivity',
    delivery_policy: waits(null, null, 'Undocumented (Connect has a "require acknowledgement" retry mode).'),
    docs_url: 'https://developers.docusign.com/platform/webhooks/connect/validate/',
    secret_label: 'The Connect HMAC key',
    handshake: false,
    event_type: { sources: [inBody('event')], example: 'envelope-completed', note: 'Connect\'s JSON format.' },
    verification: {
      primitive: 'hmac',
      algorithm: 'sha256',
      key: TEXT_KEY,
      content: BODY,
      // X-DocuSign-Signature-1, -2, …: one per active key, so any may be the one this secret made.
      signature: { from: 'numbered_headers', name_prefix: 'x-docusign-signature-' },
      encoding: 'base64',
    },
  },
  {
    id: 'okta',
    name: 'Okta event hooks',
    category: 'identity',
    delivery_policy: waits(3, null, 'At most one retry: 5xx and time-outs are retried, 4xx not.'),
    docs_url: 'https://developer.okta.com/docs/concepts/event-hooks/#one-time-verification-request',
    secret_label: "The event hook's authentication field and secret as a header line, Name: value (e.g. Authorization: my-okta-secret)",
    handshake: true,
    event_type: { sources: [], note: 'One POST carries a batch: `data.events[]`, each an event whose type (`eventType`, `user.session.start`) a filter matches; the envelope\'s `eventType` is always `com.okta.event_hook`. With `split_batches: false` the POST is one event without a type, and a trigger with an event filter ignores it.' },
    // Okta signs nothing (a static header): each event's `uuid` is shown, and deduplication keys on the event's SHA-256.
    batch: { list: ['data', 'events'], type: [['eventType']], id: { paths: [['uuid']], signed: false } },
    delivery_id: { from: 'json', path: ['eventId'], signed: false },
    handshake_answer: 'okta_verification',
    // The admin chooses the header (usually Authorization), so the pasted line names it.
    verification: { primitive: 'static_token', location: 'named_header' },
    secret_fields: [{ from: 'header_named_by_secret' }],
  },
  {
    id: 'auth0',
    name: 'Auth0 log streams',
    category: 'identity',
    delivery_policy: waits(null, null, 'Undocumented.'),
    docs_url: 'https://auth0.com/docs/customize/log-streams/custom-log-streams',
    secret_label: "The log stream's Authorization Token, exactly as entered (with Bearer if you typed it)",
    handshake: false,
    event_type: { sources: [], note: 'One POST carries a batch: log entries, each one\'s type in `data.type` (a log code such as `s`). Batches are not split into events yet, so no type is read; a trigger with an event filter ignores its deliveries.' },
    // Sent as the whole Authorization value, exactly as entered, so no scheme is taken off.
    verification: { primitive: 'static_token', location: 'header', header: 'authorization' },
    secret_fields: [{ from: 'header', name: 'authorization' }],
  },
  {
    id: 'meta',
    name: 'Meta (WhatsApp, Messenger, Instagram)',
    category: 'messaging',
    delivery_policy: waits(null, 36 * HOUR, 'Retried at once, then less and less often for up to 36 h (WhatsApp: 7 days).', UNCONFIRMED),
    docs_url: 'https://developers.facebook.com/docs/graph-api/webhooks/getting-started#validate-payloads',
    secret_label: "The app's App Secret (App settings, Basic)",
    handshake: true,
    event_type: { sources: [inBody('object')], example: 'whatsapp_business_account', note: 'For a POST not split into its changes (`split_batches: false`, or Messenger\'s `entry[].messaging[]`, which is not split).' },
    // Decided: the event is a change (`{field, value}`), Meta's unit of what happened, with its
    // entry's `id` (the account or page) and `time` under `entry`. The envelope's `object` is not
    // copied on: the field already names the product (`messages` is WhatsApp's, `feed` a Page's).
    batch: {
      list: ['entry'],
      nested: { list: ['changes'], parent: { as: 'entry', fields: ['id', 'time'] } },
      type: [['field']],
      note: 'Each change of each entry is an event, `{field, value, entry: {id, time}}`; entries with `messaging[]` (Messenger) instead are not split. Changes carry no id: a deduplicating trigger keys on each one\'s SHA-256.',
    },
    handshake_answer: 'meta_subscribe',
    // The token the user typed into Meta's dashboard; the app secret is never one.
    needs_verify_token: true,
    secret_fields: [{ from: 'query', name: 'hub.verify_token' }],
    verification: bodyHmac('x-hub-signature-256', 'hex', 'sha256='),
  },
  {
    id: 'telegram',
    name: 'Telegram bots',
    category: 'messaging',
    delivery_policy: waits(null, null, 'The same Update is resent until a 2xx, up to "a reasonable amount of attempts".', UNCONFIRMED),
    docs_url: 'https://core.telegram.org/bots/api#setwebhook',
    secret_label: 'The secret_token you gave setWebhook',
    handshake: false,
    event_type: {
      sources: [{ from: 'json_key', among: [...TELEGRAM_UPDATE_TYPES] }],
      example: 'message',
      note: 'The type is which optional field the Update holds (at most one), not a value.',
    },
    verification: { primitive: 'static_token', location: 'header', header: 'x-telegram-bot-api-secret-token' },
    secret_fields: [{ from: 'header', name: 'x-telegram-bot-api-secret-token' }],
  },
  {
    id: 'dropbox',
    name: 'Dropbox',
    category: 'productivity',
    delivery_policy: waits(10, null, 'Undocumented.', UNCONFIRMED),
    docs_url: 'https://www.dropbox.com/developers/reference/webhooks#notifications',
    secret_label: "The app's App secret",
    handshake: true,
    event_type: { sources: [], note: 'A notification only lists the accounts whose files changed; a trigger with an event filter ignores its deliveries.' },
    handshake_answer: 'dropbox_challenge',
    verification: bodyHmac('x-dropbox-signature', 'hex'),
  },
  {
    id: 'x',
    name: 'X (Twitter)',
    category: 'messaging',
    delivery_policy: waits(null, null, 'Undocumented.'),
    docs_url: 'https://docs.x.com/x-api/webhooks/introduction#validating-the-signature-header',
    secret_label: "The app's API Key Secret (consumer secret)",
    handshake: true,
    event_type: { sources: [], note: 'The type is the key the body holds (`tweet_create_events`), each an array of events; a trigger with an event filter ignores its deliveries.' },
    handshake_answer: 'x_crc',
    // Its CRC answer is an HMAC under the very key deliveries are signed with: only a JSON object
    // (which no CRC token can be) is a delivery, so an answered token never verifies as one.
    accepts: { content_type: 'application/json', json: 'object' },
    verification: bodyHmac('x-twitter-webhooks-signature', 'base64', 'sha256='),
  },
  {
    id: 'standard_webhooks',
    name: 'Standard Webhooks',
    category: 'custom',
    delivery_policy: waits(null, null, 'The sender chooses; the specification recommends at once, then 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h and 24 h (about 75 h), and a 15-30 s time-out.'),
    docs_url: 'https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md#verifying-webhook-authenticity',
    secret_label: 'The signing secret (whsec_…)',
    handshake: false,
    event_type: { sources: [inBody('type')], example: 'contact.created' },
    delivery_id: { from: 'header', name: 'webhook-id', signed: true },
    verification: svixStyle('webhook'),
  },
  {
    id: 'custom',
    name: 'Custom HMAC',
    category: 'custom',
    delivery_policy: waits(null, null, 'Your sender\'s own.'),
    docs_url: 'https://en.wikipedia.org/wiki/HMAC',
    secret_label: 'The secret your sender signs with',
    handshake: false,
    event_type: { sources: [inBody('type')], example: 'invoice.paid', note: 'Your sender\'s own: the body\'s top-level `type`, as for a trigger without a signature.' },
    verification: { primitive: 'configured' },
  },
];

const BY_ID = new Map(SENDERS.map((row) => [row.id, row]));

/** The row for `id`, or `undefined` for an id the catalog does not know. */
export function senderRow(id: string): SenderRow | undefined {
  return BY_ID.get(id);
}

/**
 * The row a trigger's `signature` verifies with: the catalog's, or the `custom` row with the
 * trigger's own HMAC settings; `undefined` for an unknown id or a `custom` without settings.
 */
export function rowOfSignature(signature: { service: string; custom?: CustomSignatureConfig | HmacParams }): SenderRow | undefined {
  if (signature.service !== 'custom') return senderRow(signature.service);
  if (!signature.custom) return undefined;
  return customRow('content' in signature.custom ? signature.custom : hmacParamsFromCustomConfig(signature.custom));
}

/** The `custom` row with the trigger's own HMAC settings. */
export function customRow(params: HmacParams): SenderRow {
  return { ...BY_ID.get('custom')!, verification: { primitive: 'hmac', ...params } };
}

/**
 * The HMAC parameters equivalent to a `custom` configuration of the first kind (header, prefix,
 * and an optional timestamp header whose value is signed as `<timestamp>.<body>`), so triggers
 * configured before the assembled-content HMAC verify the same through the primitive.
 */
export function hmacParamsFromCustomConfig(config: CustomSignatureConfig): HmacParams {
  const signature = { from: 'header' as const, name: config.header.toLowerCase(), ...(config.prefix !== undefined && { prefix: config.prefix }) };
  if (config.timestamp_header === undefined) {
    return { algorithm: config.algorithm, key: TEXT_KEY, content: BODY, signature, encoding: config.encoding };
  }
  return {
    algorithm: config.algorithm,
    key: TEXT_KEY,
    content: [{ part: 'timestamp' }, { part: 'literal', text: '.' }, { part: 'body' }],
    signature,
    encoding: config.encoding,
    timestamp: { source: { from: 'header', name: config.timestamp_header.toLowerCase() }, format: 'unix_seconds', tolerance_seconds: CUSTOM_TOLERANCE_SECONDS },
  };
}

/** Every id a trigger's `signature.service` may take, in the catalog's order. */
export const SENDER_IDS: readonly string[] = SENDERS.map((row) => row.id);
/** The senders a trigger can choose: every row but those the catalog cannot verify (`unsupported`). */
export const CHOOSABLE_SENDER_IDS: readonly string[] = SENDERS.filter((row) => row.verification.primitive !== 'unsupported').map((row) => row.id);
