// Batches become events, over HTTP on the local stack: for each sender whose one POST carries
// several events, a POST of three elements of two types, on a trigger filtering one type, runs
// exactly the matching elements, each with its own id; sent again to a deduplicating trigger, none
// runs again; with `split_batches: false` the flow gets the whole POST. Deliveries are shaped as
// the senders' docs show them and signed as the senders sign.
import { createHmac, generateKeyPairSync, sign } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MAX_BATCH_ELEMENTS } from '../../functions/domain/webhooks/batch-elements.js';
import { call, useLocalStack } from '../support/local-stack.js';
import { createTrigger, deliver, TEST_FLOWS_DIR, waitForExecutions } from '../support/webhooks.js';

// A flow whose output is eight copies of its event: a wait-mode batch of them answers more than Lambda carries.
const extraFlows = mkdtempSync(join(tmpdir(), 'flowgate-batch-answers-'));
writeFileSync(join(extraFlows, 'echo-eight-times.asl.json'), JSON.stringify({
  StartAt: 'Echo', States: { Echo: { Type: 'Pass', Parameters: Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`copy${i}.$`, '$.trigger.event'])), End: true } },
}));
const stack = useLocalStack({ flowsDir: [TEST_FLOWS_DIR, extraFlows].join(delimiter) });

const nowSeconds = () => Math.floor(Date.now() / 1000);
const hmac = (key: string | Buffer, content: string, encoding: 'hex' | 'base64') => createHmac('sha256', key).update(content).digest(encoding);

/** One batching sender: its trigger's signature, three elements (types `a`, `b`, `a`), their POST and its signed headers. */
interface BatchSender {
  service: string;
  signature: Record<string, unknown>;
  types: [string, string];
  /** Element `i` of type `type`, with its own id where the sender has one. */
  element(type: string, i: number): unknown;
  body(elements: unknown[]): unknown;
  headers(body: string, url: string): Record<string, string>;
  /** The sender's own id of element `i`, where it has one. */
  id?(i: number): string;
}

const sendgridKeys = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
const ADYEN_KEY = '44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056';
const adyenItem = (eventCode: string, i: number) => {
  const item: Record<string, unknown> = {
    amount: { currency: 'EUR', value: 1000 + i }, eventCode, eventDate: '2024-01-01T01:00:00+01:00', merchantAccountCode: 'YOUR_MERCHANT_ACCOUNT',
    merchantReference: `order-${i}`, pspReference: `PSP000${i}`, success: 'true',
  };
  const signed = [item.pspReference, '', item.merchantAccountCode, item.merchantReference, 1000 + i, 'EUR', eventCode, 'true'].join(':');
  item.additionalData = { hmacSignature: hmac(Buffer.from(ADYEN_KEY, 'hex'), signed, 'base64') };
  return { NotificationRequestItem: item };
};

const SENDERS: BatchSender[] = [
  {
    service: 'sendgrid',
    signature: { service: 'sendgrid', secret: sendgridKeys.publicKey.export({ format: 'der', type: 'spki' }).toString('base64') },
    types: ['delivered', 'open'],
    element: (event, i) => ({ email: `user${i}@example.com`, timestamp: 1513299569, event, sg_event_id: `sg-evt-${i}`, sg_message_id: `msg-${i}` }),
    body: (elements) => elements,
    headers: (body) => {
      const timestamp = String(nowSeconds());
      return { 'x-twilio-email-event-webhook-timestamp': timestamp, 'x-twilio-email-event-webhook-signature': sign('sha256', Buffer.from(timestamp + body), sendgridKeys.privateKey).toString('base64') };
    },
    id: (i) => `sg-evt-${i}`,
  },
  {
    service: 'hubspot',
    signature: { service: 'hubspot', secret: 'hubspot-client-secret' },
    types: ['contact.creation', 'contact.deletion'],
    element: (subscriptionType, i) => ({ eventId: 100 + i, subscriptionId: 25, portalId: 33, appId: 1160452, occurredAt: 1567108765000, subscriptionType, attemptNumber: 0, objectId: 123 + i, changeFlag: 'NEW' }),
    body: (elements) => elements,
    headers: (body, url) => {
      const timestamp = String(Date.now());
      return { 'x-hubspot-request-timestamp': timestamp, 'x-hubspot-signature-v3': hmac('hubspot-client-secret', `POST${url}${body}${timestamp}`, 'base64') };
    },
    id: (i) => String(100 + i),
  },
  {
    service: 'okta',
    signature: { service: 'okta', secret: 'Authorization: okta-batch-secret' },
    types: ['user.session.start', 'user.lifecycle.create'],
    element: (eventType, i) => ({ uuid: `5b8d2f5d-0000-4b9f-a1c1-6f4d3a1c2b3${i}`, published: '2024-01-01T00:00:00.000Z', eventType, version: '0', severity: 'INFO' }),
    body: (events) => ({ eventType: 'com.okta.event_hook', eventTypeVersion: '1.0', cloudEventsVersion: '0.1', source: 'https://example.okta.com/api/v1/eventHooks/who8vt36qfNpCGz9H1e6', eventId: 'b5a188b9-5ece-4636-b041-482ffda96311', data: { events } }),
    headers: () => ({ authorization: 'okta-batch-secret' }),
    id: (i) => `5b8d2f5d-0000-4b9f-a1c1-6f4d3a1c2b3${i}`,
  },
  {
    service: 'microsoft_graph',
    signature: { service: 'microsoft_graph', secret: 'graph-client-state' },
    types: ['created', 'deleted'],
    element: (changeType, i) => ({
      subscriptionId: '7f105c7d-2dc5-4530-97cd-4e7ae6534c07', subscriptionExpirationDateTime: '2030-01-01T00:00:00Z', changeType, resource: `Users/u/messages/m${i}`,
      resourceData: { '@odata.type': '#Microsoft.Graph.Message', id: `m${i}` }, clientState: 'graph-client-state', tenantId: 't',
    }),
    body: (value) => ({ value }),
    headers: () => ({}),
  },
  {
    service: 'meta',
    signature: { service: 'meta', secret: 'meta-batch-app-secret', verify_token: 'meta-batch-verify' },
    types: ['messages', 'statuses'],
    element: (field, i) => ({ field, value: { messaging_product: 'whatsapp', metadata: { phone_number_id: '123' }, n: i } }),
    // Two entries: the first with two changes, the second with one, as Meta groups them.
    body: (changes) => ({ object: 'whatsapp_business_account', entry: [{ id: 'WABA-1', time: 1700000000, changes: changes.slice(0, 2) }, { id: 'WABA-2', time: 1700000001, changes: changes.slice(2) }] }),
    headers: (body) => ({ 'x-hub-signature-256': `sha256=${hmac('meta-batch-app-secret', body, 'hex')}` }),
  },
  {
    service: 'asana',
    signature: { service: 'asana', secret: 'asana-batch-hook-secret' },
    types: ['changed', 'added'],
    element: (action, i) => ({ action, user: { gid: '1', resource_type: 'user' }, created_at: '2024-01-01T00:00:00.000Z', resource: { gid: `12${i}`, resource_type: 'task' }, parent: null }),
    body: (events) => ({ events }),
    headers: (body) => ({ 'x-hook-signature': hmac('asana-batch-hook-secret', body, 'hex') }),
  },
  {
    service: 'adyen',
    signature: { service: 'adyen', secret: ADYEN_KEY },
    types: ['AUTHORISATION', 'REFUND'],
    element: (eventCode, i) => adyenItem(eventCode, i),
    body: (notificationItems) => ({ live: 'false', notificationItems }),
    headers: () => ({}),
    id: (i) => `PSP000${i}:${i === 1 ? 'REFUND' : 'AUTHORISATION'}`,
  },
];

/** Three elements, of types a, b, a; their POST as JSON text. */
function batchOf(sender: BatchSender): string {
  const [a, b] = sender.types;
  return JSON.stringify(sender.body([sender.element(a, 0), sender.element(b, 1), sender.element(a, 2)]));
}

const settled = (list: { status: string }[], count: number) => list.length === count && list.every((e) => e.status !== 'queued' && e.status !== 'running');

describe('a batching sender\'s POST becomes one event per element', () => {
  for (const sender of SENDERS) {
    it(`${sender.service}: a filter on one of two types runs exactly the matching elements, each with its own id; sent again with deduplicate, none runs`, async () => {
      const token = await stack.token(`batches-${sender.service}`);
      const [a, b] = sender.types;
      const trigger = await createTrigger(stack, token, { flow: 'echo-trigger', event_filter: [a], deduplicate: true, signature: sender.signature });
      const body = batchOf(sender);
      const first = await deliver(trigger.url, body, sender.headers(body, trigger.url));
      expect(first.status, first.text).toBe(200);
      expect(first.json).toMatchObject({ status: 'accepted', request_id: expect.any(String) });
      expect(first.json.events.map((e: { status: string }) => e.status)).toEqual(['accepted', 'ignored', 'accepted']);

      const executions = await waitForExecutions(stack, token, trigger.id, (list) => settled(list, 3));
      const byIndex = [...executions].sort((x, y) => x.batch.index - y.batch.index);
      expect(byIndex.map((e) => [e.status, e.type])).toEqual([['succeeded', a], ['ignored', b], ['succeeded', a]]);
      expect(byIndex.map((e) => e.batch)).toEqual([0, 1, 2].map((index) => ({ request_id: first.json.request_id, index, size: 3 })));
      expect(new Set(byIndex.map((e) => e.event_id)).size).toBe(3);
      if (sender.id) expect(byIndex.map((e) => e.event_id)).toEqual([0, 1, 2].map((i) => sender.id!(i)));
      expect(first.json.events.map((e: { event_id: string }) => e.event_id)).toEqual(byIndex.map((e) => e.event_id));
      // The flow got its element alone, with its place in the batch.
      const ran = byIndex[2];
      expect(ran.output).toMatchObject({ type: a, event_id: ran.event_id, batch: { request_id: first.json.request_id, index: 2, size: 3 } });
      expect(ran.output.event).toMatchObject(sender.service === 'meta' ? { field: a, entry: { id: 'WABA-2', time: 1700000001 } } : {});
      // Each element's record shows the POST, stored once.
      const detail = await call(stack, 'GET', `/triggers/${trigger.id}/executions/${ran.execution_id}`, { token });
      expect(detail.json.data.request.body_bytes).toBe(Buffer.byteLength(body));

      // The same POST again (signed anew where the sender signs a time): every element a duplicate or ignored, no flow runs.
      const again = await deliver(trigger.url, body, sender.headers(body, trigger.url));
      expect(again.status, again.text).toBe(200);
      expect(again.json.events.map((e: { status: string }) => e.status)).toEqual(['duplicate', 'ignored', 'duplicate']);
      const after = await waitForExecutions(stack, token, trigger.id, (list) => settled(list, 6));
      expect(after.filter((e) => e.status === 'succeeded')).toHaveLength(2);
      expect(after.filter((e) => e.status === 'duplicate').map((e) => e.event_id).sort()).toEqual([byIndex[0].event_id, byIndex[2].event_id].sort());
    });

    it(`${sender.service}: with split_batches false the flow gets the whole POST as one event`, async () => {
      const token = await stack.token(`batches-whole-${sender.service}`);
      const trigger = await createTrigger(stack, token, { flow: 'echo-trigger', split_batches: false, signature: sender.signature });
      expect(trigger.split_batches).toBe(false);
      const body = batchOf(sender);
      const res = await deliver(trigger.url, body, sender.headers(body, trigger.url));
      expect(res.status, res.text).toBe(200);
      const [execution] = await waitForExecutions(stack, token, trigger.id, (list) => settled(list, 1));
      expect(execution.status).toBe('succeeded');
      expect(execution.batch).toBeUndefined();
      expect(execution.output.event).toEqual(JSON.parse(body).value !== undefined && sender.service === 'microsoft_graph'
        ? { value: JSON.parse(body).value.map((item: Record<string, unknown>) => ({ ...item, clientState: '[redacted]' })) }
        : JSON.parse(body));
    });
  }

  it('split_batches is a boolean: anything else is 400; PATCH turns it on and off', async () => {
    const token = await stack.token('batches-settings');
    const trigger = await createTrigger(stack, token, { flow: 'echo', signature: SENDERS[0]!.signature });
    expect(trigger.split_batches).toBe(true);
    const refused = await call(stack, 'PATCH', `/triggers/${trigger.id}`, { token, body: { split_batches: 'no' } });
    expect(refused.status).toBe(400);
    expect(refused.json.error).toBe('validation_error');
    const off = await call(stack, 'PATCH', `/triggers/${trigger.id}`, { token, body: { split_batches: false } });
    expect(off.json.data.split_batches).toBe(false);
    const on = await call(stack, 'PATCH', `/triggers/${trigger.id}`, { token, body: { split_batches: true } });
    expect(on.json.data.split_batches).toBe(true);
  });

  it('sendgrid, wait mode: the answer is the flows\' outputs as a JSON array in element order, an ignored element as its status', async () => {
    const sender = SENDERS[0]!;
    const token = await stack.token('batches-wait');
    const trigger = await createTrigger(stack, token, { flow: 'echo', response_mode: 'wait', event_filter: ['delivered'], signature: sender.signature });
    const body = batchOf(sender);
    const res = await deliver(trigger.url, body, sender.headers(body, trigger.url));
    expect(res.status, res.text).toBe(200);
    expect(res.json).toEqual([
      expect.objectContaining({ event_id: 'sg-evt-0', received: expect.objectContaining({ event: 'delivered' }) }),
      { status: 'ignored', event_id: 'sg-evt-1' },
      expect.objectContaining({ event_id: 'sg-evt-2' }),
    ]);
  });

  it('a batch element replays alone: the replay runs its element, not the whole POST', async () => {
    const sender = SENDERS[0]!;
    const token = await stack.token('batches-replay');
    const trigger = await createTrigger(stack, token, { flow: 'echo-trigger', signature: sender.signature });
    const body = batchOf(sender);
    expect((await deliver(trigger.url, body, sender.headers(body, trigger.url))).status).toBe(200);
    const executions = await waitForExecutions(stack, token, trigger.id, (list) => settled(list, 3));
    const second = executions.find((e) => e.batch.index === 1);
    const replayed = await call(stack, 'POST', `/triggers/${trigger.id}/executions/${second.execution_id}/replay`, { token });
    expect(replayed.status, replayed.text).toBeLessThan(300);
    const after = await waitForExecutions(stack, token, trigger.id, (list) => settled(list, 4));
    const replay = after.find((e) => e.replay_of === second.execution_id);
    expect(replay).toMatchObject({ status: 'succeeded', event_id: 'sg-evt-1', type: 'open', batch: second.batch });
    expect(replay.output.event).toMatchObject({ sg_event_id: 'sg-evt-1', event: 'open' });
  });

  it(`a POST of more than ${MAX_BATCH_ELEMENTS} elements is refused 413 with what to do, recorded, and runs nothing; with split_batches false it is taken whole`, async () => {
    const sender = SENDERS[1]!; // HubSpot: its body is the array itself, so any count is a genuine shape
    const token = await stack.token('batches-cap');
    const trigger = await createTrigger(stack, token, { flow: 'echo-trigger', signature: sender.signature });
    // Small elements (an id and a type), so the whole POST still fits a flow's input below.
    const body = JSON.stringify(Array.from({ length: MAX_BATCH_ELEMENTS + 1 }, (_, i) => ({ eventId: i, subscriptionType: sender.types[i % 2] })));
    const refused = await deliver(trigger.url, body, sender.headers(body, trigger.url));
    expect(refused.status, refused.text).toBe(413);
    expect(refused.json).toEqual({ error: 'payload_too_large', message: expect.stringMatching(new RegExp(`at most ${MAX_BATCH_ELEMENTS} events .* carries ${MAX_BATCH_ELEMENTS + 1}.*split_batches`)) });
    const [record] = await waitForExecutions(stack, token, trigger.id, (list) => list.length === 1);
    expect(record).toMatchObject({ status: 'refused', error: 'payload_too_large' });

    // A trigger that does not split takes the same POST whole.
    const whole = await createTrigger(stack, token, { flow: 'echo-trigger', split_batches: false, signature: sender.signature });
    const taken = await deliver(whole.url, body, sender.headers(body, whole.url));
    expect(taken.status, taken.text).toBe(200);
    const [execution] = await waitForExecutions(stack, token, whole.id, (list) => settled(list, 1));
    expect(execution.status).toBe('succeeded');
    expect(execution.output.event).toHaveLength(MAX_BATCH_ELEMENTS + 1);
  });
  it('one signed element copied 1,000 times into a POST runs once, with deduplicate off (#41)', async () => {
    const sender = SENDERS[0]!; // SendGrid: an array of events, each with its signed sg_event_id
    const token = await stack.token('batches-copies');
    const trigger = await createTrigger(stack, token, { flow: 'echo-trigger', signature: sender.signature });
    expect(trigger.deduplicate).toBe(false);
    const element = sender.element('delivered', 7);
    const body = JSON.stringify(Array.from({ length: MAX_BATCH_ELEMENTS }, () => element));
    const res = await deliver(trigger.url, body, sender.headers(body, trigger.url));
    expect(res.status, res.text).toBe(200);
    const statuses = res.json.events.map((e: { status: string }) => e.status);
    expect(statuses[0]).toBe('accepted');
    expect(statuses.slice(1).every((status: string) => status === 'duplicate')).toBe(true);
    expect(new Set(res.json.events.map((e: { event_id: string }) => e.event_id))).toEqual(new Set(['sg-evt-7']));
    // Every record is written before the answer: one event, one run.
    const executions = await waitForExecutions(stack, token, trigger.id, (list) => settled(list, 1));
    expect(executions).toHaveLength(1);
    expect(executions[0]).toMatchObject({ status: 'succeeded', event_id: 'sg-evt-7' });

    // An element without a signed id (Asana) collapses on its content: the same element twice is one run, two different ones two.
    const asana = SENDERS.find((s) => s.service === 'asana')!;
    const other = await createTrigger(stack, token, { flow: 'echo-trigger', signature: asana.signature });
    const events = [asana.element('changed', 1), asana.element('changed', 1), asana.element('changed', 2)];
    const asanaBody = JSON.stringify(asana.body(events));
    const answered = await deliver(other.url, asanaBody, asana.headers(asanaBody, other.url));
    expect(answered.json.events.map((e: { status: string }) => e.status)).toEqual(['accepted', 'duplicate', 'accepted']);
    expect(await waitForExecutions(stack, token, other.id, (list) => settled(list, 2))).toHaveLength(2);
  }, 60_000);

  it('a batch with one element too large for a flow is refused 413 naming it, and queues nothing of the POST (#41)', async () => {
    const sender = SENDERS[0]!;
    const token = await stack.token('batches-oversized');
    const trigger = await createTrigger(stack, token, { flow: 'echo-trigger', signature: sender.signature });
    const elements = [sender.element('delivered', 0), { ...(sender.element('delivered', 1) as object), note: 'x'.repeat(300_000) }, sender.element('delivered', 2)];
    const body = JSON.stringify(elements);
    const refused = await deliver(trigger.url, body, sender.headers(body, trigger.url));
    expect(refused.status, refused.text).toBe(413);
    expect(refused.json).toEqual({ error: 'payload_too_large', message: expect.stringMatching(/^elements\[1\] of the batch \(event sg-evt-1\).*nothing of this POST was queued/) });
    // The refusal is recorded; no element was: the sender's retry is the first run of each.
    const [record, ...others] = await waitForExecutions(stack, token, trigger.id, (list) => list.length >= 1);
    expect(others).toEqual([]);
    expect(record).toMatchObject({ status: 'refused', error: 'payload_too_large' });

    // An element that is not an object is a 400 naming it, again before anything is queued.
    const shapes = JSON.stringify([sender.element('delivered', 3), 'not an event']);
    const bad = await deliver(trigger.url, shapes, sender.headers(shapes, trigger.url));
    expect(bad.status, bad.text).toBe(400);
    expect(bad.json).toEqual({ error: 'validation_error', message: expect.stringMatching(/^elements\[1\] of the batch is not a JSON object/) });
    const after = await waitForExecutions(stack, token, trigger.id, (list) => list.length >= 2);
    expect(after.map((e) => e.status)).toEqual(['refused', 'refused']);
  });
  it('a wait-mode batch whose flows\' outputs together pass Lambda\'s 6 MB answers each element\'s status instead (#41)', async () => {
    const sender = SENDERS[0]!;
    const token = await stack.token('batches-wait-big');
    const trigger = await createTrigger(stack, token, { flow: 'echo-eight-times', response_mode: 'wait', signature: sender.signature });
    // 50 elements of 18 KB: a 0.9 MB POST whose outputs are 8 × 0.9 MB.
    const elements = Array.from({ length: 50 }, (_, i) => ({ ...(sender.element('delivered', i) as object), note: 'x'.repeat(18_000) }));
    const body = JSON.stringify(elements);
    const res = await deliver(trigger.url, body, sender.headers(body, trigger.url));
    expect(res.status, res.text.slice(0, 300)).toBe(200);
    expect(Buffer.byteLength(JSON.stringify(res.text))).toBeLessThan(6 * 1024 * 1024);
    expect(res.json).toEqual(Array.from({ length: 50 }, (_, i) => ({ status: 'succeeded', event_id: `sg-evt-${i}`, output_omitted: true })));
    // The outputs are kept with the executions.
    const executions = await waitForExecutions(stack, token, trigger.id, (list) => settled(list, 50));
    expect(executions.every((e) => e.status === 'succeeded')).toBe(true);
  }, 120_000);
});
