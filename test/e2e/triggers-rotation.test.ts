import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { call, useLocalStack } from '../support/local-stack.js';
import { signStripe } from '../support/signers.js';
import { createTrigger, deliver, TEST_FLOWS_DIR } from '../support/webhooks.js';

/**
 * Secret rotation, API key overlap and source-address allowlists on the local stack, with the
 * receiver caching triggers as deployed (for TTL_MS here): an overlap must end on time whatever
 * the cache holds, and a change that lets deliveries in must work at once.
 */
const TTL_MS = 1000;
const stack = useLocalStack({ flowsDir: TEST_FLOWS_DIR, env: { TRIGGER_CACHE_TTL_MS: String(TTL_MS) } });

/** Deliveries here are filtered out (200 ignored), so no flow runs while timing. */
const IGNORED = JSON.stringify({ id: 'evt_rot', type: 'not-listed' });
const FILTERED = { flow: 'echo', event_filter: ['listed'] };
/** Scheduling on a busy machine. */
const SLACK_MS = 1500;
const OLD_SECRET = 'whsec_old_0123456789abcdef';
const NEW_SECRET = 'whsec_new_fedcba9876543210';

/** Signed as Stripe signs, at the time of sending. */
const stripeSigned = (secret: string) => signStripe({ secret, body: IGNORED, timestamp: Math.floor(Date.now() / 1000) });

/** Delivers (headers made afresh each time) until `status` comes back; returns when that was (epoch ms). */
async function whenStatus(url: string, status: number, headers: () => Record<string, string>, withinMs: number): Promise<number> {
  const started = Date.now();
  while (Date.now() - started < withinMs) {
    if ((await deliver(url, IGNORED, headers())).status === status) return Date.now();
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`still not ${status} after ${withinMs} ms`);
}

describe('POST /triggers/{id}/rotate-signing-secret', () => {
  it('accepts the old and the new secret during the overlap, and only the new one once a 2 s overlap has ended', async () => {
    const token = await stack.token('rotate-owner');
    const trigger = await createTrigger(stack, token, { ...FILTERED, signature: { service: 'stripe', secret: OLD_SECRET } });
    expect((await deliver(trigger.url, IGNORED, stripeSigned(OLD_SECRET))).status).toBe(200); // now cached with the old secret alone

    const before = Date.now();
    const res = await call(stack, 'POST', `/triggers/${trigger.id}/rotate-signing-secret`, { token, body: { secret: NEW_SECRET, previous_secret_expires_in_seconds: 2 } });
    expect(res.status).toBe(200);
    expect(res.text).not.toContain(NEW_SECRET);
    expect(res.text).not.toContain(OLD_SECRET);
    const endsAt = Date.parse(res.json.data.signature.previous_secret_expires_at);
    expect(endsAt).toBeGreaterThanOrEqual(before + 2000 - 5);
    expect(endsAt).toBeLessThanOrEqual(Date.now() + 2000);
    expect(res.json.data.signature).toEqual({ service: 'stripe', previous_secret_expires_at: new Date(endsAt).toISOString() });

    // The new secret works at once, though the trigger with only the old one is cached; the old one still works.
    expect((await deliver(trigger.url, IGNORED, stripeSigned(NEW_SECRET))).json).toEqual({ status: 'ignored', event_id: expect.any(String), reason: expect.any(String) });
    expect((await deliver(trigger.url, IGNORED, stripeSigned(OLD_SECRET))).json).toEqual({ status: 'ignored', event_id: expect.any(String), reason: expect.any(String) });
    expect((await deliver(trigger.url, IGNORED, stripeSigned('whsec_someone_else'))).json).toEqual({ error: 'invalid_signature', message: expect.any(String) });

    // The old secret is refused once the overlap has ended (allowing the cache bound), and not before.
    const refusedAt = await whenStatus(trigger.url, 401, () => stripeSigned(OLD_SECRET), 2000 + TTL_MS + SLACK_MS);
    expect(refusedAt).toBeGreaterThanOrEqual(endsAt);
    expect(refusedAt).toBeLessThanOrEqual(endsAt + TTL_MS + SLACK_MS);
    expect((await deliver(trigger.url, IGNORED, stripeSigned(OLD_SECRET))).json).toEqual({ error: 'invalid_signature', message: expect.any(String) });
    expect((await deliver(trigger.url, IGNORED, stripeSigned(NEW_SECRET))).status).toBe(200);
    expect((await call(stack, 'GET', `/triggers/${trigger.id}`, { token })).json.data.signature.previous_secret_expires_at).toBeNull();
  });

  it('keeps the old secret for 24 hours by default', async () => {
    const token = await stack.token('rotate-owner');
    const trigger = await createTrigger(stack, token, { ...FILTERED, signature: { service: 'github', secret: OLD_SECRET } });
    const before = Date.now();
    const res = await call(stack, 'POST', `/triggers/${trigger.id}/rotate-signing-secret`, { token, body: { secret: NEW_SECRET } });
    const endsAt = Date.parse(res.json.data.signature.previous_secret_expires_at);
    expect(endsAt - before).toBeGreaterThanOrEqual(86_400_000 - 5);
    expect(endsAt - Date.now()).toBeLessThanOrEqual(86_400_000);
    const read = await call(stack, 'GET', `/triggers/${trigger.id}`, { token });
    expect(read.json.data.signature.previous_secret_expires_at).toBe(res.json.data.signature.previous_secret_expires_at);
  });

  it('with an overlap of 0, the old secret stops within the cache bound', async () => {
    const token = await stack.token('rotate-owner');
    const trigger = await createTrigger(stack, token, { ...FILTERED, signature: { service: 'stripe', secret: OLD_SECRET } });
    expect((await deliver(trigger.url, IGNORED, stripeSigned(OLD_SECRET))).status).toBe(200);
    const res = await call(stack, 'POST', `/triggers/${trigger.id}/rotate-signing-secret`, { token, body: { secret: NEW_SECRET, previous_secret_expires_in_seconds: 0 } });
    expect(res.json.data.signature.previous_secret_expires_at).toBeNull();
    expect((await deliver(trigger.url, IGNORED, stripeSigned(NEW_SECRET))).status).toBe(200);
    await whenStatus(trigger.url, 401, () => stripeSigned(OLD_SECRET), TTL_MS + SLACK_MS);
  });

  it.each([
    ['no secret', { previous_secret_expires_in_seconds: 60 }],
    ['an overlap over 7 days', { secret: NEW_SECRET, previous_secret_expires_in_seconds: 604801 }],
    ['a negative overlap', { secret: NEW_SECRET, previous_secret_expires_in_seconds: -1 }],
    ['an unknown field', { secret: NEW_SECRET, service: 'github' }],
  ])('with %s is 400 and changes nothing', async (_why, body) => {
    const token = await stack.token('rotate-owner');
    const trigger = await createTrigger(stack, token, { ...FILTERED, signature: { service: 'stripe', secret: OLD_SECRET } });
    const res = await call(stack, 'POST', `/triggers/${trigger.id}/rotate-signing-secret`, { token, body });
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ error: 'validation_error', message: expect.any(String) });
    expect((await deliver(trigger.url, IGNORED, stripeSigned(OLD_SECRET))).status).toBe(200);
  });

  it('is 400 on a trigger without a signature (set one with PATCH), and 415 for a body that is not JSON', async () => {
    const token = await stack.token('rotate-owner');
    const unsigned = await createTrigger(stack, token, FILTERED);
    const res = await call(stack, 'POST', `/triggers/${unsigned.id}/rotate-signing-secret`, { token, body: { secret: NEW_SECRET } });
    expect(res.status).toBe(400);
    expect((await call(stack, 'GET', `/triggers/${unsigned.id}`, { token })).json.data.signature).toBeNull();
    const signed = await createTrigger(stack, token, { ...FILTERED, signature: { service: 'stripe', secret: OLD_SECRET } });
    const form = await call(stack, 'POST', `/triggers/${signed.id}/rotate-signing-secret`, { token, rawBody: `secret=${NEW_SECRET}`, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(form.status).toBe(415);
  });

  it('a standard_webhooks trigger takes only a whsec_<base64> secret', async () => {
    const token = await stack.token('rotate-owner');
    const whsec = (fill: number) => `whsec_${Buffer.alloc(24, fill).toString('base64')}`;
    const trigger = await createTrigger(stack, token, { ...FILTERED, signature: { service: 'standard_webhooks', secret: whsec(1) } });
    expect((await call(stack, 'POST', `/triggers/${trigger.id}/rotate-signing-secret`, { token, body: { secret: 'plain' } })).status).toBe(400);
    expect((await call(stack, 'POST', `/triggers/${trigger.id}/rotate-signing-secret`, { token, body: { secret: whsec(2) } })).status).toBe(200);
  });
});

describe('POST /triggers/{id}/regenerate-api-key with previous_key_expires_in_seconds', () => {
  it('both keys work during the overlap; the old one is refused once a 2 s overlap has ended', async () => {
    const token = await stack.token('rekey-owner');
    const trigger = await createTrigger(stack, token, { ...FILTERED, api_key_enabled: true });
    const oldKey = { 'x-api-key': trigger.api_key! };
    expect((await deliver(trigger.url, IGNORED, oldKey)).status).toBe(200);
    const res = await call(stack, 'POST', `/triggers/${trigger.id}/regenerate-api-key`, { token, body: { previous_key_expires_in_seconds: 2 } });
    expect(res.status).toBe(200);
    const newKey = { 'x-api-key': res.json.data.api_key };
    const endsAt = Date.parse(res.json.data.previous_api_key_expires_at);
    expect((await call(stack, 'GET', `/triggers/${trigger.id}`, { token })).json.data.previous_api_key_expires_at).toBe(res.json.data.previous_api_key_expires_at);

    expect((await deliver(trigger.url, IGNORED, newKey)).status).toBe(200);
    expect((await deliver(trigger.url, IGNORED, oldKey)).status).toBe(200);
    const refusedAt = await whenStatus(trigger.url, 401, () => oldKey, 2000 + TTL_MS + SLACK_MS);
    expect(refusedAt).toBeGreaterThanOrEqual(endsAt);
    expect((await deliver(trigger.url, IGNORED, oldKey)).json).toEqual({ error: 'unauthorized', message: expect.any(String) });
    expect((await deliver(trigger.url, IGNORED, newKey)).status).toBe(200);
    expect((await call(stack, 'GET', `/triggers/${trigger.id}`, { token })).json.data.previous_api_key_expires_at).toBeNull();
  });

  it('takes no body, an empty JSON object, or an overlap of 0 alike: the old key stops', async () => {
    const token = await stack.token('rekey-owner');
    const trigger = await createTrigger(stack, token, { ...FILTERED, api_key_enabled: true });
    for (const options of [{}, { body: {} }, { body: { previous_key_expires_in_seconds: 0 } }]) {
      const res = await call(stack, 'POST', `/triggers/${trigger.id}/regenerate-api-key`, { token, ...options });
      expect(res.status).toBe(200);
      expect(res.json.data.previous_api_key_expires_at).toBeNull();
    }
  });

  it('refuses an overlap over 7 days or a body that is not JSON, and keeps the key', async () => {
    const token = await stack.token('rekey-owner');
    const trigger = await createTrigger(stack, token, { ...FILTERED, api_key_enabled: true });
    const tooLong = await call(stack, 'POST', `/triggers/${trigger.id}/regenerate-api-key`, { token, body: { previous_key_expires_in_seconds: 604801 } });
    expect(tooLong.status).toBe(400);
    const text = await call(stack, 'POST', `/triggers/${trigger.id}/regenerate-api-key`, { token, rawBody: '60', headers: { 'content-type': 'text/plain' } });
    expect(text.status).toBe(415);
    expect((await deliver(trigger.url, IGNORED, { 'x-api-key': trigger.api_key! })).status).toBe(200);
  });
});

describe('allowed_source_ips', () => {
  it('127.0.0.0/8 lets deliveries in from loopback', async () => {
    const token = await stack.token('ip-owner');
    const trigger = await createTrigger(stack, token, { ...FILTERED, allowed_source_ips: ['127.0.0.0/8'] });
    expect(trigger.allowed_source_ips).toEqual(['127.0.0.0/8']);
    expect((await deliver(trigger.url, IGNORED)).json).toEqual({ status: 'ignored', event_id: expect.any(String), reason: expect.any(String) });
  });

  it('10.0.0.0/8 refuses loopback with 403 ip_not_allowed, before the API key is looked at', async () => {
    const token = await stack.token('ip-owner');
    const trigger = await createTrigger(stack, token, { ...FILTERED, allowed_source_ips: ['10.0.0.0/8'], api_key_enabled: true });
    const res = await deliver(trigger.url, IGNORED, { 'x-api-key': trigger.api_key! });
    expect(res.status).toBe(403);
    expect(res.json).toEqual({ error: 'ip_not_allowed', message: expect.any(String) });
    expect((await deliver(trigger.url, IGNORED)).json).toEqual({ error: 'ip_not_allowed', message: expect.any(String) }); // not 401 unauthorized
  });

  it('an X-Forwarded-For header changes nothing, either way', async () => {
    const token = await stack.token('ip-owner');
    const tenOnly = await createTrigger(stack, token, { ...FILTERED, allowed_source_ips: ['10.0.0.0/8'] });
    const loopbackOnly = await createTrigger(stack, token, { ...FILTERED, allowed_source_ips: ['127.0.0.0/8'] });
    expect((await deliver(tenOnly.url, IGNORED, { 'x-forwarded-for': '10.1.2.3' })).status).toBe(403);
    expect((await deliver(loopbackOnly.url, IGNORED, { 'x-forwarded-for': '10.1.2.3' })).status).toBe(200);
  });

  it('an address allowed later works at once, though the refusing trigger is cached; narrowing shuts it out within the cache bound', async () => {
    const token = await stack.token('ip-owner');
    const trigger = await createTrigger(stack, token, { ...FILTERED, allowed_source_ips: ['10.0.0.0/8'] });
    expect((await deliver(trigger.url, IGNORED)).status).toBe(403);
    await call(stack, 'PATCH', `/triggers/${trigger.id}`, { token, body: { allowed_source_ips: ['10.0.0.0/8', '127.0.0.1'] } });
    expect((await deliver(trigger.url, IGNORED)).status).toBe(200);
    await call(stack, 'PATCH', `/triggers/${trigger.id}`, { token, body: { allowed_source_ips: ['10.0.0.0/8'] } });
    await whenStatus(trigger.url, 403, () => ({}), TTL_MS + SLACK_MS);
    const opened = await call(stack, 'PATCH', `/triggers/${trigger.id}`, { token, body: { allowed_source_ips: null } });
    expect(opened.json.data.allowed_source_ips).toBeNull();
    expect((await deliver(trigger.url, IGNORED)).status).toBe(200);
  });

  it.each([
    ['a host name', ['localhost']],
    ['a prefix over 32', ['10.0.0.0/33']],
    ['an empty list', []],
    ['51 entries', Array.from({ length: 51 }, (_, i) => `192.0.2.${i}`)],
  ])('refuses %s with 400 validation_error', async (_why, allowed_source_ips) => {
    const res = await call(stack, 'POST', '/triggers', { token: await stack.token('ip-owner'), body: { ...FILTERED, allowed_source_ips } });
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ error: 'validation_error', message: expect.any(String) });
  });

  /** The event API Gateway sends for a POST from `sourceIp` (the local server only hears loopback IPv4). */
  const fromAddress = (webhookId: string, sourceIp: string): APIGatewayProxyEventV2 => ({
    version: '2.0', routeKey: 'ANY /webhooks/{webhook_id}', rawPath: `/webhooks/${webhookId}`, rawQueryString: '',
    headers: { 'content-type': 'application/json', host: '127.0.0.1', 'x-forwarded-for': sourceIp },
    pathParameters: { webhook_id: webhookId },
    requestContext: {
      accountId: '000000000000', apiId: 'local', domainName: '127.0.0.1', domainPrefix: '127', requestId: 'r', routeKey: 'ANY /webhooks/{webhook_id}', stage: '$default',
      http: { method: 'POST', path: `/webhooks/${webhookId}`, protocol: 'HTTP/1.1', sourceIp, userAgent: 'test' },
      time: new Date().toUTCString(), timeEpoch: Date.now(),
    },
    body: IGNORED, isBase64Encoded: false,
  });

  it.each([
    [['2001:db8::/32'], '2001:db8:1::5', 200],
    [['2001:db8::/32'], '2001:db9::5', 403],
    [['127.0.0.0/8'], '::ffff:127.0.0.1', 200],
    [['192.0.2.0/24', '2001:db8::/32'], '192.0.2.77', 200],
    [['192.0.2.0/24', '2001:db8::/32'], '198.51.100.1', 403],
  ])('%j and a delivery the gateway saw from %s: %i', async (allowed_source_ips, sourceIp, status) => {
    const trigger = await createTrigger(stack, await stack.token('ip-owner'), { ...FILTERED, allowed_source_ips });
    const result = await stack.handlers.webhook(fromAddress(trigger.webhook_id, sourceIp)) as { statusCode: number };
    expect(result.statusCode).toBe(status);
  });
});
