import { describe, expect, it } from 'vitest';
import type { WebhookBody } from '../../functions/domain/webhooks/body.js';
import {
  buildTriggerData,
  eventType,
  matchesEventFilter,
  senderEventId,
} from '../../functions/domain/webhooks/trigger-input.js';
import { senderRow } from '../../functions/domain/webhooks/senders/catalog.js';

const json = (value: unknown): WebhookBody => ({ kind: 'json', value });
const form = (value: Record<string, string | string[]>): WebhookBody => ({ kind: 'form', value });
const RECEIVED_AT = new Date('2024-05-01T12:00:00.000Z');

function build(body: WebhookBody, options: { service?: 'stripe' | 'github' | 'custom'; headers?: Record<string, string> } = {}) {
  return buildTriggerData({
    ...(options.service ? { row: senderRow(options.service) } : {}),
    headers: options.headers ?? {},
    body,
    webhookId: 'wh_1',
    receivedAt: RECEIVED_AT,
    newEventId: () => 'generated-id',
  });
}

describe('eventType', () => {
  it('eventType(github) reads x-github-event', () => {
    expect(eventType(senderRow('github'), { 'x-github-event': 'push' }, json({ type: 'ignored' }))).toBe('push');
  });

  it('eventType(shopify) reads x-shopify-topic', () => {
    expect(eventType(senderRow('shopify'), { 'x-shopify-topic': 'orders/create' }, json({}))).toBe('orders/create');
  });

  it('eventType(slack) reads the inner event type of an event_callback', () => {
    const body = json({ type: 'event_callback', event: { type: 'app_mention' } });
    expect(eventType(senderRow('slack'), {}, body)).toBe('app_mention');
  });

  it('eventType(stripe) reads the body type', () => {
    expect(eventType(senderRow('stripe'), {}, json({ type: 'customer.created' }))).toBe('customer.created');
  });

  it('eventType(undefined) reads a form type field', () => {
    expect(eventType(undefined, {}, form({ type: 'sms' }))).toBe('sms');
  });

  it('eventType returns undefined for a non-string body type', () => {
    expect(eventType(senderRow('stripe'), {}, json({ type: { nested: true } }))).toBeUndefined();
  });

  it('eventType returns undefined for a JSON array body', () => {
    expect(eventType(undefined, {}, json([{ type: 'a' }]))).toBeUndefined();
  });

  it('eventType(github) returns undefined without x-github-event', () => {
    expect(eventType(senderRow('github'), {}, json({ type: 'a' }))).toBeUndefined();
  });

  it('eventType(gitlab) reads x-gitlab-event, else the body object_kind', () => {
    expect(eventType(senderRow('gitlab'), { 'x-gitlab-event': 'Push Hook' }, json({ object_kind: 'push' }))).toBe('Push Hook');
    expect(eventType(senderRow('gitlab'), {}, json({ object_kind: 'push' }))).toBe('push');
  });

  it('eventType(slack) reads the envelope type when there is no inner event', () => {
    expect(eventType(senderRow('slack'), {}, json({ type: 'app_rate_limited' }))).toBe('app_rate_limited');
  });

  it('eventType of a row that names no type (aws_sns) ignores a body type', () => {
    expect(eventType(senderRow('aws_sns'), {}, json({ Type: 'Notification', type: 'forged' }))).toBeUndefined();
  });

  it('eventType of a row without event_type (a custom trigger with no settings) is undefined', () => {
    expect(eventType({}, {}, json({ type: 'a' }))).toBeUndefined();
  });

  it('eventType(zoom) returns undefined, never throws, for a malformed body', () => {
    expect(eventType(senderRow('zoom'), {}, json({ event: { nested: 1 } }))).toBeUndefined();
    expect(eventType(senderRow('zoom'), {}, json('just text'))).toBeUndefined();
    expect(eventType(senderRow('zoom'), {}, json([{ event: 'meeting.started' }]))).toBeUndefined();
  });
});

describe('senderEventId', () => {
  it('senderEventId(stripe) reads the body id', () => {
    expect(senderEventId(senderRow('stripe'), {}, json({ id: 'evt_1' }))).toBe('evt_1');
  });

  it('senderEventId(github) reads x-github-delivery', () => {
    expect(senderEventId(senderRow('github'), { 'x-github-delivery': 'd-1' }, json({ id: 'x' }))).toBe('d-1');
  });

  it('senderEventId(slack) reads the body event_id', () => {
    expect(senderEventId(senderRow('slack'), {}, json({ event_id: 'Ev1', id: 'x' }))).toBe('Ev1');
  });

  it('senderEventId(shopify) reads x-shopify-event-id, the same for every retry of one event', () => {
    expect(senderEventId(senderRow('shopify'), { 'x-shopify-event-id': 'e-1', 'x-shopify-webhook-id': 's-1' }, json({}))).toBe('e-1');
  });

  it('senderEventId(standard_webhooks) reads webhook-id', () => {
    expect(senderEventId(senderRow('standard_webhooks'), { 'webhook-id': 'msg_1' }, json({}))).toBe('msg_1');
  });

  it('senderEventId(twilio) reads i-twilio-idempotency-token', () => {
    expect(senderEventId(senderRow('twilio'), { 'i-twilio-idempotency-token': 't-1' }, form({}))).toBe('t-1');
  });

  it('senderEventId(undefined) takes the first sender id present, in order', () => {
    const headers = { 'x-github-delivery': 'gh', 'webhook-id': 'sw' };
    expect(senderEventId(undefined, headers, json({ event_id: 'slack' }))).toBe('gh');
  });

  it('senderEventId(undefined), for an unsigned trigger, falls back to an idempotency-key header', () => {
    expect(senderEventId(undefined, { 'idempotency-key': 'k-1' }, json({}))).toBe('k-1');
  });

  it('senderEventId(custom) takes no unsigned idempotency-key header: its row names no delivery id', () => {
    expect(senderEventId(senderRow('custom'), { 'idempotency-key': 'k-1' }, json({ id: 'x' }))).toBeUndefined();
  });

  it('senderEventId(gitlab) reads the Idempotency-Key GitLab sends', () => {
    expect(senderEventId(senderRow('gitlab'), { 'idempotency-key': 'g-1' }, json({}))).toBe('g-1');
  });

  it('senderEventId(svix) reads svix-id, and senderEventId(aws_sns) the body MessageId', () => {
    expect(senderEventId(senderRow('svix'), { 'svix-id': 'msg_2' }, json({}))).toBe('msg_2');
    expect(senderEventId(senderRow('aws_sns'), {}, json({ MessageId: 'm-1' }))).toBe('m-1');
  });

  it('senderEventId(stripe) ignores an idempotency-key header', () => {
    expect(senderEventId(senderRow('stripe'), { 'idempotency-key': 'forged' }, json({}))).toBeUndefined();
  });

  it('senderEventId ignores a non-string id', () => {
    expect(senderEventId(senderRow('stripe'), {}, json({ id: 42 }))).toBeUndefined();
  });

  it('senderEventId ignores an id longer than 256 characters', () => {
    expect(senderEventId(senderRow('stripe'), {}, json({ id: 'x'.repeat(257) }))).toBeUndefined();
  });

  it('senderEventId ignores an empty id', () => {
    expect(senderEventId(senderRow('github'), { 'x-github-delivery': '' }, json({}))).toBeUndefined();
  });

  it('senderEventId(stripe) ignores another sender\'s header', () => {
    expect(senderEventId(senderRow('stripe'), { 'x-github-delivery': 'gh' }, json({}))).toBeUndefined();
  });
});

describe('buildTriggerData', () => {
  it('buildTriggerData builds the flow input of a Stripe event', () => {
    const body = json({ id: 'evt_1', type: 'customer.created', data: { object: { id: 'cus_1' } }, livemode: false });
    expect(build(body, { service: 'stripe', headers: { 'content-type': 'application/json' } })).toEqual({
      headers: { 'content-type': 'application/json' },
      event: body.value,
      type: 'customer.created',
      data: { object: { id: 'cus_1' } },
      webhook_id: 'wh_1',
      received_at: '2024-05-01T12:00:00.000Z',
      event_id: 'evt_1',
      id: 'evt_1',
      livemode: false,
    });
  });

  it('buildTriggerData uses newEventId when the sender gives no id', () => {
    expect(build(json({})).event_id).toBe('generated-id');
  });

  it('buildTriggerData omits type and data when the body has neither', () => {
    const result = build(json({ a: 1 }));
    expect(['type' in result, 'data' in result]).toEqual([false, false]);
  });

  it('buildTriggerData never lets body keys overwrite reserved names', () => {
    const result = build(
      json({ headers: 'x', event: 'x', type: 7, webhook_id: 'x', received_at: 'x', event_id: 'x' }),
      { service: 'github', headers: { 'x-github-delivery': 'd-1' } },
    );
    expect(result).toMatchObject({ headers: { 'x-github-delivery': 'd-1' }, webhook_id: 'wh_1', event_id: 'd-1' });
    expect([result.received_at, result.type]).toEqual([RECEIVED_AT.toISOString(), undefined]);
  });

  it('buildTriggerData does not copy __proto__ or constructor keys and keeps the plain prototype', () => {
    const value = JSON.parse('{"__proto__":{"polluted":true},"constructor":{"prototype":{"x":1}},"ok":1}') as unknown;
    const result = build(json(value));
    expect(Object.getPrototypeOf(result)).toBe(Object.prototype);
    expect([Object.hasOwn(result, '__proto__'), Object.hasOwn(result, 'constructor'), result.ok]).toEqual([false, false, 1]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('buildTriggerData does not spread form fields', () => {
    expect(build(form({ a: '1' }))).not.toHaveProperty('a');
  });

  it('buildTriggerData takes data from a form field', () => {
    expect(build(form({ data: 'x' })).data).toBe('x');
  });
});

describe('matchesEventFilter', () => {
  it('matchesEventFilter([]) matches any type, even none', () => {
    expect([matchesEventFilter([], 'a'), matchesEventFilter([], undefined)]).toEqual([true, true]);
  });

  it('matchesEventFilter matches an exact type', () => {
    expect(matchesEventFilter(['push', 'issues'], 'issues')).toBe(true);
  });

  it('matchesEventFilter does not match a type that only starts like an exact entry', () => {
    expect(matchesEventFilter(['push'], 'push.extra')).toBe(false);
  });

  it('matchesEventFilter matches a prefix ending in *', () => {
    expect(matchesEventFilter(['customer.*'], 'customer.subscription.created')).toBe(true);
  });

  it('matchesEventFilter does not match another prefix', () => {
    expect(matchesEventFilter(['customer.*'], 'invoice.paid')).toBe(false);
  });

  it('matchesEventFilter refuses an untyped delivery when a filter is set', () => {
    expect(matchesEventFilter(['*'], undefined)).toBe(false);
  });
});

