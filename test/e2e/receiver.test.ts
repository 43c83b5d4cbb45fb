import { describe, expect, it } from 'vitest';
import { call, useLocalStack } from '../support/local-stack.js';
import { signGithub, signSlack, signStripe } from '../support/signers.js';
import { createTrigger, deliver, TEST_FLOWS_DIR } from '../support/webhooks.js';

const MAX_BODY_BYTES = 2048;
const stack = useLocalStack({ flowsDir: TEST_FLOWS_DIR, env: { TRIGGER_CACHE_TTL_MS: '0', WEBHOOK_MAX_BODY_BYTES: String(MAX_BODY_BYTES) } });

const SECRET = 'receiver-test-secret';
// Stripe's secrets start with whsec_: a trigger refuses any other (issue 43).
const STRIPE_SECRET = 'whsec_receiver-test-secret';
const EVENT = JSON.stringify({ id: 'evt_1', type: 'invoice.paid' });
const nowSeconds = () => Math.floor(Date.now() / 1000);
/** A well-formed webhook id (24 bytes, base64url) that no trigger has. */
const UNKNOWN_ID = Buffer.alloc(24, 1).toString('base64url');

/** A JSON body of exactly `bytes` bytes. */
const jsonOfSize = (bytes: number) => {
  const shell = JSON.stringify({ type: 'invoice.paid', pad: '' });
  return JSON.stringify({ type: 'invoice.paid', pad: 'x'.repeat(bytes - shell.length) });
};
const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);

/** POST with exactly the headers given (fetch adds no content type for a byte body). */
async function post(url: string, body: Uint8Array, headers: Record<string, string> = {}) {
  const response = await fetch(url, { method: 'POST', headers, body });
  return { status: response.status, json: await response.json() };
}

async function executionsOf(triggerId: string, token: string) {
  return (await call(stack, 'GET', `/triggers/${triggerId}/executions`, { token })).json.data.executions as { status: string; type?: string; event_id: string }[];
}

describe('1. webhook id, then method', () => {
  it('an unknown webhook id is 404 not_found', async () => {
    const res = await deliver(`${stack.webhookBaseUrl}/${UNKNOWN_ID}`, EVENT);
    expect(res.status).toBe(404);
    expect(res.json).toEqual({ error: 'not_found', message: expect.any(String) });
  });

  it('a malformed webhook id is 404 not_found', async () => {
    expect((await deliver(`${stack.webhookBaseUrl}/not-a-webhook-id`, EVENT)).status).toBe(404);
  });

  it.each(['GET', 'PUT', 'DELETE', 'PATCH'])('a known webhook id with %s is 405 with Allow: POST', async (method) => {
    const trigger = await createTrigger(stack, await stack.token('order-owner'), { flow: 'echo' });
    const res = await deliver(trigger.url, EVENT, {}, method);
    expect(res.status).toBe(405);
    expect(res.json).toEqual({ error: 'method_not_allowed', message: expect.any(String) });
    expect(res.headers.get('allow')).toBe('POST');
  });

  it('an unknown webhook id with GET is 404, not 405', async () => {
    const res = await deliver(`${stack.webhookBaseUrl}/${UNKNOWN_ID}`, '', {}, 'GET');
    expect(res.status).toBe(404);
    expect(res.json).toEqual({ error: 'not_found', message: expect.any(String) });
  });

  it('a disabled trigger with GET is 404, not 405', async () => {
    const trigger = await createTrigger(stack, await stack.token('order-owner'), { flow: 'echo', enabled: false });
    expect((await deliver(trigger.url, '', {}, 'GET')).status).toBe(404);
  });
});

describe('2. body size (WEBHOOK_MAX_BODY_BYTES)', () => {
  it('a body over the limit is 413 payload_too_large', async () => {
    const trigger = await createTrigger(stack, await stack.token('size-owner'), { flow: 'echo' });
    const res = await deliver(trigger.url, jsonOfSize(MAX_BODY_BYTES + 1));
    expect(res.status).toBe(413);
    expect(res.json).toEqual({ error: 'payload_too_large', message: expect.any(String) });
  });

  it('a body of exactly the limit is accepted', async () => {
    const trigger = await createTrigger(stack, await stack.token('size-owner'), { flow: 'echo' });
    const body = jsonOfSize(MAX_BODY_BYTES);
    expect(Buffer.byteLength(body)).toBe(MAX_BODY_BYTES);
    expect((await deliver(trigger.url, body)).json).toMatchObject({ status: 'accepted' });
  });

  it('the limit counts bytes, not characters', async () => {
    const trigger = await createTrigger(stack, await stack.token('size-owner'), { flow: 'echo' });
    const body = JSON.stringify({ pad: 'é'.repeat(1100) }); // 1100 characters, 2200 bytes
    expect((await deliver(trigger.url, body)).status).toBe(413);
  });
});

describe('3. API key', () => {
  it.each([
    ['missing', {}, ''],
    ['wrong in X-Api-Key', { 'x-api-key': 'fgk_wrong' }, ''],
    ['wrong in ?api_key', {}, '?api_key=fgk_wrong'],
  ])('%s is 401 unauthorized', async (_why, headers, query) => {
    const trigger = await createTrigger(stack, await stack.token('key-owner'), { flow: 'echo', api_key_enabled: true });
    const res = await deliver(trigger.url + query, EVENT, headers);
    expect(res.status).toBe(401);
    expect(res.json).toEqual({ error: 'unauthorized', message: expect.any(String) });
  });

  it('is accepted from the X-Api-Key header', async () => {
    const trigger = await createTrigger(stack, await stack.token('key-owner'), { flow: 'echo', api_key_enabled: true });
    expect((await deliver(trigger.url, EVENT, { 'X-Api-Key': trigger.api_key! })).json).toEqual({ status: 'accepted', event_id: 'evt_1' });
  });

  it('is accepted from the api_key query parameter', async () => {
    const trigger = await createTrigger(stack, await stack.token('key-owner'), { flow: 'echo', api_key_enabled: true });
    expect((await deliver(`${trigger.url}?api_key=${trigger.api_key}`, EVENT)).json).toEqual({ status: 'accepted', event_id: 'evt_1' });
  });

  it('when both are sent, the query parameter is the one checked', async () => {
    const trigger = await createTrigger(stack, await stack.token('key-owner'), { flow: 'echo', api_key_enabled: true });
    expect((await deliver(`${trigger.url}?api_key=fgk_wrong`, EVENT, { 'x-api-key': trigger.api_key! })).status).toBe(401);
  });

  it('another trigger\'s key is 401', async () => {
    const token = await stack.token('key-owner');
    const [mine, other] = await Promise.all([1, 2].map(() => createTrigger(stack, token, { flow: 'echo', api_key_enabled: true })));
    expect((await deliver(mine!.url, EVENT, { 'x-api-key': other!.api_key! })).status).toBe(401);
  });
});

describe('4. signature', () => {
  const stripeTrigger = async () => createTrigger(stack, await stack.token('sig-owner'), { flow: 'echo', signature: { service: 'stripe', secret: STRIPE_SECRET } });

  it('a missing signature is 401 invalid_signature', async () => {
    const res = await deliver((await stripeTrigger()).url, EVENT);
    expect(res.status).toBe(401);
    expect(res.json).toEqual({ error: 'invalid_signature', message: expect.any(String) });
  });

  it('a wrong signature is 401 invalid_signature', async () => {
    const res = await deliver((await stripeTrigger()).url, EVENT, signStripe({ secret: 'another-secret', body: EVENT, timestamp: nowSeconds() }));
    expect(res.json).toEqual({ error: 'invalid_signature', message: expect.any(String) });
  });

  it('a stale signature (over 300 s) is 401 invalid_signature', async () => {
    const res = await deliver((await stripeTrigger()).url, EVENT, signStripe({ secret: STRIPE_SECRET, body: EVENT, timestamp: nowSeconds() - 301 }));
    expect(res.json).toEqual({ error: 'invalid_signature', message: expect.any(String) });
  });

  it('a malformed signature header is 401 invalid_signature', async () => {
    const res = await deliver((await stripeTrigger()).url, EVENT, { 'stripe-signature': 'garbage' });
    expect(res.json).toEqual({ error: 'invalid_signature', message: expect.any(String) });
  });

  it('a valid, fresh signature is accepted', async () => {
    const res = await deliver((await stripeTrigger()).url, EVENT, signStripe({ secret: STRIPE_SECRET, body: EVENT, timestamp: nowSeconds() }));
    expect(res.json).toEqual({ status: 'accepted', event_id: 'evt_1' });
  });
});

describe('5. content type and body', () => {
  const plainTrigger = async () => createTrigger(stack, await stack.token('body-owner'), { flow: 'echo' });

  it('text/plain is 415 unsupported_media_type', async () => {
    const res = await deliver((await plainTrigger()).url, EVENT, { 'content-type': 'text/plain' });
    expect(res.status).toBe(415);
    expect(res.json).toEqual({ error: 'unsupported_media_type', message: 'send JSON, a urlencoded form or a multipart form' });
  });

  it('a request without a content type is 415', async () => {
    expect((await post((await plainTrigger()).url, Buffer.from(EVENT))).status).toBe(415);
  });

  it.each([
    ['application/json; charset=utf-8', EVENT],
    ['Application/JSON', EVENT],
    ['application/x-www-form-urlencoded', 'type=invoice.paid&id=evt_1'],
    ['application/x-www-form-urlencoded; charset=UTF-8', 'type=invoice.paid&id=evt_1'],
    ['multipart/form-data; boundary=XyZ', '--XyZ\r\nContent-Disposition: form-data; name="type"\r\n\r\ninvoice.paid\r\n--XyZ--\r\n'],
  ])('%s is accepted', async (contentType, body) => {
    expect((await deliver((await plainTrigger()).url, body, { 'content-type': contentType })).json).toMatchObject({ status: 'accepted' });
  });

  it('truncated JSON is 400 validation_error', async () => {
    const res = await deliver((await plainTrigger()).url, EVENT.slice(0, -3));
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ error: 'validation_error', message: 'the body is not valid JSON' });
  });

  it('JSON nested 257 levels deep is 400 validation_error', async () => {
    const res = await deliver((await plainTrigger()).url, nested(257));
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ error: 'validation_error', message: 'the body\'s JSON is nested more than 256 deep' });
  });

  it('JSON nested 256 levels deep is accepted', async () => {
    expect((await deliver((await plainTrigger()).url, nested(256))).json).toMatchObject({ status: 'accepted' });
  });

  it('a JSON body that is not valid UTF-8 is 400', async () => {
    const res = await post((await plainTrigger()).url, Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]), { 'content-type': 'application/json' });
    expect(res.status).toBe(400);
  });

  it('a multipart body without a boundary is 400', async () => {
    const res = await deliver((await plainTrigger()).url, '--x\r\n\r\n--x--', { 'content-type': 'multipart/form-data' });
    expect(res.status).toBe(400);
  });

  it('an empty JSON body is 400', async () => {
    expect((await deliver((await plainTrigger()).url, '')).status).toBe(400);
  });
});

describe('6. Slack URL verification', () => {
  const CHALLENGE = JSON.stringify({ token: 'legacy', challenge: '3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P', type: 'url_verification' });

  it('is answered at once with 200 {"challenge"}, runs no flow and is recorded as a handshake (#23)', async () => {
    const token = await stack.token('slack-owner');
    const trigger = await createTrigger(stack, token, { flow: 'echo' });
    const res = await deliver(trigger.url, CHALLENGE);
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ challenge: '3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P' });
    expect((await executionsOf(trigger.id, token)).map((e: { status: string }) => e.status)).toEqual(['handshake']);
  });

  it('on a Slack-signed trigger, an unsigned challenge is 401 invalid_signature', async () => {
    const trigger = await createTrigger(stack, await stack.token('slack-owner'), { flow: 'echo', signature: { service: 'slack', secret: SECRET } });
    const res = await deliver(trigger.url, CHALLENGE);
    expect(res.status).toBe(401);
    expect(res.json).toEqual({ error: 'invalid_signature', message: expect.any(String) });
  });

  it('on a Slack-signed trigger, a signed challenge is answered', async () => {
    const trigger = await createTrigger(stack, await stack.token('slack-owner'), { flow: 'echo', signature: { service: 'slack', secret: SECRET } });
    const res = await deliver(trigger.url, CHALLENGE, signSlack({ secret: SECRET, body: CHALLENGE, timestamp: nowSeconds() }));
    expect(res.json).toEqual({ challenge: '3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P' });
  });

  it('is answered even when an event filter is set (it has no event type to filter)', async () => {
    const trigger = await createTrigger(stack, await stack.token('slack-owner'), { flow: 'echo', event_filter: ['app_mention'] });
    expect((await deliver(trigger.url, CHALLENGE)).json).toHaveProperty('challenge');
  });

  it('a form body with url_verification fields is not a challenge', async () => {
    const trigger = await createTrigger(stack, await stack.token('slack-owner'), { flow: 'echo' });
    const res = await deliver(trigger.url, 'type=url_verification&challenge=abc', { 'content-type': 'application/x-www-form-urlencoded' });
    expect(res.json).toMatchObject({ status: 'accepted' });
  });
});

describe('7. event filter', () => {
  it('an exact entry passes its type and ignores others with 200 {"status":"ignored"}', async () => {
    const trigger = await createTrigger(stack, await stack.token('filter-owner'), { flow: 'echo', event_filter: ['invoice.paid'] });
    expect((await deliver(trigger.url, JSON.stringify({ type: 'invoice.paid' }))).json).toMatchObject({ status: 'accepted' });
    const res = await deliver(trigger.url, JSON.stringify({ type: 'invoice.created' }));
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ status: 'ignored', event_id: expect.any(String), reason: expect.any(String) });
  });

  it('a trailing * matches by prefix', async () => {
    const trigger = await createTrigger(stack, await stack.token('filter-owner'), { flow: 'echo', event_filter: ['customer.*'] });
    expect((await deliver(trigger.url, JSON.stringify({ type: 'customer.created' }))).json).toMatchObject({ status: 'accepted' });
    expect((await deliver(trigger.url, JSON.stringify({ type: 'customer.subscription.deleted' }))).json).toMatchObject({ status: 'accepted' });
    expect((await deliver(trigger.url, JSON.stringify({ type: 'customers' }))).json).toEqual({ status: 'ignored', event_id: expect.any(String), reason: expect.any(String) });
    expect((await deliver(trigger.url, JSON.stringify({ type: 'invoice.paid' }))).json).toEqual({ status: 'ignored', event_id: expect.any(String), reason: expect.any(String) });
  });

  it('an event without a type is ignored while a filter is set', async () => {
    const trigger = await createTrigger(stack, await stack.token('filter-owner'), { flow: 'echo', event_filter: ['customer.*'] });
    expect((await deliver(trigger.url, JSON.stringify({ id: 'evt_untyped' }))).json).toEqual({ status: 'ignored', event_id: expect.any(String), reason: expect.any(String) });
  });

  it('an ignored delivery is recorded as an ignored execution with its type and event id', async () => {
    const token = await stack.token('filter-owner');
    const trigger = await createTrigger(stack, token, { flow: 'echo', event_filter: ['customer.*'] });
    await deliver(trigger.url, JSON.stringify({ id: 'evt_skip', type: 'invoice.paid' }));
    expect(await executionsOf(trigger.id, token)).toEqual([
      { execution_id: expect.any(String), event_id: 'evt_skip', received_at: expect.any(String), type: 'invoice.paid', status: 'ignored', attempts: 0, timeline: [] },
    ]);
  });
});

describe('the checks run in the documented order', () => {
  it('unknown id before size: an oversized body to an unknown id is 404', async () => {
    expect((await deliver(`${stack.webhookBaseUrl}/${UNKNOWN_ID}`, jsonOfSize(MAX_BODY_BYTES + 1))).status).toBe(404);
  });

  it('method before size: an oversized PUT to a known id is 405', async () => {
    const trigger = await createTrigger(stack, await stack.token('order-owner'), { flow: 'echo' });
    expect((await deliver(trigger.url, jsonOfSize(MAX_BODY_BYTES + 1), {}, 'PUT')).status).toBe(405);
  });

  it('size before API key: oversized and without a key is 413', async () => {
    const trigger = await createTrigger(stack, await stack.token('order-owner'), { flow: 'echo', api_key_enabled: true });
    expect((await deliver(trigger.url, jsonOfSize(MAX_BODY_BYTES + 1))).status).toBe(413);
  });

  it('size before signature: oversized and unsigned is 413', async () => {
    const trigger = await createTrigger(stack, await stack.token('order-owner'), { flow: 'echo', signature: { service: 'github', secret: SECRET } });
    expect((await deliver(trigger.url, jsonOfSize(MAX_BODY_BYTES + 1))).status).toBe(413);
  });

  it('API key before signature: wrong key and unsigned is 401 unauthorized', async () => {
    const trigger = await createTrigger(stack, await stack.token('order-owner'), { flow: 'echo', api_key_enabled: true, signature: { service: 'github', secret: SECRET } });
    expect((await deliver(trigger.url, EVENT, { 'x-api-key': 'fgk_wrong' })).json).toEqual({ error: 'unauthorized', message: expect.any(String) });
  });

  it('API key before content type: wrong key and text/plain is 401, not 415', async () => {
    const trigger = await createTrigger(stack, await stack.token('order-owner'), { flow: 'echo', api_key_enabled: true });
    const res = await deliver(trigger.url, 'hello', { 'content-type': 'text/plain', 'x-api-key': 'fgk_wrong' });
    expect(res.status).toBe(401);
    expect(res.json).toEqual({ error: 'unauthorized', message: expect.any(String) });
  });

  it('signature before content type: unsigned text/plain is 401 invalid_signature, signed text/plain is 415', async () => {
    const trigger = await createTrigger(stack, await stack.token('order-owner'), { flow: 'echo', signature: { service: 'github', secret: SECRET } });
    expect((await deliver(trigger.url, 'hello', { 'content-type': 'text/plain' })).json).toEqual({ error: 'invalid_signature', message: expect.any(String) });
    const signed = await signGithub({ secret: SECRET, body: 'hello' });
    expect((await deliver(trigger.url, 'hello', { ...signed, 'content-type': 'text/plain' })).json).toEqual({ error: 'unsupported_media_type', message: expect.any(String) });
  });

  it('signature before body: a signed but truncated JSON body is 400, unsigned is 401', async () => {
    const trigger = await createTrigger(stack, await stack.token('order-owner'), { flow: 'echo', signature: { service: 'github', secret: SECRET } });
    const broken = '{"type":';
    expect((await deliver(trigger.url, broken)).status).toBe(401);
    expect((await deliver(trigger.url, broken, await signGithub({ secret: SECRET, body: broken }))).json).toEqual({ error: 'validation_error', message: 'the body is not valid JSON' });
  });

  it('API key before the Slack challenge: a challenge without the key is 401', async () => {
    const trigger = await createTrigger(stack, await stack.token('order-owner'), { flow: 'echo', api_key_enabled: true });
    expect((await deliver(trigger.url, JSON.stringify({ type: 'url_verification', challenge: 'c' }))).status).toBe(401);
  });

  it('rejected requests (4xx) are recorded as refused, with the code answered, and run no flow', async () => {
    const token = await stack.token('order-owner');
    const trigger = await createTrigger(stack, token, { flow: 'echo', api_key_enabled: true, event_filter: ['x'] });
    await deliver(trigger.url, EVENT);
    await deliver(trigger.url, jsonOfSize(MAX_BODY_BYTES + 1), { 'x-api-key': trigger.api_key! });
    await deliver(trigger.url, 'hello', { 'content-type': 'text/plain', 'x-api-key': trigger.api_key! });
    await deliver(trigger.url, '{', { 'x-api-key': trigger.api_key! });
    const executions = (await executionsOf(trigger.id, token)) as { status: string; error?: string }[];
    expect(executions.map((e) => [e.status, e.error])).toEqual([
      ['refused', 'validation_error'], ['refused', 'unsupported_media_type'], ['refused', 'payload_too_large'], ['refused', 'unauthorized'],
    ]);
  });
});
