import { beforeAll, describe, expect, it } from 'vitest';
import { useLocalStack } from '../support/local-stack.js';
import { signGithub, signShopify, signSlack, signStandardWebhooks, signStripe, signTwilio } from '../support/signers.js';
import { createTrigger, deliver, TEST_FLOWS_DIR } from '../support/webhooks.js';

// `echo` returns {received: $.trigger.event, event_id, webhook_id, received_at};
// `echo-trigger` (test fixture) returns the whole of $.trigger.
const stack = useLocalStack({ flowsDir: TEST_FLOWS_DIR });

const nowSeconds = () => Math.floor(Date.now() / 1000);
const GENERATED_ID = /^[0-9a-f]{32}$/;
const WHSEC = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

/** A wait-mode trigger on `flow`, and a function that delivers to it and returns the flow's output. */
async function waitTrigger(flow: 'echo' | 'echo-trigger', settings: Record<string, unknown> = {}) {
  const trigger = await createTrigger(stack, await stack.token('input-owner'), { flow, response_mode: 'wait', ...settings });
  const send = async (body: string, headers: Record<string, string> = {}, url = trigger.url) => {
    const res = await deliver(url, body, headers);
    if (res.status !== 200) throw new Error(`delivery failed: ${res.status} ${res.text}`);
    return res.json;
  };
  return { trigger, send };
}

describe('event_id: the sender\'s delivery id', () => {
  it('stripe: the body\'s id', async () => {
    const secret = 'whsec_input';
    const { send } = await waitTrigger('echo', { signature: { service: 'stripe', secret } });
    const body = JSON.stringify({ id: 'evt_1NG8Du2eZvKYlo2C', type: 'charge.succeeded' });
    expect((await send(body, signStripe({ secret, body, timestamp: nowSeconds() }))).event_id).toBe('evt_1NG8Du2eZvKYlo2C');
  });

  it('github: the X-GitHub-Delivery header', async () => {
    const secret = 'gh-input';
    const { send } = await waitTrigger('echo', { signature: { service: 'github', secret } });
    const body = JSON.stringify({ id: 'not-this-one', action: 'opened' });
    const headers = { ...(await signGithub({ secret, body })), 'X-GitHub-Delivery': '72d3162e-cc78-11e3-81ab-4c9367dc0958' };
    expect((await send(body, headers)).event_id).toBe('72d3162e-cc78-11e3-81ab-4c9367dc0958');
  });

  it('slack: the body\'s event_id', async () => {
    const secret = 'slack-input';
    const { send } = await waitTrigger('echo', { signature: { service: 'slack', secret } });
    const body = JSON.stringify({ type: 'event_callback', event_id: 'Ev08MFMKH6', event: { type: 'app_mention' } });
    expect((await send(body, signSlack({ secret, body, timestamp: nowSeconds() }))).event_id).toBe('Ev08MFMKH6');
  });

  it('shopify: the X-Shopify-Event-Id header, the same for every retry of one event (not X-Shopify-Webhook-Id)', async () => {
    const secret = 'shpss_input';
    const { send } = await waitTrigger('echo', { signature: { service: 'shopify', secret } });
    const body = JSON.stringify({ id: 820982911946154500 });
    const headers = { ...signShopify({ secret, body }), 'X-Shopify-Event-Id': '98880550-7158-44d4-b7cd-2c97c8a091b5', 'X-Shopify-Webhook-Id': 'b54557e4-bdd9-4b37-8a5f-bf7d70bcd043' };
    expect((await send(body, headers)).event_id).toBe('98880550-7158-44d4-b7cd-2c97c8a091b5');
  });

  it('standard_webhooks: the webhook-id header', async () => {
    const { send } = await waitTrigger('echo', { signature: { service: 'standard_webhooks', secret: WHSEC } });
    const body = JSON.stringify({ type: 'user.created', data: {} });
    expect((await send(body, signStandardWebhooks({ secret: WHSEC, id: 'msg_2KWPBgLlAfxdpx2AI54pPJ85f4W', timestamp: nowSeconds(), body }))).event_id)
      .toBe('msg_2KWPBgLlAfxdpx2AI54pPJ85f4W');
  });

  it('twilio: the I-Twilio-Idempotency-Token header', async () => {
    const authToken = 'twilio-input';
    const { trigger, send } = await waitTrigger('echo', { signature: { service: 'twilio', secret: authToken } });
    const body = 'MessageSid=SM1&Body=hi';
    const signed = signTwilio({ authToken, url: trigger.url, body, contentType: 'application/x-www-form-urlencoded' });
    const out = await send(body, { ...signed.headers, 'I-Twilio-Idempotency-Token': 'e1c1a4b2-idem' }, signed.url);
    expect(out.event_id).toBe('e1c1a4b2-idem');
  });

  it('without a service: the Idempotency-Key header', async () => {
    const { send } = await waitTrigger('echo');
    expect((await send(JSON.stringify({ type: 'x' }), { 'Idempotency-Key': 'idem-42' })).event_id).toBe('idem-42');
  });

  it('without a service: the first sender id present (here a Stripe-style body id) before Idempotency-Key', async () => {
    const { send } = await waitTrigger('echo');
    expect((await send(JSON.stringify({ id: 'evt_plain' }), { 'Idempotency-Key': 'idem-43' })).event_id).toBe('evt_plain');
  });

  it('otherwise a generated id, different for each delivery', async () => {
    const { send } = await waitTrigger('echo');
    const [a, b] = [(await send('{"type":"x"}')).event_id, (await send('{"type":"x"}')).event_id];
    expect(a).toMatch(GENERATED_ID);
    expect(b).toMatch(GENERATED_ID);
    expect(a).not.toBe(b);
  });

  it('a configured service only reads its own id: a GitHub trigger ignores a body id', async () => {
    const secret = 'gh-input';
    const { send } = await waitTrigger('echo', { signature: { service: 'github', secret } });
    const body = JSON.stringify({ id: 'evt_not_github' });
    expect((await send(body, await signGithub({ secret, body }))).event_id).toMatch(GENERATED_ID);
  });

  it('the accepted answer carries the same event_id (acknowledge mode)', async () => {
    const trigger = await createTrigger(stack, await stack.token('input-owner'), { flow: 'echo' });
    const res = await deliver(trigger.url, '{}', { 'Idempotency-Key': 'idem-ack' });
    expect(res.json).toEqual({ status: 'accepted', event_id: 'idem-ack' });
  });
});

describe('type: the event type', () => {
  it('github: the X-GitHub-Event header', async () => {
    const secret = 'gh-input';
    const { send } = await waitTrigger('echo-trigger', { signature: { service: 'github', secret } });
    const body = JSON.stringify({ action: 'opened', type: 'not-this' });
    expect((await send(body, { ...(await signGithub({ secret, body })), 'X-GitHub-Event': 'pull_request' })).type).toBe('pull_request');
  });

  it('shopify: the X-Shopify-Topic header', async () => {
    const secret = 'shpss_input';
    const { send } = await waitTrigger('echo-trigger', { signature: { service: 'shopify', secret } });
    const body = JSON.stringify({ id: 1 });
    expect((await send(body, { ...signShopify({ secret, body }), 'X-Shopify-Topic': 'orders/create' })).type).toBe('orders/create');
  });

  it('slack: the inner event.type of an event_callback', async () => {
    const secret = 'slack-input';
    const { send } = await waitTrigger('echo-trigger', { signature: { service: 'slack', secret } });
    const body = JSON.stringify({ type: 'event_callback', event_id: 'Ev1', event: { type: 'reaction_added' } });
    expect((await send(body, signSlack({ secret, body, timestamp: nowSeconds() }))).type).toBe('reaction_added');
  });

  it('otherwise the body\'s type when it is a string', async () => {
    const { send } = await waitTrigger('echo-trigger');
    expect((await send(JSON.stringify({ type: 'invoice.paid' }))).type).toBe('invoice.paid');
  });

  it('a form body\'s type field', async () => {
    const { send } = await waitTrigger('echo-trigger');
    expect((await send('type=sms.received&Body=hi', { 'content-type': 'application/x-www-form-urlencoded' })).type).toBe('sms.received');
  });

  it('absent when the body has no string type', async () => {
    const { send } = await waitTrigger('echo-trigger');
    expect(await send(JSON.stringify({ type: 42 }))).not.toHaveProperty('type');
  });

  it('the event filter matches the same type (GitHub header, not the body)', async () => {
    const secret = 'gh-input';
    const trigger = await createTrigger(stack, await stack.token('input-owner'), { flow: 'echo', event_filter: ['push'], signature: { service: 'github', secret } });
    const body = JSON.stringify({ type: 'push' });
    const signed = await signGithub({ secret, body });
    expect((await deliver(trigger.url, body, { ...signed, 'x-github-event': 'issues' })).json).toEqual({ status: 'ignored', event_id: expect.any(String), reason: expect.any(String) });
    expect((await deliver(trigger.url, body, { ...signed, 'x-github-event': 'push' })).json).toMatchObject({ status: 'accepted' });
  });
});

describe('the flow input for a JSON delivery', () => {
  const body = JSON.stringify({
    id: 'evt_full',
    type: 'invoice.paid',
    data: { object: { amount: 500 } },
    amount: 500,
    livemode: false,
    headers: 'body-headers',
    event: 'body-event',
    webhook_id: 'body-webhook-id',
    received_at: 'body-received-at',
    event_id: 'body-event-id',
  });
  let trigger: { webhook_id: string; api_key?: string };
  let out: Record<string, any>;
  let started: number;

  beforeAll(async () => {
    const made = await waitTrigger('echo-trigger', { api_key_enabled: true });
    trigger = made.trigger;
    started = Date.now();
    out = await made.send(body, { 'X-Api-Key': made.trigger.api_key!, 'X-Custom-Header': 'Kept-As-Sent', 'User-Agent': 'Stripe/1.0' });
  });

  it('event is the parsed body', () => {
    expect(out.event).toEqual(JSON.parse(body));
  });

  it('headers are every request header, names in lower case, values as sent', () => {
    expect(out.headers).toMatchObject({ 'x-custom-header': 'Kept-As-Sent', 'user-agent': 'Stripe/1.0', 'content-type': 'application/json' });
    for (const name of Object.keys(out.headers)) expect(name).toBe(name.toLowerCase());
  });

  it('the trigger\'s API key is withheld: no x-api-key header, and the key appears nowhere', () => {
    expect(out.headers).not.toHaveProperty('x-api-key');
    expect(JSON.stringify(out)).not.toContain(trigger.api_key);
  });

  it('data is the body\'s data member', () => {
    expect(out.data).toEqual({ object: { amount: 500 } });
  });

  it('webhook_id and received_at (ISO 8601) are the receiver\'s', () => {
    expect(out.webhook_id).toBe(trigger.webhook_id);
    expect(out.received_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(Math.abs(Date.parse(out.received_at) - started)).toBeLessThan(60_000);
  });

  it('type and event_id come from the rules above, not from body keys of the same name', () => {
    expect(out.type).toBe('invoice.paid');
    expect(out.event_id).toBe('evt_full');
  });

  it('other top-level keys are copied onto the trigger', () => {
    expect(out.amount).toBe(500);
    expect(out.livemode).toBe(false);
    expect(out.id).toBe('evt_full');
  });

  it('top-level keys never overwrite the reserved names', () => {
    expect(out.headers).toEqual(expect.objectContaining({ 'x-custom-header': 'Kept-As-Sent' }));
    expect(out.event).toEqual(expect.objectContaining({ event: 'body-event' }));
    expect(out.webhook_id).not.toBe('body-webhook-id');
    expect(out.received_at).not.toBe('body-received-at');
    expect(out.event_id).not.toBe('body-event-id');
  });
});

describe('the flow input for other bodies', () => {
  it('__proto__, constructor and prototype keys are not copied onto the trigger', async () => {
    const { send } = await waitTrigger('echo-trigger');
    const out = await send('{"__proto__":{"polluted":true},"constructor":{"x":1},"prototype":"p","safe":1}');
    expect(out.safe).toBe(1);
    for (const key of ['__proto__', 'constructor', 'prototype']) expect(Object.hasOwn(out, key)).toBe(false);
    expect(Object.hasOwn(out.event, '__proto__')).toBe(true); // still there in the event itself
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('a form body: event is an object of its fields; repeated names collect into an array', async () => {
    const { send } = await waitTrigger('echo-trigger');
    const out = await send('MessageSid=SM1&Body=Hello+there&Tag=a&Tag=b', { 'content-type': 'application/x-www-form-urlencoded' });
    expect(out.event).toEqual({ MessageSid: 'SM1', Body: 'Hello there', Tag: ['a', 'b'] });
  });

  it('a multipart body: fields, plus files as {filename, content_type, size, content_base64}', async () => {
    const { send } = await waitTrigger('echo');
    const body = [
      '--b0undary',
      'Content-Disposition: form-data; name="type"',
      '',
      'upload.created',
      '--b0undary',
      'Content-Disposition: form-data; name="doc"; filename="note.txt"',
      'Content-Type: text/plain',
      '',
      'hello file',
      '--b0undary--',
      '',
    ].join('\r\n');
    const out = await send(body, { 'content-type': 'multipart/form-data; boundary=b0undary' });
    expect(out.received).toEqual({
      type: 'upload.created',
      doc: { filename: 'note.txt', content_type: 'text/plain', size: 10, content_base64: Buffer.from('hello file').toString('base64') },
    });
  });

  it('a JSON array body: event is the array; nothing is copied and there is no type or data', async () => {
    const { send } = await waitTrigger('echo-trigger');
    const out = await send('[{"type":"a"},{"data":1}]');
    expect(out.event).toEqual([{ type: 'a' }, { data: 1 }]);
    expect(Object.keys(out).sort()).toEqual(['event', 'event_id', 'headers', 'received_at', 'webhook_id']);
  });
});
