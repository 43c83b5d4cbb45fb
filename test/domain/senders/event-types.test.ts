// Each sender's event type and delivery id, read from its catalog row out of a delivery shaped as
// the sender's documentation shows it (the sources are those of the fact sheet, shared/sender-events.md).
import { describe, expect, it } from 'vitest';
import type { WebhookBody } from '../../../functions/domain/webhooks/body.js';
import { SENDERS, senderRow } from '../../../functions/domain/webhooks/senders/catalog.js';
import { eventType, senderEventId } from '../../../functions/domain/webhooks/trigger-input.js';

const json = (value: unknown): WebhookBody => ({ kind: 'json', value });

interface Delivery {
  headers?: Record<string, string>;
  body: WebhookBody;
  /** The type the sender's docs give this delivery; '' where its row reads none (the delivery is here for its id). */
  type: string;
  /** The sender's own delivery id, where the row names where it is. */
  id?: string;
}

/** One genuine-looking delivery per sender whose documented type its row reads. */
const DELIVERIES: Record<string, Delivery> = {
  stripe: { body: json({ id: 'evt_1NG8Du2eZvKYlo2CUI79vXWy', object: 'event', type: 'payment_intent.succeeded', data: { object: { id: 'pi_1' } } }), type: 'payment_intent.succeeded', id: 'evt_1NG8Du2eZvKYlo2CUI79vXWy' },
  github: { headers: { 'x-github-event': 'pull_request', 'x-github-delivery': '72d3162e-cc78-11e3-81ab-4c9367dc0958' }, body: json({ action: 'opened', number: 1, pull_request: { id: 1 } }), type: 'pull_request', id: '72d3162e-cc78-11e3-81ab-4c9367dc0958' },
  gitlab: { headers: { 'x-gitlab-event': 'Push Hook', 'idempotency-key': 'f6e9a1c4-5d2b-4d8e-9a6f-0c1b2d3e4f50', 'x-gitlab-webhook-uuid': 'changes-every-time' }, body: json({ object_kind: 'push', event_name: 'push', ref: 'refs/heads/main', commits: [] }), type: 'Push Hook', id: 'f6e9a1c4-5d2b-4d8e-9a6f-0c1b2d3e4f50' },
  bitbucket: { headers: { 'x-event-key': 'repo:push', 'x-request-uuid': 'afe3c7e5-87bd-4b2b-9b3c-1b8f1c9f6c2d', 'x-hook-uuid': 'the-hook-itself', 'x-attempt-number': '1' }, body: json({ push: { changes: [] }, repository: { full_name: 'team/repo' } }), type: 'repo:push', id: 'afe3c7e5-87bd-4b2b-9b3c-1b8f1c9f6c2d' },
  slack: { body: json({ token: 'x', team_id: 'T1', type: 'event_callback', event_id: 'Ev0PV52K21', event_time: 1, event: { type: 'app_mention', user: 'U1', text: '<@U0LAN0Z89> hi' } }), type: 'app_mention', id: 'Ev0PV52K21' },
  discord: { body: json({ version: 1, application_id: '1234560123453231555', type: 1, event: { type: 'APPLICATION_AUTHORIZED', timestamp: '2024-10-18T14:42:53.064834', data: { scopes: ['applications.commands'] } } }), type: 'APPLICATION_AUTHORIZED' },
  shopify: { headers: { 'x-shopify-topic': 'orders/create', 'x-shopify-event-id': '98880550-7158-44d4-b7cd-2c97c8a091b5', 'x-shopify-webhook-id': 'b54557e4-bdd9-4b37-8a5f-bf7d70bcd043' }, body: json({ id: 820982911946154500, email: 'jon@example.com' }), type: 'orders/create', id: '98880550-7158-44d4-b7cd-2c97c8a091b5' },
  woocommerce: { headers: { 'x-wc-webhook-topic': 'order.created', 'x-wc-webhook-resource': 'order', 'x-wc-webhook-event': 'created', 'x-wc-webhook-delivery-id': '9f1a7d0b3c6e2a5f8d4b1c7e0a3f6d9b', 'x-wc-webhook-id': '12' }, body: json({ id: 727, status: 'processing' }), type: 'order.created', id: '9f1a7d0b3c6e2a5f8d4b1c7e0a3f6d9b' },
  bigcommerce: { body: json({ scope: 'store/order/statusUpdated', store_id: '1025646', data: { type: 'order', id: 250 }, hash: 'dd70c0976e06b67aaf671e73f49dcb79230ebf9d', created_at: 1561479335, producer: 'stores/{store_hash}' }), type: 'store/order/statusUpdated', id: 'dd70c0976e06b67aaf671e73f49dcb79230ebf9d' },
  twilio: { headers: { 'i-twilio-idempotency-token': 'idem-1' }, body: json({ specversion: '1.0', type: 'com.twilio.messaging.message.delivered', source: '/2010-04-01/Accounts/AC1/Messages/SM1.json', id: 'EZ1', dataschema: 'https://events-schemas.twilio.com/Messaging.MessageStatus/2', data: { messageSid: 'SM1' } }), type: 'com.twilio.messaging.message.delivered', id: 'idem-1' },
  mailgun: { body: json({ signature: { timestamp: '1529006854', token: 'a8ce0edb2dd8301dee6c2405235584e45aa91d1e9f979f3de0', signature: 'd2271d12299f6592d9d44cd9d250f0704e4674c30d79d07c47a66f95ce71cf55' }, 'event-data': { event: 'delivered', id: 'CCXMjJ7nQi2N3BPigGOdgQ', timestamp: 1521472262.908181 } }), type: 'delivered', id: 'CCXMjJ7nQi2N3BPigGOdgQ' },
  postmark: { body: json({ RecordType: 'Delivery', ServerID: 23, MessageStream: 'outbound', MessageID: '00000000-0000-0000-0000-000000000000', Recipient: 'john@example.com', DeliveredAt: '2019-11-05T16:33:54.9070259Z' }), type: 'Delivery' },
  resend: { headers: { 'svix-id': 'msg_2LJxa4CQqbRDc2q8AQUbxs4HTTz' }, body: json({ type: 'email.sent', created_at: '2024-02-22T23:41:12.126Z', data: { email_id: '56761188-7520-42d8-8898-ff6fc54ce618' } }), type: 'email.sent', id: 'msg_2LJxa4CQqbRDc2q8AQUbxs4HTTz' },
  clerk: { headers: { 'svix-id': 'msg_2ZxYd8h1b3LtKu5G2H8C9sQ3XyZ' }, body: json({ data: { id: 'user_29w83sxmDNGwOuEthce5gg56FcC' }, instance_id: 'ins_123', object: 'event', timestamp: 1654012591835, type: 'user.created' }), type: 'user.created', id: 'msg_2ZxYd8h1b3LtKu5G2H8C9sQ3XyZ' },
  svix: { headers: { 'svix-id': 'msg_p5jXN8AQM9LWM0D4loKWxJek' }, body: json({ type: 'invoice.paid', data: { id: 'inv_1' } }), type: 'invoice.paid', id: 'msg_p5jXN8AQM9LWM0D4loKWxJek' },
  standard_webhooks: { headers: { 'webhook-id': 'msg_2KWPBgLlAfxdpx2AI54pPJ85f4W' }, body: json({ type: 'contact.created', timestamp: '2022-11-03T20:26:10.344522Z', data: { id: '1f81eb52-5198-4599-803e-771906343485' } }), type: 'contact.created', id: 'msg_2KWPBgLlAfxdpx2AI54pPJ85f4W' },
  paddle: { body: json({ event_id: 'evt_01h8bzakzx3hm2fmen703n5q45', event_type: 'transaction.completed', occurred_at: '2023-08-23T10:15:43.171Z', notification_id: 'ntf_01h8bzam1z32agrxjwhjgqk8w6', data: { id: 'txn_1' } }), type: 'transaction.completed', id: 'evt_01h8bzakzx3hm2fmen703n5q45' },
  lemon_squeezy: { headers: { 'x-event-name': 'order_created' }, body: json({ meta: { event_name: 'order_created', webhook_id: 'the-webhook-itself' }, data: { type: 'orders', id: '1' } }), type: 'order_created' },
  paypal: { headers: { 'paypal-transmission-id': '69cd13f0-d67a-11e5-baa3-778b53f4ae55' }, body: json({ id: 'WH-2WR32451HC0233532-67976317FL4543714', event_type: 'PAYMENT.CAPTURE.COMPLETED', resource_type: 'capture', resource: { id: '42311647XV020574X' } }), type: 'PAYMENT.CAPTURE.COMPLETED', id: 'WH-2WR32451HC0233532-67976317FL4543714' },
  square: { body: json({ merchant_id: '6SSW7HV8K2ST5', type: 'payment.updated', event_id: '6a8f5f28-54a1-4eb0-a98a-3111513fd4fc', created_at: '2020-02-06T21:27:34.308Z', data: { type: 'payment', id: 'hYy9pRFVxpDsO1FB05SunFWUe9JZY' } }), type: 'payment.updated', id: '6a8f5f28-54a1-4eb0-a98a-3111513fd4fc' },
  razorpay: { headers: { 'x-razorpay-event-id': 'KLnEgBeU9pk2Dn' }, body: json({ entity: 'event', account_id: 'acc_BFQ7uQEaa7j2z7', event: 'payment.captured', contains: ['payment'], payload: { payment: { entity: { id: 'pay_1' } } }, created_at: 1567674606 }), type: 'payment.captured', id: 'KLnEgBeU9pk2Dn' },
  coinbase_commerce: { body: json({ id: 1, scheduled_for: '2017-01-31T20:50:02Z', attempt_number: 1, event: { id: '24934862-d980-46cb-9402-43c81b0cdba6', resource: 'event', type: 'charge:confirmed', data: { code: '66BEOV2A' } } }), type: 'charge:confirmed', id: '24934862-d980-46cb-9402-43c81b0cdba6' },
  plaid: { body: json({ webhook_type: 'TRANSACTIONS', webhook_code: 'SYNC_UPDATES_AVAILABLE', item_id: 'wz666MBjYWTp2PDzzggYhM6oWWmBb', environment: 'production' }), type: 'SYNC_UPDATES_AVAILABLE' },
  zoom: { body: json({ event: 'meeting.started', event_ts: 1626230691572, payload: { account_id: 'AAAAAABBBB', object: { id: '1234567890', topic: 'My Meeting' } } }), type: 'meeting.started' },
  twitch: { headers: { 'twitch-eventsub-message-id': 'befa7b53-d79d-478f-86b9-120f112b044e', 'twitch-eventsub-message-type': 'notification', 'twitch-eventsub-subscription-type': 'channel.follow' }, body: json({ subscription: { id: 'f1c2a387-161a-49f9-a165-0f21d7a4e1c4', type: 'channel.follow', version: '2' }, event: { user_id: '1337', broadcaster_user_id: '1337' } }), type: 'channel.follow', id: 'befa7b53-d79d-478f-86b9-120f112b044e' },
  calendly: { body: json({ created_at: '2020-11-23T17:51:19.000000Z', created_by: 'https://api.calendly.com/users/AAAA', event: 'invitee.created', payload: { uri: 'https://api.calendly.com/scheduled_events/GBGBDCAADAEDCRZ2/invitees/AAAA' } }), type: 'invitee.created' },
  typeform: { body: json({ event_id: '01F6ZXYQ4SX5Q3B0WK5XFZ0DNR', event_type: 'form_response', form_response: { form_id: 'lT4Z3j', answers: [] } }), type: 'form_response', id: '01F6ZXYQ4SX5Q3B0WK5XFZ0DNR' },
  intercom: { body: json({ type: 'notification_event', app_id: 'abc', data: { item: { type: 'conversation' } }, id: 'notif_ccd8a4d0-f965-11e3-a367-c779cae3e1b3', topic: 'conversation.user.created', delivery_attempts: 1, first_sent_at: 1403140530 }), type: 'conversation.user.created', id: 'notif_ccd8a4d0-f965-11e3-a367-c779cae3e1b3' },
  linear: { headers: { 'linear-delivery': '234d1a4e-b617-4388-90fe-adc3633d6b72', 'linear-event': 'Issue' }, body: json({ action: 'create', type: 'Issue', data: { id: '2174add1-f7c8-44e3-bbf3-2d60b5ea8bc9' }, webhookTimestamp: 1676056940508, webhookId: 'the-webhook-itself' }), type: 'Issue', id: '234d1a4e-b617-4388-90fe-adc3633d6b72' },
  jira: { headers: { 'x-atlassian-webhook-identifier': '9a0d6a2c-0000-4d1e-8a6b-0d4d0c9b1e11', 'x-atlassian-webhook-retry': '0' }, body: json({ timestamp: 1, webhookEvent: 'jira:issue_updated', issue_event_type_name: 'issue_generic', issue: { key: 'TEST-1' } }), type: 'jira:issue_updated', id: '9a0d6a2c-0000-4d1e-8a6b-0d4d0c9b1e11' },
  notion: { body: json({ id: '367cba44-b6f3-4c92-81e7-6a2e9659efd4', timestamp: '2024-12-05T23:55:34.285Z', workspace_id: '13950b26-c203-4f3b-b97d-93ec06319565', type: 'page.created', entity: { id: '153104cd-477e-809d-8dc4-ff2d96ae3090', type: 'page' }, attempt_number: 1 }), type: 'page.created', id: '367cba44-b6f3-4c92-81e7-6a2e9659efd4' },
  vercel: { body: json({ type: 'deployment.created', id: 'uKkgQH4fRCg0xM8GbQbJZFWr', createdAt: 1706211200000, payload: { deployment: { id: 'dpl_1' } } }), type: 'deployment.created', id: 'uKkgQH4fRCg0xM8GbQbJZFWr' },
  sentry: { headers: { 'sentry-hook-resource': 'issue', 'request-id': 'a8b7c6d5-e4f3-4210-9876-543210fedcba' }, body: json({ action: 'created', installation: { uuid: 'x' }, data: { issue: { id: '1' } } }), type: 'issue', id: 'a8b7c6d5-e4f3-4210-9876-543210fedcba' },
  pagerduty: { body: json({ event: { id: '01DEN2HJQZ1QXSF4TTQIDKQBQ', event_type: 'incident.triggered', resource_type: 'incident', occurred_at: '2020-10-02T18:45:22.169Z', data: { id: 'PGR0VU2' } } }), type: 'incident.triggered', id: '01DEN2HJQZ1QXSF4TTQIDKQBQ' },
  zendesk: { body: json({ type: 'zen:event-type:user.created', account_id: 12514403, id: '2b1c5f2e-9a2e-4b8d-9d3f-0a1b2c3d4e5f', time: '2099-07-04T05:33:18Z', zendesk_event_version: '2022-11-06', subject: 'zen:user:1', detail: { id: '1' }, event: {} }), type: 'zen:event-type:user.created', id: '2b1c5f2e-9a2e-4b8d-9d3f-0a1b2c3d4e5f' },
  docusign: { body: json({ event: 'envelope-completed', apiVersion: 'v2.1', uri: '/restapi/v2.1/accounts/1/envelopes/2', generatedDateTime: '2024-01-01T00:00:00.000Z', data: { envelopeId: '2' } }), type: 'envelope-completed' },
  meta: { body: json({ object: 'whatsapp_business_account', entry: [{ id: '102290129340398', changes: [{ field: 'messages', value: { messages: [{ id: 'wamid.1' }] } }] }] }), type: 'whatsapp_business_account' },
  google_pubsub: { body: json({ message: { attributes: { eventType: 'OBJECT_FINALIZE' }, data: 'SGVsbG8=', messageId: '2070443601311540', publishTime: '2021-02-26T19:13:55.749Z' }, subscription: 'projects/p/subscriptions/s' }), type: '', id: '2070443601311540' },
  aws_sns: { body: json({ Type: 'Notification', MessageId: '22b80b92-fdea-4c2c-8f9d-bdfb0c7bf324', TopicArn: 'arn:aws:sns:us-west-2:123456789012:MyTopic', Message: '{"kind":"order.paid"}', Timestamp: '2012-05-02T00:54:06.655Z' }), type: '', id: '22b80b92-fdea-4c2c-8f9d-bdfb0c7bf324' },
  okta: { body: json({ eventType: 'com.okta.event_hook', eventTypeVersion: '1.0', eventId: 'b5a188b9-5ece-4636-b041-482ffda96311', data: { events: [{ uuid: '5b8d2f5d-0000-4b9f-a1c1-6f4d3a1c2b3a', eventType: 'user.session.start' }] } }), type: '', id: 'b5a188b9-5ece-4636-b041-482ffda96311' },
};

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
  braintree: 'inside base64 XML', telegram: 'which field is present', x: 'which key is present',
};
/** Ids the fact sheet documents that no row reads yet. */
const IDS_NOT_READ: Record<string, string> = {
  sendgrid: 'per batch element', hubspot: 'per batch element', auth0: 'per batch element', telegram: 'update_id is an integer',
};

describe('each sender\'s event type, from its catalog row', () => {
  for (const [id, delivery] of Object.entries(DELIVERIES)) {
    const row = senderRow(id)!;
    it(`${id}: a delivery as its docs show it has type ${delivery.type ? `'${delivery.type}'` : 'none'}${delivery.id ? ` and event id '${delivery.id}'` : ''}`, () => {
      expect(eventType(row, delivery.headers ?? {}, delivery.body)).toBe(delivery.type || undefined);
      expect(senderEventId(row, delivery.headers ?? {}, delivery.body)).toBe(delivery.id);
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
