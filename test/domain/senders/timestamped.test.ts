import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { JSON_BODY, proveHmacSender, rowOf, verifySent } from '../../support/sender-proof.js';

/*
 * Senders that sign a timestamp with the body and publish no library that verifies it: each
 * request is built from the sender's documentation, cited beside it.
 */
const hex = (key: string, content: string) => createHmac('sha256', key).update(content).digest('hex');
const base64 = (key: string, content: string) => createHmac('sha256', key).update(content).digest('base64');

/** RFC 3339 with nanoseconds, as Twitch writes `Twitch-Eventsub-Message-Timestamp`. */
const twitchTime = (seconds: number) => new Date(seconds * 1000).toISOString().replace('.000Z', '.123456789Z');
/** RFC 3339 to the second, as Zendesk writes `X-Zendesk-Webhook-Signature-Timestamp`. */
const zendeskTime = (seconds: number) => new Date(seconds * 1000).toISOString().replace('.000Z', 'Z');

// https://developers.zoom.us/docs/api/webhooks/#verify-webhook-events: `v0=hex(HMAC(secret, v0:ts:body))`.
proveHmacSender('zoom', {
  secret: 'zoom-secret-token-one',
  otherSecret: 'zoom-secret-token-two',
  sign: (secret, now) => ({
    body: JSON_BODY,
    headers: { 'x-zm-signature': `v0=${hex(secret, `v0:${now}:${JSON_BODY}`)}`, 'x-zm-request-timestamp': String(now) },
  }),
});

// https://dev.twitch.tv/docs/eventsub/handling-webhook-events/#verifying-the-event-message:
// `sha256=hex(HMAC(secret, message id + timestamp + body))`, no separators.
proveHmacSender('twitch', {
  secret: 'twitch-eventsub-secret-one',
  otherSecret: 'twitch-eventsub-secret-two',
  sign: (secret, now) => ({
    body: JSON_BODY,
    headers: {
      'Twitch-Eventsub-Message-Id': 'e76c6bd4-55c9-4987-8304-da1588d8988b',
      'Twitch-Eventsub-Message-Timestamp': twitchTime(now),
      'Twitch-Eventsub-Message-Signature': `sha256=${hex(secret, `e76c6bd4-55c9-4987-8304-da1588d8988b${twitchTime(now)}${JSON_BODY}`)}`,
    },
  }),
});

// https://developer.calendly.com/api-docs/4c305798a61d3-webhook-signatures: `t=…,v1=hex(HMAC(key, t.body))`.
proveHmacSender('calendly', {
  secret: 'calendly-signing-key-one',
  otherSecret: 'calendly-signing-key-two',
  sign: (secret, now) => ({ body: JSON_BODY, headers: { 'Calendly-Webhook-Signature': `t=${now},v1=${hex(secret, `${now}.${JSON_BODY}`)}` } }),
});

// https://developer.zendesk.com/documentation/webhooks/verifying/: base64(HMAC(secret, TIMESTAMP + BODY)).
// (The event-connectors copy of that page shows BODY + TIMESTAMP; the webhooks page, which the
// senders' table follows, and Zendesk's Express example sign the timestamp first.)
proveHmacSender('zendesk', {
  secret: 'dGhpc19zZWNyZXRfaXNfZm9yX3Rlc3Rpbmdfb25seQ==',
  otherSecret: 'HRkRd4BeOAoUkfZr-mhauJT64rvBASlJRoIyPsd3zeA=',
  sign: (secret, now) => ({
    body: JSON_BODY,
    headers: { 'X-Zendesk-Webhook-Signature': base64(secret, `${zendeskTime(now)}${JSON_BODY}`), 'X-Zendesk-Webhook-Signature-Timestamp': zendeskTime(now) },
  }),
});

describe('twitch (Twitch EventSub) timestamps', () => {
  it('verifySender(twitch) returns false for a timestamp in unix seconds instead of RFC 3339', async () => {
    const now = 1_700_000_000;
    const headers = {
      'twitch-eventsub-message-id': 'id',
      'twitch-eventsub-message-timestamp': String(now),
      'twitch-eventsub-message-signature': `sha256=${hex('s', `id${now}${JSON_BODY}`)}`,
    };
    expect(await verifySent(rowOf('twitch'), { body: JSON_BODY, headers }, ['s'])).toBe(false);
  });
});
