// Each sender's event type and delivery id, read from its catalog row out of a delivery shaped as
// the sender's documentation shows it (the shared table of test/support/sender-deliveries.ts, which
// test/e2e/receiver-sender-events.test.ts sends over HTTP).
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { WebhookBody } from '../../../functions/domain/webhooks/body.js';
import { SENDERS, senderRow } from '../../../functions/domain/webhooks/senders/catalog.js';
import { eventType, senderEventId } from '../../../functions/domain/webhooks/trigger-input.js';
import { DELIVERIES, type SenderDelivery } from '../../support/sender-deliveries.js';
import { HTTP_SENDERS, IDS_NOT_SENT, ROWS_NOT_SENT, type HttpSender } from '../../support/sender-http.js';

const json = (value: unknown): WebhookBody => ({ kind: 'json', value });

/**
 * The fact sheet's senders whose deliveries name their type somewhere, and those whose delivery
 * id it gives: each needs a delivery above, or a reason here why its row cannot read it yet.
 */
const FACT_SHEET_TYPED = [
  'stripe', 'github', 'gitlab', 'bitbucket', 'slack', 'discord', 'shopify', 'woocommerce', 'bigcommerce', 'twilio', 'sendgrid', 'mailgun', 'postmark',
  'resend', 'clerk', 'svix', 'standard_webhooks', 'paddle', 'lemon_squeezy', 'paypal', 'square', 'braintree', 'adyen', 'razorpay', 'coinbase_commerce',
  'plaid', 'zoom', 'twitch', 'microsoft_graph', 'calendly', 'typeform', 'hubspot', 'intercom', 'linear', 'jira', 'asana', 'notion', 'vercel', 'sentry',
  'pagerduty', 'zendesk', 'docusign', 'okta', 'auth0', 'meta', 'telegram', 'x',
];
const FACT_SHEET_IDS = [
  'stripe', 'github', 'gitlab', 'bitbucket', 'slack', 'shopify', 'woocommerce', 'bigcommerce', 'twilio', 'sendgrid', 'mailgun', 'resend', 'clerk', 'svix',
  'standard_webhooks', 'paddle', 'paypal', 'square', 'razorpay', 'coinbase_commerce', 'twitch', 'google_pubsub', 'aws_sns', 'typeform', 'hubspot',
  'intercom', 'linear', 'jira', 'notion', 'vercel', 'sentry', 'pagerduty', 'zendesk', 'okta', 'auth0', 'telegram',
];
/** Types the fact sheet documents that no row reads yet: in a batch's elements, or not a value at all. */
const TYPES_NOT_READ: Record<string, string> = {
  sendgrid: 'batch', hubspot: 'batch', adyen: 'batch', microsoft_graph: 'batch', asana: 'batch', okta: 'batch', auth0: 'batch',
  braintree: 'inside base64 XML', x: 'which key is present',
};
/** Ids the fact sheet documents that no row reads yet. */
const IDS_NOT_READ: Record<string, string> = {
  sendgrid: 'per batch element', hubspot: 'per batch element', auth0: 'per batch element', telegram: 'update_id is an integer',
};

describe('each sender\'s event type, from its catalog row', () => {
  for (const [id, delivery] of Object.entries(DELIVERIES)) {
    const row = senderRow(id)!;
    it(`${id}: a delivery as its docs show it has type ${delivery.type ? `'${delivery.type}'` : 'none'}${delivery.id ? ` and event id '${delivery.id}'` : ''}`, () => {
      expect(eventType(row, delivery.headers ?? {}, json(delivery.body))).toBe(delivery.type || undefined);
      expect(senderEventId(row, delivery.headers ?? {}, json(delivery.body))).toBe(delivery.id);
    });
  }

  it('gitlab: a merge request is a Merge Request Hook, and without the header its object_kind', () => {
    const body = json({ object_kind: 'merge_request', event_type: 'merge_request' });
    expect(eventType(senderRow('gitlab'), { 'x-gitlab-event': 'Merge Request Hook' }, body)).toBe('Merge Request Hook');
    expect(eventType(senderRow('gitlab'), {}, body)).toBe('merge_request');
  });

  it('twitch: the signed body\'s subscription.type wins over a header that says otherwise', () => {
    const body = json({ subscription: { type: 'channel.follow' }, event: {} });
    expect(eventType(senderRow('twitch'), { 'twitch-eventsub-subscription-type': 'channel.ban' }, body)).toBe('channel.follow');
  });

  it('telegram: the type is which of the Update\'s optional fields is present; one it does not document, or a null, is no type', () => {
    const row = senderRow('telegram');
    expect(eventType(row, {}, json({ update_id: 1, callback_query: { id: '4382bfdwdsb323b2d9', data: 'x' } }))).toBe('callback_query');
    expect(eventType(row, {}, json({ update_id: 2, edited_message: { message_id: 1 } }))).toBe('edited_message');
    expect(eventType(row, {}, json({ update_id: 3, message: null, poll: { id: 'p' } }))).toBe('poll');
    expect(eventType(row, {}, json({ update_id: 4, type: 'message', not_an_update_field: {} }))).toBeUndefined();
    expect(eventType(row, {}, json([{ message: {} }]))).toBeUndefined();
    expect(eventType(row, {}, { kind: 'form', value: { message: 'hi' } })).toBeUndefined();
  });

  it('discord: an interaction (an integer type) has no type rather than failing, and its snowflake is its id', () => {
    const interaction = json({ type: 2, id: '786008729715212338', application_id: '2', token: 't', data: { name: 'cardsearch' } });
    expect(eventType(senderRow('discord'), {}, interaction)).toBeUndefined();
    expect(senderEventId(senderRow('discord'), {}, interaction)).toBe('786008729715212338');
  });
});

describe('the fact sheet\'s event types and delivery ids are each read and tested, or said not to be', () => {
  it('every fact-sheet sender with a documented type has a delivery above, or a reason its row reads none', () => {
    const untested = FACT_SHEET_TYPED.filter((id) => !DELIVERIES[id]?.type && !TYPES_NOT_READ[id]);
    expect(untested).toEqual([]);
  });

  it('every fact-sheet sender with a delivery id has a delivery above with its id, or a reason its row reads none', () => {
    const untested = FACT_SHEET_IDS.filter((id) => !DELIVERIES[id]?.id && !IDS_NOT_READ[id]);
    expect(untested).toEqual([]);
  });

  it('every row that reads a type has a delivery above; every row that reads none says so in a note', () => {
    for (const row of SENDERS) {
      if (row.event_type.sources.length > 0) expect(DELIVERIES[row.id]?.type ?? (row.id === 'custom' ? 'custom' : undefined), row.id).toBeTruthy();
      else expect(row.event_type.note, row.id).toMatch(/filter/);
    }
  });

  it('every row that names a delivery id has a delivery above with it', () => {
    const untested = SENDERS.filter((row) => row.delivery_id && !DELIVERIES[row.id]?.id).map((row) => row.id);
    // Discord's is an interaction's, proven above: its Webhook Events carry none.
    expect(untested).toEqual(['discord']);
  });
});

/**
 * Over HTTP: test/e2e/receiver-sender-events.test.ts sends every delivery of the shared table that
 * has a type or an id, signed by its sender of test/support/sender-http.ts (it fails for a delivery
 * without one); test/e2e/receiver-batches.test.ts sends each batching row's POST. So a row is
 * proven over HTTP when its delivery and its sender are in those tables, or its batch in that file.
 */
const E2E = resolve(import.meta.dirname, '../../e2e');
const SENDS_THE_TABLE = readFileSync(join(E2E, 'receiver-sender-events.test.ts'), 'utf8');
const BATCHES_SENT = new Set([...readFileSync(join(E2E, 'receiver-batches.test.ts'), 'utf8').matchAll(/\bservice: '([a-z0-9_]+)'/g)].map((m) => m[1]!));

/** The rows, and the fact sheet's senders, whose type or id no HTTP test sends. */
function notSentOverHttp(deliveries: Readonly<Record<string, SenderDelivery>>, senders: Readonly<Record<string, HttpSender>>): string[] {
  const sent = (id: string, what: 'type' | 'id') => Boolean(deliveries[id]?.[what] && senders[id]) || id in ROWS_NOT_SENT || (what === 'id' && id in IDS_NOT_SENT);
  const rows = SENDERS.filter((row) =>
    (row.event_type.sources.length > 0 && !sent(row.id, 'type'))
    || (row.delivery_id && !sent(row.id, 'id'))
    || (row.batch && !BATCHES_SENT.has(row.id)));
  const factSheet = [
    ...FACT_SHEET_TYPED.filter((id) => !sent(id, 'type') && !BATCHES_SENT.has(id) && !TYPES_NOT_READ[id]),
    ...FACT_SHEET_IDS.filter((id) => !sent(id, 'id') && !BATCHES_SENT.has(id) && !IDS_NOT_READ[id]),
  ];
  return [...new Set([...rows.map((row) => row.id), ...factSheet])];
}

describe('every row\'s event type and delivery id is proven over HTTP, or said why not', () => {
  it('test/e2e/receiver-sender-events.test.ts sends the shared table, each delivery with a type and each with an id', () => {
    expect(SENDS_THE_TABLE).toContain("from '../support/sender-deliveries.js'");
    expect(SENDS_THE_TABLE).toMatch(/for \(const \[service, delivery\] of TYPED\)/);
    expect(SENDS_THE_TABLE).toMatch(/for \(const \[service, delivery\] of WITH_ID\)/);
  });

  it('every row (and fact-sheet sender) with a type, an id or a batch has a delivery sent over HTTP, or a reason', () => {
    expect(notSentOverHttp(DELIVERIES, HTTP_SENDERS)).toEqual([]);
  });

  it('would fail for a row whose delivery or whose signer is gone', () => {
    const { gitlab: _gitlab, ...withoutGitlab } = DELIVERIES;
    const { clerk: _clerk, ...withoutClerk } = HTTP_SENDERS;
    expect(notSentOverHttp(withoutGitlab, HTTP_SENDERS)).toEqual(['gitlab']);
    expect(notSentOverHttp(DELIVERIES, withoutClerk)).toEqual(['clerk']);
  });
});
