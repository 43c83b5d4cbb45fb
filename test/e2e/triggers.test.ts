import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { call, useLocalStack } from '../support/local-stack.js';
import { signGithub } from '../support/signers.js';
import { createTrigger, DEFAULT_TRIGGER_SETTINGS, deliver, TEST_FLOWS_DIR } from '../support/webhooks.js';

// No receiver cache: every change must show at the URL at once (the cached case is in triggers-cache.test.ts).
const stack = useLocalStack({ flowsDir: TEST_FLOWS_DIR, env: { TRIGGER_CACHE_TTL_MS: '0' } });

const SIGNING_SECRET = 'whsec_do-not-leak-0123456789abcdef';
const ROTATED_SECRET = 'whsec_rotated-do-not-leak-fedcba9876543210';
const sha256Hex = (text: string) => createHash('sha256').update(text).digest('hex');
const EVENT = JSON.stringify({ id: 'evt_1', type: 'invoice.paid' });

describe('POST /triggers', () => {
  it('creates a trigger: 201 with the documented defaults', async () => {
    const token = await stack.token('create-owner');
    const res = await call(stack, 'POST', '/triggers', { token, body: { flow: 'echo' } });
    expect(res.status).toBe(201);
    expect(res.json.data).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{32}$/),
      webhook_id: expect.any(String),
      url: expect.any(String),
      name: 'echo',
      name_is_default: true,
      description: null,
      ...DEFAULT_TRIGGER_SETTINGS,
      split_batches: true,
      answer_from_listener: false,
      previous_api_key_expires_at: null,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      updated_at: expect.any(String),
    });
  });

  it('url is the webhook base URL, a slash and the webhook_id', async () => {
    const trigger = await createTrigger(stack, await stack.token('create-owner'), { flow: 'echo' });
    // On the receiver's function URL, where a delivery is no API request to pay for.
    expect(trigger.url).toBe(`${stack.webhookFunctionUrl}${trigger.webhook_id}`);
  });

  it('webhook_id carries at least 128 random bits and differs per trigger', async () => {
    const token = await stack.token('create-owner');
    const ids = await Promise.all([1, 2, 3].map(async () => (await createTrigger(stack, token, { flow: 'echo' })).webhook_id));
    for (const id of ids) {
      expect(id).toMatch(/^[A-Za-z0-9_-]+$/);
      expect(Buffer.from(id, 'base64url').length * 8).toBeGreaterThanOrEqual(128);
    }
    expect(new Set(ids).size).toBe(3);
  });

  it('a new trigger answers at its URL at once', async () => {
    const trigger = await createTrigger(stack, await stack.token('create-owner'), { flow: 'echo' });
    const res = await deliver(trigger.url, EVENT);
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ status: 'accepted', event_id: 'evt_1' });
  });

  it('with api_key_enabled, returns the key this once and the receiver requires it', async () => {
    const token = await stack.token('create-owner');
    const trigger = await createTrigger(stack, token, { flow: 'echo', api_key_enabled: true });
    expect(trigger.api_key).toMatch(/^fgk_[A-Za-z0-9_-]{43}$/);
    expect((await deliver(trigger.url, EVENT)).status).toBe(401);
    expect((await deliver(trigger.url, EVENT, { 'x-api-key': trigger.api_key! })).status).toBe(200);
    const read = await call(stack, 'GET', `/triggers/${trigger.id}`, { token });
    expect(read.json.data.api_key).toBeUndefined();
  });
});

describe('secrets and keys are never shown', () => {
  it('no response of the trigger API contains the signing secret, the API key or its hash', async () => {
    const token = await stack.token('secret-owner');
    const createdRes = await call(stack, 'POST', '/triggers', {
      token,
      body: { flow: 'echo', api_key_enabled: true, signature: { service: 'github', secret: SIGNING_SECRET } },
    });
    const { id, api_key: apiKey } = createdRes.json.data;
    const hash = sha256Hex(apiKey);
    const responses = [
      createdRes,
      await call(stack, 'GET', '/triggers', { token }),
      await call(stack, 'GET', `/triggers/${id}`, { token }),
      await call(stack, 'PATCH', `/triggers/${id}`, { token, body: { event_filter: ['push'] } }),
      await call(stack, 'POST', `/triggers/${id}/regenerate-url`, { token }),
      await call(stack, 'POST', `/triggers/${id}/rotate-signing-secret`, { token, body: { secret: ROTATED_SECRET } }),
      await call(stack, 'GET', `/triggers/${id}`, { token }),
      await call(stack, 'GET', `/triggers/${id}/executions`, { token }),
    ];
    for (const res of responses) {
      expect(res.status).toBeLessThan(300);
      expect(res.text).not.toContain(SIGNING_SECRET);
      expect(res.text).not.toContain(ROTATED_SECRET);
      expect(res.text).not.toContain(hash);
      // `signature.previous_secret_expires_at` names the secret; no field holds one.
      expect(res.text).not.toMatch(/"secret"|secret_sealed|api_key_hash/);
    }
    // The key itself only in the response that generated it.
    for (const res of responses.slice(1)) expect(res.text).not.toContain(apiKey);
  });

  it('GET shows the signature service and custom settings, not the secret', async () => {
    const token = await stack.token('secret-owner');
    const custom = { algorithm: 'sha256', header: 'x-sig', encoding: 'hex', prefix: 'sha256=' };
    const trigger = await createTrigger(stack, token, { flow: 'echo', signature: { service: 'custom', secret: SIGNING_SECRET, custom } });
    const read = await call(stack, 'GET', `/triggers/${trigger.id}`, { token });
    expect(read.json.data.signature).toEqual({ service: 'custom', custom, previous_secret_expires_at: null });
  });
});

describe('GET /triggers', () => {
  it('lists only the caller\'s triggers, paginated with limit and cursor', async () => {
    const token = await stack.token('list-owner');
    const mine = await Promise.all([1, 2, 3].map(() => createTrigger(stack, token, { flow: 'echo' })));
    await createTrigger(stack, await stack.token('list-other'), { flow: 'echo' });
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await call(stack, 'GET', `/triggers?limit=2${cursor ? `&cursor=${cursor}` : ''}`, { token });
      expect(res.status).toBe(200);
      expect(res.json.data.triggers.length).toBeLessThanOrEqual(2);
      seen.push(...res.json.data.triggers.map((t: { id: string }) => t.id));
      cursor = res.json.data.next_cursor;
      pages++;
    } while (cursor && pages < 5);
    expect(seen.sort()).toEqual(mine.map((t) => t.id).sort());
    expect(pages).toBeGreaterThanOrEqual(2);
  });

  it('refuses a limit over 500', async () => {
    const res = await call(stack, 'GET', '/triggers?limit=501', { token: await stack.token('list-owner') });
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ error: 'validation_error', message: 'limit must be an integer from 1 to 500' });
  });
});

describe('PATCH /triggers/{id}', () => {
  it('changes the given settings and keeps the others', async () => {
    const token = await stack.token('patch-owner');
    const trigger = await createTrigger(stack, token, { flow: 'echo', event_filter: ['a'] });
    const res = await call(stack, 'PATCH', `/triggers/${trigger.id}`, { token, body: { response_mode: 'wait', flow: 'route-by-type' } });
    expect(res.status).toBe(200);
    expect(res.json.data).toMatchObject({ id: trigger.id, webhook_id: trigger.webhook_id, flow: 'route-by-type', response_mode: 'wait', event_filter: ['a'] });
    expect((await call(stack, 'GET', `/triggers/${trigger.id}`, { token })).json.data).toEqual(res.json.data);
  });

  it('the change takes effect at the URL: wait mode answers with the flow output', async () => {
    const token = await stack.token('patch-owner');
    const trigger = await createTrigger(stack, token, { flow: 'echo' });
    expect((await deliver(trigger.url, EVENT)).json).toEqual({ status: 'accepted', event_id: 'evt_1' });
    await call(stack, 'PATCH', `/triggers/${trigger.id}`, { token, body: { response_mode: 'wait' } });
    expect((await deliver(trigger.url, EVENT)).json).toMatchObject({ received: { id: 'evt_1' }, event_id: 'evt_1' });
  });

  it('turning api_key_enabled on returns a key once; the receiver requires it from then on', async () => {
    const token = await stack.token('patch-owner');
    const trigger = await createTrigger(stack, token, { flow: 'echo' });
    const on = await call(stack, 'PATCH', `/triggers/${trigger.id}`, { token, body: { api_key_enabled: true } });
    expect(on.status).toBe(200);
    const apiKey = on.json.data.api_key;
    expect(apiKey).toMatch(/^fgk_/);
    expect((await deliver(trigger.url, EVENT)).json).toEqual({ error: 'unauthorized', message: expect.any(String) });
    expect((await deliver(trigger.url, EVENT, { 'x-api-key': apiKey })).status).toBe(200);

    const again = await call(stack, 'PATCH', `/triggers/${trigger.id}`, { token, body: { api_key_enabled: true } });
    expect(again.json.data.api_key).toBeUndefined(); // already on: no new key, the old one keeps working
    expect((await deliver(trigger.url, EVENT, { 'x-api-key': apiKey })).status).toBe(200);
  });

  it('turning api_key_enabled off lets deliveries in without a key', async () => {
    const token = await stack.token('patch-owner');
    const trigger = await createTrigger(stack, token, { flow: 'echo', api_key_enabled: true });
    await call(stack, 'PATCH', `/triggers/${trigger.id}`, { token, body: { api_key_enabled: false } });
    expect((await deliver(trigger.url, EVENT)).status).toBe(200);
  });

  it('setting a signature makes the receiver verify it; null removes it', async () => {
    const token = await stack.token('patch-owner');
    const trigger = await createTrigger(stack, token, { flow: 'echo' });
    await call(stack, 'PATCH', `/triggers/${trigger.id}`, { token, body: { signature: { service: 'github', secret: SIGNING_SECRET } } });
    expect((await deliver(trigger.url, EVENT)).json).toEqual({ error: 'invalid_signature', message: expect.any(String) });
    expect((await deliver(trigger.url, EVENT, await signGithub({ secret: SIGNING_SECRET, body: EVENT }))).status).toBe(200);
    await call(stack, 'PATCH', `/triggers/${trigger.id}`, { token, body: { signature: null } });
    expect((await deliver(trigger.url, EVENT)).status).toBe(200);
  });

  it('an empty change is 400', async () => {
    const token = await stack.token('patch-owner');
    const trigger = await createTrigger(stack, token, { flow: 'echo' });
    const res = await call(stack, 'PATCH', `/triggers/${trigger.id}`, { token, body: {} });
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ error: 'validation_error', message: expect.stringMatching(/^nothing to change: send at least one of /) });
  });
});

describe('disabled triggers', () => {
  it('a disabled trigger\'s URL answers 404 like an unknown one, and works again once enabled', async () => {
    const token = await stack.token('disable-owner');
    const trigger = await createTrigger(stack, token, { flow: 'echo', enabled: false });
    const res = await deliver(trigger.url, EVENT);
    expect(res.status).toBe(404);
    expect(res.json).toEqual({ error: 'not_found', message: expect.any(String) });
    await call(stack, 'PATCH', `/triggers/${trigger.id}`, { token, body: { enabled: true } });
    expect((await deliver(trigger.url, EVENT)).status).toBe(200);
  });

  it('disabling answers 404 from the next delivery on', async () => {
    const token = await stack.token('disable-owner');
    const trigger = await createTrigger(stack, token, { flow: 'echo' });
    expect((await deliver(trigger.url, EVENT)).status).toBe(200);
    await call(stack, 'PATCH', `/triggers/${trigger.id}`, { token, body: { enabled: false } });
    expect((await deliver(trigger.url, EVENT)).status).toBe(404);
  });
});

describe('DELETE /triggers/{id}', () => {
  it('answers 204; the trigger and its URL are gone', async () => {
    const token = await stack.token('delete-owner');
    const trigger = await createTrigger(stack, token, { flow: 'echo' });
    expect((await deliver(trigger.url, EVENT)).status).toBe(200);
    const res = await call(stack, 'DELETE', `/triggers/${trigger.id}`, { token });
    expect(res.status).toBe(204);
    expect((await deliver(trigger.url, EVENT)).json).toEqual({ error: 'not_found', message: expect.any(String) });
    expect((await call(stack, 'GET', `/triggers/${trigger.id}`, { token })).status).toBe(404);
    expect((await call(stack, 'DELETE', `/triggers/${trigger.id}`, { token })).status).toBe(404);
  });
});

describe('POST /triggers/{id}/regenerate-url', () => {
  it('gives a new webhook_id and url; the old URL answers 404 from then on, the new one works', async () => {
    const token = await stack.token('regen-owner');
    const trigger = await createTrigger(stack, token, { flow: 'echo' });
    expect((await deliver(trigger.url, EVENT)).status).toBe(200);
    const res = await call(stack, 'POST', `/triggers/${trigger.id}/regenerate-url`, { token });
    expect(res.status).toBe(200);
    const renewed = res.json.data;
    expect(renewed.id).toBe(trigger.id);
    expect(renewed.webhook_id).not.toBe(trigger.webhook_id);
    expect(renewed.url).toBe(`${stack.webhookFunctionUrl}${renewed.webhook_id}`);
    expect((await deliver(trigger.url, EVENT)).json).toEqual({ error: 'not_found', message: expect.any(String) });
    expect((await deliver(trigger.url, EVENT)).status).toBe(404);
    // Through either door: the API's route named the old id too.
    expect((await deliver(`${stack.webhookBaseUrl}/${trigger.webhook_id}`, EVENT)).status).toBe(404);
    expect((await deliver(renewed.url, EVENT)).status).toBe(200);
    expect((await call(stack, 'GET', `/triggers/${trigger.id}`, { token })).json.data.url).toBe(renewed.url);
  });

  it('keeps the API key and signature of the trigger', async () => {
    const token = await stack.token('regen-owner');
    const trigger = await createTrigger(stack, token, { flow: 'echo', api_key_enabled: true, signature: { service: 'github', secret: SIGNING_SECRET } });
    const renewed = (await call(stack, 'POST', `/triggers/${trigger.id}/regenerate-url`, { token })).json.data;
    const signed = await signGithub({ secret: SIGNING_SECRET, body: EVENT });
    expect((await deliver(renewed.url, EVENT, signed)).status).toBe(401);
    expect((await deliver(renewed.url, EVENT, { ...signed, 'x-api-key': trigger.api_key! })).status).toBe(200);
  });
});

describe('POST /triggers/{id}/regenerate-api-key', () => {
  it('returns a new key, shown once; the new key works and the old one is 401', async () => {
    const token = await stack.token('rekey-owner');
    const trigger = await createTrigger(stack, token, { flow: 'echo', api_key_enabled: true });
    const res = await call(stack, 'POST', `/triggers/${trigger.id}/regenerate-api-key`, { token });
    expect(res.status).toBe(200);
    const newKey = res.json.data.api_key;
    expect(newKey).toMatch(/^fgk_/);
    expect(newKey).not.toBe(trigger.api_key);
    expect((await deliver(`${trigger.url}?api_key=${newKey}`, EVENT)).status).toBe(200);
    const old = await deliver(`${trigger.url}?api_key=${trigger.api_key}`, EVENT);
    expect(old.status).toBe(401);
    expect(old.json).toEqual({ error: 'unauthorized', message: expect.any(String) });
    expect((await call(stack, 'GET', `/triggers/${trigger.id}`, { token })).text).not.toContain(newKey);
  });

  it('is 400 on a trigger with API key protection off (enable it with PATCH instead)', async () => {
    const token = await stack.token('rekey-owner');
    const trigger = await createTrigger(stack, token, { flow: 'echo' });
    const res = await call(stack, 'POST', `/triggers/${trigger.id}/regenerate-api-key`, { token });
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ error: 'validation_error', message: 'API key protection is off; enable api_key_enabled first' });
    expect((await call(stack, 'GET', `/triggers/${trigger.id}`, { token })).json.data.api_key_enabled).toBe(false);
  });
});

describe('account isolation', () => {
  const routes: [string, (id: string) => string, unknown?][] = [
    ['GET', (id) => `/triggers/${id}`],
    ['PATCH', (id) => `/triggers/${id}`, { enabled: false }],
    ['DELETE', (id) => `/triggers/${id}`],
    ['POST', (id) => `/triggers/${id}/regenerate-url`],
    ['POST', (id) => `/triggers/${id}/regenerate-api-key`],
    ['POST', (id) => `/triggers/${id}/regenerate-api-key`, { previous_key_expires_in_seconds: 60 }],
    ['POST', (id) => `/triggers/${id}/rotate-signing-secret`, { secret: 'intruder-secret' }],
    ['POST', (id) => `/triggers/${id}/rotate-signing-secret`, { nonsense: true }],
    ['GET', (id) => `/triggers/${id}/executions`],
  ];

  it.each(routes)('another account gets 404 on %s %s', async (method, path, body) => {
    const trigger = await createTrigger(stack, await stack.token('iso-owner'), { flow: 'echo', api_key_enabled: true, signature: { service: 'github', secret: SIGNING_SECRET } });
    const res = await call(stack, method, path(trigger.id), { token: await stack.token('iso-intruder'), body });
    expect(res.status).toBe(404);
    expect(res.json).toEqual({ error: 'not_found', message: expect.any(String) });
  });

  it('another account\'s attempts change nothing: the URL and key still work', async () => {
    const token = await stack.token('iso-owner');
    const trigger = await createTrigger(stack, token, { flow: 'echo', api_key_enabled: true, signature: { service: 'github', secret: SIGNING_SECRET } });
    const intruder = await stack.token('iso-intruder');
    for (const [method, path, body] of routes) await call(stack, method, path(trigger.id), { token: intruder, body });
    const read = await call(stack, 'GET', `/triggers/${trigger.id}`, { token });
    expect(read.json.data).toMatchObject({ webhook_id: trigger.webhook_id, enabled: true, previous_api_key_expires_at: null, signature: { previous_secret_expires_at: null } });
    const signed = await signGithub({ secret: SIGNING_SECRET, body: EVENT });
    expect((await deliver(trigger.url, EVENT, { ...signed, 'x-api-key': trigger.api_key! })).status).toBe(200);
    expect((await deliver(trigger.url, EVENT, { ...(await signGithub({ secret: 'intruder-secret', body: EVENT })), 'x-api-key': trigger.api_key! })).status).toBe(401);
  });

  it('a PATCH with an invalid body to someone else\'s trigger is 404, not 400', async () => {
    const trigger = await createTrigger(stack, await stack.token('iso-owner'), { flow: 'echo' });
    const res = await call(stack, 'PATCH', `/triggers/${trigger.id}`, { token: await stack.token('iso-intruder'), body: { flow: 'nope' } });
    expect(res.status).toBe(404);
  });

  it('an id that is not a trigger id is 404', async () => {
    const res = await call(stack, 'GET', '/triggers/not-an-id', { token: await stack.token('iso-owner') });
    expect(res.status).toBe(404);
  });
});

describe('validation', () => {
  it.each([
    ['missing flow', { response_mode: 'wait' }],
    ['unknown flow', { flow: 'no-such-flow' }],
    ['malformed flow name', { flow: '../echo' }],
    ['bad response_mode', { flow: 'echo', response_mode: 'eventually' }],
    ['bad event_filter', { flow: 'echo', event_filter: ['*.created'] }],
    ['event_filter not an array', { flow: 'echo', event_filter: 'push' }],
    ['signature without secret', { flow: 'echo', signature: { service: 'stripe' } }],
    ['unknown signature service', { flow: 'echo', signature: { service: 'acme_pay', secret: 'x' } }],
    ['custom without its settings', { flow: 'echo', signature: { service: 'custom', secret: 'x' } }],
    ['standard_webhooks secret not whsec_<base64>', { flow: 'echo', signature: { service: 'standard_webhooks', secret: 'plain' } }],
    ['unknown field', { flow: 'echo', colour: 'blue' }],
    ['read-only field', { flow: 'echo', webhook_id: 'mine' }],
  ])('create with %s is 400 validation_error', async (_why, body) => {
    const res = await call(stack, 'POST', '/triggers', { token: await stack.token('valid-owner'), body });
    expect(res.status).toBe(400);
    expect(res.json.error).toBe('validation_error');
    // Every problem is put in words (`message`), naming the field (issue 43).
    expect(res.json.message).toMatch(/\w{8,}/);
  });

  it.each([
    ['unknown flow', { flow: 'no-such-flow' }],
    ['bad response_mode', { response_mode: 'eventually' }],
    ['unknown field', { colour: 'blue' }],
  ])('PATCH with %s is 400 and changes nothing', async (_why, body) => {
    const token = await stack.token('valid-owner');
    const trigger = await createTrigger(stack, token, { flow: 'echo' });
    const res = await call(stack, 'PATCH', `/triggers/${trigger.id}`, { token, body });
    expect(res.status).toBe(400);
    expect((await call(stack, 'GET', `/triggers/${trigger.id}`, { token })).json.data).toMatchObject({ flow: 'echo', response_mode: 'acknowledge' });
  });

  it('a body that is not JSON is 400', async () => {
    const res = await call(stack, 'POST', '/triggers', { token: await stack.token('valid-owner'), rawBody: '{"flow":', headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ error: 'validation_error', message: 'the body is not valid JSON' });
  });

  it('a JSON body that is not an object is 400', async () => {
    const res = await call(stack, 'POST', '/triggers', { token: await stack.token('valid-owner'), body: ['echo'] });
    expect(res.status).toBe(400);
  });

  it.each([
    ['POST', '/triggers'],
    ['PATCH', '/triggers/00000000000000000000000000000000'],
  ])('%s %s with a non-JSON content type is 415', async (method, path) => {
    const token = await stack.token('valid-owner');
    const trigger = await createTrigger(stack, token, { flow: 'echo' });
    const target = path.replace('00000000000000000000000000000000', trigger.id);
    const res = await call(stack, method, target, { token, rawBody: 'flow=echo', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(res.status).toBe(415);
    expect(res.json).toEqual({ error: 'unsupported_media_type', message: 'send content-type: application/json' });
  });
});

describe('authentication', () => {
  it.each([
    ['POST', '/triggers'],
    ['GET', '/triggers'],
    ['GET', '/triggers/00000000000000000000000000000000'],
    ['PATCH', '/triggers/00000000000000000000000000000000'],
    ['DELETE', '/triggers/00000000000000000000000000000000'],
    ['POST', '/triggers/00000000000000000000000000000000/regenerate-url'],
    ['POST', '/triggers/00000000000000000000000000000000/regenerate-api-key'],
    ['POST', '/triggers/00000000000000000000000000000000/rotate-signing-secret'],
    ['GET', '/triggers/00000000000000000000000000000000/executions'],
  ])('%s %s without credentials is 401', async (method, path) => {
    const res = await call(stack, method, path, { body: method === 'POST' || method === 'PATCH' ? { flow: 'echo' } : undefined });
    expect(res.status).toBe(401);
    expect(res.json).toEqual({ error: 'unauthorized', message: expect.any(String) });
  });

  it('a trigger\'s own API key is not a gateway credential', async () => {
    const trigger = await createTrigger(stack, await stack.token('auth-owner'), { flow: 'echo', api_key_enabled: true });
    const res = await call(stack, 'GET', '/triggers', { apiKey: trigger.api_key });
    expect(res.status).toBe(401);
  });

  it('a gateway API key of the account manages its triggers', async () => {
    const token = await stack.token('auth-owner');
    const apiKey = (await call(stack, 'POST', '/api-keys', { token })).json.data.api_key;
    const trigger = await createTrigger(stack, token, { flow: 'echo' });
    const res = await call(stack, 'GET', `/triggers/${trigger.id}`, { apiKey });
    expect(res.status).toBe(200);
    expect(res.json.data.id).toBe(trigger.id);
  });
});

describe('GET /triggers/{id}/executions', () => {
  it('lists deliveries newest first, paginated with limit and cursor', async () => {
    const token = await stack.token('exec-owner');
    const trigger = await createTrigger(stack, token, { flow: 'echo', event_filter: ['wanted'] });
    for (const id of ['evt_a', 'evt_b', 'evt_c']) await deliver(trigger.url, JSON.stringify({ id, type: 'unwanted' }));
    const first = await call(stack, 'GET', `/triggers/${trigger.id}/executions?limit=2`, { token });
    expect(first.status).toBe(200);
    expect(first.json.data.executions.map((e: { event_id: string }) => e.event_id)).toEqual(['evt_c', 'evt_b']);
    expect(first.json.data.executions[0]).toEqual({ execution_id: expect.any(String), event_id: 'evt_c', received_at: expect.any(String), type: 'unwanted', status: 'ignored', attempts: 0, timeline: [] });
    const rest = await call(stack, 'GET', `/triggers/${trigger.id}/executions?limit=2&cursor=${first.json.data.next_cursor}`, { token });
    expect(rest.json.data.executions.map((e: { event_id: string }) => e.event_id)).toEqual(['evt_a']);
  });

  it('refuses a malformed cursor and a limit over 500', async () => {
    const token = await stack.token('exec-owner');
    const trigger = await createTrigger(stack, token, { flow: 'echo' });
    expect((await call(stack, 'GET', `/triggers/${trigger.id}/executions?cursor=%%%`, { token })).status).toBe(400);
    expect((await call(stack, 'GET', `/triggers/${trigger.id}/executions?limit=501`, { token })).status).toBe(400);
  });
});
