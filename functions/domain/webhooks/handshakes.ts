import { createHash, createHmac } from 'node:crypto';
import { isPlainObject } from '../../shared/json.js';
import { headerValue } from './headers.js';
import { constantTimeEqual } from './signatures/hmac.js';

/*
 * The handshakes senders make before (or beside) their events, answered by the receiver itself:
 * a challenge to echo, a token to answer. One small pure function per kind; a catalog row names
 * the kind its sender uses (`handshake_answer`), so adding a sender's handshake adds a row's field
 * and, at most, a function here, never a branch in the receiver. None runs a flow.
 */

/** What a handshake sees of a request. Everything in it is untrusted. */
export interface HandshakeRequest {
  method: string;
  /** Lower-case names. */
  headers: Record<string, string>;
  query: Record<string, string>;
  /** A JSON body, parsed; undefined for any other body, or one that does not parse. */
  json: unknown;
  /** A urlencoded form body, parsed; undefined for any other body. */
  form?: Record<string, string | string[]>;
  /** The trigger's own Meta verify token, as its SHA-256 (hex), when one is set. */
  verifyTokenHash?: string;
  rawBody: Uint8Array;
}

/** The receiver's answer to a handshake: JSON (`json`) or text as it is (`text`). */
export type HandshakeReply =
  | { status: number; json: unknown }
  | { status: number; text: string; contentType: string; headers?: Record<string, string> };

/**
 * A handshake that matched, and what it answered; `refused` when it matched but its token was
 * wrong. `visit`: a URL of the sender's to GET before answering (Amazon SNS confirms a
 * subscription so), which the receiver fetches only from the sender's own hosts. `adopt`: the
 * signing secret the handshake hands over (Asana, Notion), which the trigger keeps, sealed;
 * `revealOnce`: its owner must see it (Notion asks for it back), once, and it is kept out of the
 * delivery's stored request.
 */
export type HandshakeOutcome = { reply: HandshakeReply; visit?: string; adopt?: string; revealOnce?: true } | { refused: true };

/**
 * When a kind is checked: `get` and `get_signed` handshakes are the only GETs a trigger answers,
 * the second only once the request verified as its sender's (Okta sends its auth header);
 * `unsigned` POSTs come before signature verification (the sender does not sign them); `signed`
 * POSTs only after the request verified as its sender's.
 */
export type { HandshakeKindName, HandshakeStage } from './handshake-stages.js';
import type { HandshakeKindName, HandshakeStage } from './handshake-stages.js';
import { HANDSHAKE_STAGES } from './handshake-stages.js';

interface HandshakeKind {
  /** As `handshake-stages.ts` says, which the receiver reads without loading this module. */
  stage: HandshakeStage;
  /** The sender's documentation of the handshake. */
  docs: string;
  /** The answer when the request is this handshake, else undefined (then the request goes on as any other). */
  answer(request: HandshakeRequest, secrets: readonly string[]): HandshakeOutcome | undefined;
}

/** `text/plain` echoes of a sender's token: `nosniff` so no browser ever reads one as anything else. */
const plain = (text: string): HandshakeReply => ({ status: 200, text, contentType: 'text/plain; charset=utf-8' });
const member = (value: unknown, name: string): unknown => (isPlainObject(value) && Object.hasOwn(value, name) ? value[name] : undefined);
/** A challenge or token as senders send them: short printable text, never something to reflect at length. */
const TOKEN = /^[\x21-\x7e]{1,512}$/;
const token = (value: unknown): string | undefined => (typeof value === 'string' && TOKEN.test(value) ? value : undefined);
/**
 * A CRC token as X sends them: 8 to 255 letters, digits and `+/_-`, `=` only as base64 padding at
 * the end. X signs deliveries with the very key, MAC and encoding of the CRC answer, so the answer
 * must never sign text that could be a delivery: nothing here can begin a JSON object (`{`, `"`),
 * hold a form's `name=value` pair or `&`, or carry a space.
 */
const X_CRC_TOKEN = /^(?=.{8,255}$)[A-Za-z0-9+/_-]+={0,2}$/;
const hmacSha256 = (key: string, text: string) => createHmac('sha256', key).update(text, 'utf8').digest();

export const HANDSHAKES = {
  slack_url_verification: {
    stage: 'signed',
    docs: 'https://api.slack.com/events/url_verification',
    answer: (request) => {
      if (member(request.json, 'type') !== 'url_verification') return undefined;
      const challenge = token(member(request.json, 'challenge'));
      return challenge === undefined ? undefined : { reply: { status: 200, json: { challenge } } };
    },
  },
  zoom_url_validation: {
    stage: 'signed',
    docs: 'https://developers.zoom.us/docs/api/webhooks/#validate-your-webhook-endpoint',
    answer: (request, secrets) => {
      if (member(request.json, 'event') !== 'endpoint.url_validation') return undefined;
      const plainToken = token(member(member(request.json, 'payload'), 'plainToken'));
      if (plainToken === undefined) return undefined;
      // Zoom checks the token with the secret it has: the current one (a rotation's new secret).
      return { reply: { status: 200, json: { plainToken, encryptedToken: hmacSha256(secrets[0]!, plainToken).toString('hex') } } };
    },
  },
  twitch_callback_verification: {
    stage: 'signed',
    docs: 'https://dev.twitch.tv/docs/eventsub/handling-webhook-events/#responding-to-a-challenge-request',
    answer: (request) => {
      if (headerValue(request.headers, 'twitch-eventsub-message-type') !== 'webhook_callback_verification') return undefined;
      const challenge = token(member(request.json, 'challenge'));
      return challenge === undefined ? undefined : { reply: plain(challenge) };
    },
  },
  discord_ping: {
    stage: 'signed',
    docs: 'https://discord.com/developers/docs/interactions/overview#setting-up-an-endpoint-acknowledging-ping-requests',
    answer: (request) => {
      const type = member(request.json, 'type');
      // Interactions PING (type 1) wants PONG (type 1); a webhook events PING (type 0) wants 204.
      // A Webhook Event is type 1 too, but carries its `event` (an Interactions PING carries
      // `application_id` and `token`, never an `event`): a delivery, whose flow runs.
      if (type === 1 && !isPlainObject(member(request.json, 'data')) && member(request.json, 'event') === undefined) return { reply: { status: 200, json: { type: 1 } } };
      if (type === 0 && member(request.json, 'event') === undefined) return { reply: { status: 204, text: '', contentType: 'text/plain' } };
      return undefined;
    },
  },
  microsoft_graph_validation: {
    stage: 'unsigned',
    docs: 'https://learn.microsoft.com/en-us/graph/change-notifications-delivery-webhooks#notificationurl-validation',
    answer: (request) => {
      const validationToken = request.query.validationToken;
      // Graph sends the token URL-decoded in the query and no body; it is answered as it is.
      return validationToken !== undefined && validationToken.length <= 1024 && !/[\r\n]/.test(validationToken) && request.rawBody.length === 0
        ? { reply: plain(validationToken) }
        : undefined;
    },
  },
  woocommerce_ping: {
    stage: 'unsigned',
    docs: 'https://woocommerce.github.io/woocommerce-rest-api-docs/#webhooks',
    answer: (request) => {
      // Sent once when the webhook is created: an unsigned form with only `webhook_id`, which must get exactly 200.
      if (headerValue(request.headers, 'x-wc-webhook-signature') !== undefined) return undefined;
      const form = request.form;
      return form !== undefined && Object.keys(form).length === 1 && typeof form.webhook_id === 'string' && /^\d{1,20}$/.test(form.webhook_id)
        ? { reply: { status: 200, text: '', contentType: 'text/plain' } }
        : undefined;
    },
  },
  aws_sns_subscription: {
    stage: 'signed',
    docs: 'https://docs.aws.amazon.com/sns/latest/dg/SendMessageToHttp.confirm.html',
    answer: (request) => {
      const type = member(request.json, 'Type');
      const empty: HandshakeReply = { status: 200, text: '', contentType: 'text/plain' };
      if (type === 'UnsubscribeConfirmation') return { reply: empty };
      const subscribeUrl = member(request.json, 'SubscribeURL');
      if (type !== 'SubscriptionConfirmation' || typeof subscribeUrl !== 'string') return undefined;
      return { reply: empty, visit: subscribeUrl };
    },
  },
  asana_hook_secret: {
    stage: 'unsigned',
    docs: 'https://developers.asana.com/docs/webhooks-guide#the-webhook-handshake',
    answer: (request, secrets) => {
      // Only while the trigger has no secret: later handshakes are deliveries that must be signed.
      const secret = secrets.length === 0 ? token(headerValue(request.headers, 'x-hook-secret')) : undefined;
      return secret === undefined ? undefined : { reply: { status: 200, text: '', contentType: 'text/plain', headers: { 'x-hook-secret': secret } }, adopt: secret };
    },
  },
  notion_verification: {
    stage: 'unsigned',
    docs: 'https://developers.notion.com/reference/webhooks#step-2-verifying-the-subscription',
    answer: (request, secrets) => {
      const verificationToken = secrets.length === 0 ? token(member(request.json, 'verification_token')) : undefined;
      return verificationToken === undefined ? undefined : { reply: { status: 200, text: '', contentType: 'text/plain' }, adopt: verificationToken, revealOnce: true };
    },
  },
  meta_subscribe: {
    stage: 'get',
    docs: 'https://developers.facebook.com/docs/graph-api/webhooks/getting-started#verification-requests',
    answer: (request) => {
      if (request.query['hub.mode'] !== 'subscribe') return undefined;
      const challenge = token(request.query['hub.challenge']);
      const verifyToken = request.query['hub.verify_token'];
      if (challenge === undefined || verifyToken === undefined) return undefined;
      // The verify token the user typed into Meta's dashboard: the trigger's `verify_token` (kept as
      // a hash, compared in constant time). Never the app secret: a token Meta sends in a URL must
      // not be the key its deliveries are signed with, so a trigger without one refuses.
      const matches = request.verifyTokenHash !== undefined
        && constantTimeEqual(createHash('sha256').update(verifyToken, 'utf8').digest(), Buffer.from(request.verifyTokenHash, 'hex'));
      return matches ? { reply: plain(challenge) } : { refused: true };
    },
  },
  dropbox_challenge: {
    stage: 'get',
    docs: 'https://www.dropbox.com/developers/reference/webhooks#documentation',
    answer: (request) => {
      const challenge = token(request.query.challenge);
      return challenge === undefined ? undefined : { reply: plain(challenge) };
    },
  },
  x_crc: {
    stage: 'get',
    docs: 'https://docs.x.com/x-api/webhooks/introduction#challenge-response-check-crc',
    answer: (request, secrets) => {
      const crcToken = request.query.crc_token;
      if (crcToken === undefined || !X_CRC_TOKEN.test(crcToken)) return undefined;
      return { reply: { status: 200, json: { response_token: `sha256=${hmacSha256(secrets[0]!, crcToken).toString('base64')}` } } };
    },
  },
  okta_verification: {
    stage: 'get_signed',
    docs: 'https://developer.okta.com/docs/concepts/event-hooks/#one-time-verification-request',
    answer: (request) => {
      const verification = token(headerValue(request.headers, 'x-okta-verification-challenge'));
      return verification === undefined ? undefined : { reply: { status: 200, json: { verification } } };
    },
  },
} as const satisfies Record<HandshakeKindName, HandshakeKind>;

/** The handshake of `kind`, when the request is one at `stage`. */
export function answerHandshake(kind: HandshakeKindName | undefined, stage: HandshakeStage, request: HandshakeRequest, secrets: readonly string[]): HandshakeOutcome | undefined {
  if (kind === undefined) return undefined;
  const handshake: HandshakeKind = HANDSHAKES[kind];
  return handshake.stage === stage ? handshake.answer(request, secrets) : undefined;
}


// The stages the receiver reads at init are the ones the answers are written for.
for (const [kind, handshake] of Object.entries(HANDSHAKES)) {
  if (HANDSHAKE_STAGES[kind as HandshakeKindName] !== handshake.stage) throw new Error(`handshake-stages.ts: ${kind} is answered at ${handshake.stage}`);
}
