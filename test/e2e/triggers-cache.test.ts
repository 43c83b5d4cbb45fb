import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { call, useLocalStack } from '../support/local-stack.js';
import { signGithub, signTwilio } from '../support/signers.js';
import { createTrigger, deliver, TEST_FLOWS_DIR } from '../support/webhooks.js';

/**
 * Settings as deployed: the receiver caches triggers for TRIGGER_CACHE_TTL_MS, and the service sits
 * behind a custom domain (PUBLIC_WEBHOOK_BASE_URL, written here with a trailing slash).
 */
const TTL_MS = 300;
const PUBLIC_BASE = 'https://hooks.example.com/webhooks';
const stack = useLocalStack({ flowsDir: TEST_FLOWS_DIR, env: { TRIGGER_CACHE_TTL_MS: String(TTL_MS), PUBLIC_WEBHOOK_BASE_URL: `${PUBLIC_BASE}/` } });

/** Deliveries here are filtered out (200 ignored), so no flow runs while timing the cache. */
const IGNORED = JSON.stringify({ type: 'not-listed' });
const FILTERED = { flow: 'echo', event_filter: ['listed'] };
/** Scheduling on a busy machine; the cache itself expires after TTL_MS. */
const SLACK_MS = 1500;

const localUrl = (webhookId: string) => `${stack.webhookBaseUrl}/${webhookId}`;

/** Delivers until `status` comes back; returns the milliseconds that took. */
async function msUntilStatus(url: string, status: number, headers: Record<string, string> = {}): Promise<number> {
  const started = Date.now();
  while (Date.now() - started < TTL_MS + SLACK_MS) {
    if ((await deliver(url, IGNORED, headers)).status === status) return Date.now() - started;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`still not ${status} after ${TTL_MS + SLACK_MS} ms`);
}

describe('the receiver\'s trigger cache (TRIGGER_CACHE_TTL_MS)', () => {
  it('a disabled trigger answers 404 within the TTL', async () => {
    const token = await stack.token('cache-owner');
    const trigger = await createTrigger(stack, token, FILTERED);
    expect((await deliver(localUrl(trigger.webhook_id), IGNORED)).status).toBe(200); // now cached
    await call(stack, 'PATCH', `/triggers/${trigger.id}`, { token, body: { enabled: false } });
    expect(await msUntilStatus(localUrl(trigger.webhook_id), 404)).toBeLessThanOrEqual(TTL_MS + SLACK_MS);
  });

  it('a re-enabled trigger works at once, though its disabled state is cached', async () => {
    const token = await stack.token('cache-owner');
    const trigger = await createTrigger(stack, token, { ...FILTERED, enabled: false });
    expect((await deliver(localUrl(trigger.webhook_id), IGNORED)).status).toBe(404); // now cached, disabled
    await call(stack, 'PATCH', `/triggers/${trigger.id}`, { token, body: { enabled: true } });
    expect((await deliver(localUrl(trigger.webhook_id), IGNORED)).status).toBe(200);
  });

  it('after regenerate-url the new URL works at once and the old one answers 404 within the TTL', async () => {
    const token = await stack.token('cache-owner');
    const trigger = await createTrigger(stack, token, FILTERED);
    expect((await deliver(localUrl(trigger.webhook_id), IGNORED)).status).toBe(200);
    const renewed = (await call(stack, 'POST', `/triggers/${trigger.id}/regenerate-url`, { token })).json.data;
    expect((await deliver(localUrl(renewed.webhook_id), IGNORED)).status).toBe(200);
    await msUntilStatus(localUrl(trigger.webhook_id), 404);
  });

  it('a regenerated API key works at once, though the trigger with the old key is cached', async () => {
    const token = await stack.token('cache-owner');
    const trigger = await createTrigger(stack, token, { ...FILTERED, api_key_enabled: true });
    expect((await deliver(localUrl(trigger.webhook_id), IGNORED, { 'x-api-key': trigger.api_key! })).status).toBe(200);
    const newKey = (await call(stack, 'POST', `/triggers/${trigger.id}/regenerate-api-key`, { token })).json.data.api_key;
    expect((await deliver(localUrl(trigger.webhook_id), IGNORED, { 'x-api-key': newKey })).status).toBe(200);
  });

  it('the old API key stops working within the TTL', async () => {
    const token = await stack.token('cache-owner');
    const trigger = await createTrigger(stack, token, { ...FILTERED, api_key_enabled: true });
    expect((await deliver(localUrl(trigger.webhook_id), IGNORED, { 'x-api-key': trigger.api_key! })).status).toBe(200);
    await call(stack, 'POST', `/triggers/${trigger.id}/regenerate-api-key`, { token });
    await msUntilStatus(localUrl(trigger.webhook_id), 401, { 'x-api-key': trigger.api_key! });
  });

  it('a new signing secret works at once, though the trigger with the old secret is cached', async () => {
    const token = await stack.token('cache-owner');
    const trigger = await createTrigger(stack, token, { ...FILTERED, signature: { service: 'github', secret: 'old-secret' } });
    const url = localUrl(trigger.webhook_id);
    expect((await deliver(url, IGNORED, await signGithub({ secret: 'old-secret', body: IGNORED }))).status).toBe(200);
    await call(stack, 'PATCH', `/triggers/${trigger.id}`, { token, body: { signature: { service: 'github', secret: 'new-secret' } } });
    expect((await deliver(url, IGNORED, await signGithub({ secret: 'new-secret', body: IGNORED }))).status).toBe(200);
  });
});

describe('PUBLIC_WEBHOOK_BASE_URL', () => {
  it('is the base of every trigger url (one slash before the webhook_id)', async () => {
    const trigger = await createTrigger(stack, await stack.token('domain-owner'), { flow: 'echo' });
    expect(trigger.url).toBe(`${PUBLIC_BASE}/${trigger.webhook_id}`);
  });

  it('is the URL Twilio signatures are checked against, not the one the request reached', async () => {
    const authToken = 'twilio-domain';
    const trigger = await createTrigger(stack, await stack.token('domain-owner'), { ...FILTERED, signature: { service: 'twilio', secret: authToken } });
    const form = 'type=not-listed&MessageSid=SM1';
    const contentType = 'application/x-www-form-urlencoded';
    const forPublic = signTwilio({ authToken, url: trigger.url, body: form, contentType });
    expect((await deliver(localUrl(trigger.webhook_id), form, forPublic.headers)).json).toEqual({ status: 'ignored', event_id: expect.any(String), reason: expect.any(String) });
    const forLocal = signTwilio({ authToken, url: localUrl(trigger.webhook_id), body: form, contentType });
    expect((await deliver(localUrl(trigger.webhook_id), form, forLocal.headers)).json).toEqual({ error: 'invalid_signature', message: expect.any(String) });
  });

  it('is that URL whatever Host and X-Forwarded-* the request carries: a signature for them is refused', async () => {
    const authToken = 'twilio-domain';
    const trigger = await createTrigger(stack, await stack.token('domain-owner'), { ...FILTERED, signature: { service: 'twilio', secret: authToken } });
    const form = 'type=not-listed&MessageSid=SM2';
    const contentType = 'application/x-www-form-urlencoded';
    const forged = { host: 'attacker.example', 'x-forwarded-host': 'attacker.example', 'x-forwarded-proto': 'https', 'x-forwarded-port': '443' };
    const forAttacker = signTwilio({ authToken, url: `https://attacker.example/webhooks/${trigger.webhook_id}`, body: form, contentType });
    expect(await postWithHost(trigger.webhook_id, form, { ...forAttacker.headers, ...forged })).toEqual({ error: 'invalid_signature', message: expect.any(String) });
    const forPublic = signTwilio({ authToken, url: trigger.url, body: form, contentType });
    expect(await postWithHost(trigger.webhook_id, form, { ...forPublic.headers, ...forged })).toEqual({ status: 'ignored', event_id: expect.any(String), reason: expect.any(String) });
  });

  it('keeps the query string the sender used', async () => {
    const authToken = 'twilio-domain';
    const trigger = await createTrigger(stack, await stack.token('domain-owner'), { ...FILTERED, signature: { service: 'twilio', secret: authToken } });
    const json = JSON.stringify({ type: 'not-listed' });
    const signed = signTwilio({ authToken, url: trigger.url, body: json, contentType: 'application/json' });
    const query = signed.url.slice(signed.url.indexOf('?'));
    expect(query).toMatch(/^\?bodySHA256=[0-9a-f]{64}$/);
    expect((await deliver(localUrl(trigger.webhook_id) + query, json, signed.headers)).json).toEqual({ status: 'ignored', event_id: expect.any(String), reason: expect.any(String) });
  });
});

/** POSTs to the local stack with headers fetch will not send as given (Host); answers the JSON body. */
function postWithHost(webhookId: string, body: string, headers: Record<string, string>): Promise<unknown> {
  const { port } = new URL(stack.baseUrl);
  return new Promise((resolve, reject) => {
    const outgoing = request({ host: '127.0.0.1', port, method: 'POST', path: `/webhooks/${webhookId}`, headers: { ...headers, 'content-length': Buffer.byteLength(body) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve(JSON.parse(Buffer.concat(chunks).toString('utf8'))));
      res.on('error', reject);
    });
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}
