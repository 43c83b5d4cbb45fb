import { createHmac, generateKeyPairSync, sign } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { call, useLocalStack } from '../support/local-stack.js';
import { createTrigger, deliver, waitForExecutions } from '../support/webhooks.js';

/**
 * Each sender's handshake, answered by the receiver itself over HTTP: only for a trigger of that
 * sender, only once the request verified where the sender signs it, never running the flow, and
 * recorded as a `handshake` delivery.
 */
let clockAheadMs = 0;
// The receiver's and trigger routes' clock, which a test moves ahead to reach the end of a handshake
// window without waiting for it. No cache: a forgotten secret is forgotten at once.
const stack = useLocalStack({ now: () => Date.now() + clockAheadMs, env: { TRIGGER_CACHE_TTL_MS: '0' } });

/** Runs `body` with the stack's clock `seconds` ahead, then puts it back. */
async function later<T>(seconds: number, body: () => Promise<T>): Promise<T> {
  clockAheadMs = seconds * 1000;
  try {
    return await body();
  } finally {
    clockAheadMs = 0;
  }
}
const nowSeconds = () => String(Math.floor(Date.now() / 1000));

async function triggerOf(service: string, secret: string) {
  const token = await stack.token(`handshakes-${service}`);
  return { token, trigger: await createTrigger(stack, token, { flow: 'echo', signature: { service, secret } }) };
}

/** The trigger's deliveries once `count` are recorded. */
const deliveries = (token: string, triggerId: string, count: number) => waitForExecutions(stack, token, triggerId, (list) => list.length === count);

describe('POST handshakes', () => {
  it('zoom: endpoint.url_validation, signed, is answered with the plain token and its HMAC, and recorded', async () => {
    const secret = 'zoom-secret-token-handshake';
    const { token, trigger } = await triggerOf('zoom', secret);
    const body = JSON.stringify({ event: 'endpoint.url_validation', payload: { plainToken: 'qgg8vlvZRS6UYooatFL8Aw' }, event_ts: 1654503849680 });
    const ts = nowSeconds();
    const signature = `v0=${createHmac('sha256', secret).update(`v0:${ts}:${body}`).digest('hex')}`;
    const res = await deliver(trigger.url, body, { 'x-zm-request-timestamp': ts, 'x-zm-signature': signature });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ plainToken: 'qgg8vlvZRS6UYooatFL8Aw', encryptedToken: createHmac('sha256', secret).update('qgg8vlvZRS6UYooatFL8Aw').digest('hex') });
    const [recorded] = await deliveries(token, trigger.id, 1);
    expect(recorded).toMatchObject({ status: 'handshake', type: 'zoom_url_validation', attempts: 0 });
    // Unsigned, it is refused like any delivery.
    expect((await deliver(trigger.url, body, { 'x-zm-request-timestamp': ts })).status).toBe(401);
  });

  it('twitch: webhook_callback_verification is answered with the raw challenge as text/plain', async () => {
    const secret = 'twitch-eventsub-secret-0123';
    const { trigger } = await triggerOf('twitch', secret);
    const body = JSON.stringify({ challenge: 'pogchamp-kappa-360noscope-vohiyo', subscription: { id: 'f1c2a387', type: 'channel.follow' } });
    const id = 'e76c6bd4-55c9-4987-8304-da1588d8988b';
    const ts = new Date().toISOString();
    const headers = {
      'twitch-eventsub-message-id': id, 'twitch-eventsub-message-timestamp': ts, 'twitch-eventsub-message-type': 'webhook_callback_verification',
      'twitch-eventsub-message-signature': `sha256=${createHmac('sha256', secret).update(id + ts + body).digest('hex')}`,
    };
    const res = await deliver(trigger.url, body, headers);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(res.text).toBe('pogchamp-kappa-360noscope-vohiyo');
  });

  it('discord: an interactions PING gets PONG, a webhook-events PING 204, both signed', async () => {
    const { publicKey, privateKey } = generateKeyPairSync('ed25519');
    const hexKey = (publicKey.export({ format: 'der', type: 'spki' }) as Buffer).subarray(-32).toString('hex');
    const { token, trigger } = await triggerOf('discord', hexKey);
    const signed = (body: string) => {
      const ts = nowSeconds();
      return { 'x-signature-timestamp': ts, 'x-signature-ed25519': sign(null, Buffer.from(ts + body), privateKey).toString('hex') };
    };
    const ping = JSON.stringify({ type: 1, id: 'ping_1', application_id: 'app_1' });
    const pong = await deliver(trigger.url, ping, signed(ping));
    expect(pong.status).toBe(200);
    expect(pong.json).toEqual({ type: 1 });
    const eventsPing = JSON.stringify({ version: 1, application_id: 'app_1', type: 0 });
    const answered = await deliver(trigger.url, eventsPing, signed(eventsPing));
    expect(answered.status).toBe(204);
    // A bad signature must be 401, or Discord removes the URL.
    expect((await deliver(trigger.url, ping, { ...signed(ping), 'x-signature-ed25519': '00'.repeat(64) })).status).toBe(401);
    const recorded = await deliveries(token, trigger.id, 3);
    expect(recorded.map((e) => e.status).sort()).toEqual(['handshake', 'handshake', 'refused']);
  });

  it('microsoft_graph: a POST with ?validationToken is answered with the token as text/plain, with no signature', async () => {
    const { trigger } = await triggerOf('microsoft_graph', 'client-state-secret');
    const res = await fetch(`${trigger.url}?validationToken=${encodeURIComponent('Validation: Testing client application reachability for subscription Request-Id: 25fa4c7b')}`, { method: 'POST' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(await res.text()).toBe('Validation: Testing client application reachability for subscription Request-Id: 25fa4c7b');
  });

  it('woocommerce: the unsigned creation ping gets exactly 200 and runs no flow; any other unsigned delivery is 401', async () => {
    const { token, trigger } = await triggerOf('woocommerce', 'wc-secret');
    const res = await deliver(trigger.url, 'webhook_id=42', { 'content-type': 'application/x-www-form-urlencoded' });
    expect(res.status).toBe(200);
    expect(res.text).toBe('');
    expect((await deliver(trigger.url, JSON.stringify({ id: 42 }))).status).toBe(401);
    const recorded = await deliveries(token, trigger.id, 2);
    expect(recorded.map((e) => e.status).sort()).toEqual(['handshake', 'refused']);
  });

  it('slack: the URL challenge is still answered, and recorded as a handshake', async () => {
    const token = await stack.token('handshakes-slack');
    const trigger = await createTrigger(stack, token, { flow: 'echo' });
    const res = await deliver(trigger.url, JSON.stringify({ token: 't', challenge: 'abc123', type: 'url_verification' }));
    expect(res.json).toEqual({ challenge: 'abc123' });
    expect((await deliveries(token, trigger.id, 1))[0]).toMatchObject({ status: 'handshake', type: 'slack_url_verification' });
  });
});

describe('senders that hand their secret over in the handshake', () => {
  it('asana: created without a secret; refuses deliveries until the handshake; echoes X-Hook-Secret and signs with it from then on', async () => {
    const token = await stack.token('handshakes-asana');
    const trigger = await createTrigger(stack, token, { flow: 'echo', signature: { service: 'asana' } });
    const event = JSON.stringify({ events: [{ action: 'changed', resource: { gid: '1', resource_type: 'task' } }] });
    expect((await deliver(trigger.url, event)).status).toBe(401);

    const hookSecret = 'b537207f20cbfa02357cf448134da559e8bd39d61597dcd5631b8012eae53e81';
    const handshake = await fetch(trigger.url, { method: 'POST', headers: { 'x-hook-secret': hookSecret } });
    expect(handshake.status).toBe(200);
    expect(handshake.headers.get('x-hook-secret')).toBe(hookSecret);

    const signature = createHmac('sha256', hookSecret).update(event).digest('hex');
    // A refusal is rechecked against the stored trigger, so the new secret works at once.
    expect((await deliver(trigger.url, event, { 'x-hook-signature': signature })).status).toBe(200);
    expect((await deliver(trigger.url, event, { 'x-hook-signature': '0'.repeat(64) })).status).toBe(401);
    // A second handshake cannot replace the secret: it is a delivery like any other, unsigned.
    expect((await fetch(trigger.url, { method: 'POST', headers: { 'x-hook-secret': 'attacker-secret' } })).status).toBe(401);
    const recorded = await waitForExecutions(stack, token, trigger.id, (list) => list.length === 5 && list.some((e) => e.status === 'succeeded'));
    expect(recorded.filter((e) => e.status === 'handshake').map((e) => e.type)).toEqual(['asana_hook_secret']);
  });

  it('notion: the verification_token becomes the signing secret, shown to the owner once, and kept out of the delivery', async () => {
    const token = await stack.token('handshakes-notion');
    const trigger = await createTrigger(stack, token, { flow: 'echo', signature: { service: 'notion' } });
    const verificationToken = 'secret_tMrlL1qK5vuQAh1b6cZGhFChZTSYJlce98V0pYn7yBl';
    expect((await deliver(trigger.url, JSON.stringify({ verification_token: verificationToken }))).status).toBe(200);
    const [handshake] = await waitForExecutions(stack, token, trigger.id, (list) => list.length === 1);
    expect(handshake).toMatchObject({ status: 'handshake', type: 'notion_verification' });
    const detail = await call(stack, 'GET', `/triggers/${trigger.id}/executions/${handshake.execution_id}`, { token });
    expect(detail.text).not.toContain(verificationToken);

    const first = await call(stack, 'GET', `/triggers/${trigger.id}`, { token });
    expect(first.json.data.signature.verification_token).toBe(verificationToken);
    const second = await call(stack, 'GET', `/triggers/${trigger.id}`, { token });
    expect(second.json.data.signature).not.toHaveProperty('verification_token');

    const event = JSON.stringify({ id: 'evt_notion_1', type: 'page.created', entity: { id: 'p1', type: 'page' } });
    const signature = `sha256=${createHmac('sha256', verificationToken).update(event).digest('hex')}`;
    expect((await deliver(trigger.url, event, { 'x-notion-signature': signature })).status).toBe(200);
  });

  it('asana: a handover after the window (default 600 s) is 401, recorded as refused without the secret, and plants nothing', async () => {
    const token = await stack.token('handshakes-window');
    const trigger = await createTrigger(stack, token, { flow: 'echo', signature: { service: 'asana' } });
    const signature = trigger.signature as Record<string, unknown>;
    expect(signature).toMatchObject({ handshake_window_seconds: 600, handed_over_at: null, handed_over_source_ip: null });
    expect(Date.parse(signature.handshake_awaited_until as string) - Date.parse(trigger.created_at as string)).toBe(600_000);

    const attackerSecret = 'attacker-planted-secret-0123456789';
    const event = JSON.stringify({ events: [{ action: 'changed' }] });
    await later(601, async () => {
      const handover = await fetch(trigger.url, { method: 'POST', headers: { 'x-hook-secret': attackerSecret } });
      expect(handover.status).toBe(401);
      expect(handover.headers.get('x-hook-secret')).toBeNull();
      // Nothing was planted: the attacker's signature verifies nothing.
      expect((await deliver(trigger.url, event, { 'x-hook-signature': createHmac('sha256', attackerSecret).update(event).digest('hex') })).status).toBe(401);
    });
    const recorded = await waitForExecutions(stack, token, trigger.id, (list) => list.length === 2);
    expect(recorded.map((e) => [e.status, e.error])).toEqual([['refused', 'invalid_signature'], ['refused', 'invalid_signature']]);
    const details = await Promise.all(recorded.map((e) => call(stack, 'GET', `/triggers/${trigger.id}/executions/${e.execution_id}`, { token })));
    const handover = details.find((d) => d.json.data.request.headers['x-hook-secret'] !== undefined)!;
    expect(handover.json.data.request.headers['x-hook-secret']).toBe('[redacted]');
    expect(details.map((d) => d.text).join('')).not.toContain(attackerSecret);
    const after = (await call(stack, 'GET', `/triggers/${trigger.id}`, { token })).json.data.signature;
    expect(after).toMatchObject({ handed_over_at: null, handed_over_source_ip: null });
  });

  it('asana: inside its window a handover is adopted and shown (when, from where, never the secret); await-handshake forgets it and takes the next', async () => {
    const token = await stack.token('handshakes-rearm');
    const trigger = await createTrigger(stack, token, { flow: 'echo', signature: { service: 'asana', handshake_window_seconds: 60 } });
    const first = 'first-handed-over-secret-abcdef0123';
    const event = JSON.stringify({ events: [{ action: 'added' }] });
    const signed = (secret: string) => ({ 'x-hook-signature': createHmac('sha256', secret).update(event).digest('hex') });
    const handedAt = Date.now();
    await later(59, async () => {
      expect((await fetch(trigger.url, { method: 'POST', headers: { 'x-hook-secret': first } })).status).toBe(200);
    });
    const shown = await call(stack, 'GET', `/triggers/${trigger.id}`, { token });
    expect(shown.json.data.signature).toMatchObject({ service: 'asana', handshake_window_seconds: 60, handshake_awaited_until: null, handed_over_source_ip: expect.stringMatching(/127\.0\.0\.1/) });
    expect(Date.parse(shown.json.data.signature.handed_over_at) - handedAt).toBeGreaterThanOrEqual(59_000);
    expect(shown.text).not.toContain(first);
    const [handshake] = await waitForExecutions(stack, token, trigger.id, (list) => list.length === 1);
    const stored = await call(stack, 'GET', `/triggers/${trigger.id}/executions/${handshake.execution_id}`, { token });
    expect(stored.json.data).toMatchObject({ status: 'handshake', type: 'asana_hook_secret' });
    expect(stored.json.data.request.headers['x-hook-secret']).toBe('[redacted]');
    expect(stored.text).not.toContain(first);
    expect((await deliver(trigger.url, event, signed(first))).status).toBe(200);

    // The owner does not recognise it: reject and wait again.
    const rearmed = await call(stack, 'POST', `/triggers/${trigger.id}/await-handshake`, { token });
    expect(rearmed.status).toBe(200);
    expect(rearmed.json.data.signature).toMatchObject({ handed_over_at: null, handed_over_source_ip: null, handshake_window_seconds: 60 });
    expect(Date.parse(rearmed.json.data.signature.handshake_awaited_until)).toBeGreaterThan(Date.now());
    expect((await deliver(trigger.url, event, signed(first))).status).toBe(401);
    const second = 'second-handed-over-secret-9876543210';
    expect((await fetch(trigger.url, { method: 'POST', headers: { 'x-hook-secret': second } })).status).toBe(200);
    expect((await deliver(trigger.url, event, signed(second))).status).toBe(200);
    expect((await deliver(trigger.url, event, signed(first))).status).toBe(401);
  });

  it('await-handshake is for asana and notion only; handshake_window_seconds is 60 to 3600 and theirs only', async () => {
    const token = await stack.token('handshakes-window-rules');
    const stripe = await createTrigger(stack, token, { flow: 'echo', signature: { service: 'stripe', secret: 'whsec_x' } });
    const refused = await call(stack, 'POST', `/triggers/${stripe.id}/await-handshake`, { token });
    expect(refused.status).toBe(400);
    expect(refused.json.error).toBe('validation_error');
    expect((await call(stack, 'POST', '/triggers/0000000000000000000000/await-handshake', { token })).status).toBe(404);
    for (const signature of [
      { service: 'asana', handshake_window_seconds: 59 }, { service: 'notion', handshake_window_seconds: 3601 }, { service: 'asana', handshake_window_seconds: 1.5 },
      { service: 'github', secret: 's', handshake_window_seconds: 600 },
    ]) {
      const res = await call(stack, 'POST', '/triggers', { token, body: { flow: 'echo', signature } });
      expect(res.status, JSON.stringify(signature)).toBe(400);
      expect(res.json.message).toMatch(/handshake_window_seconds/);
    }
    expect((await call(stack, 'POST', '/triggers', { token, body: { flow: 'echo', signature: { service: 'notion', handshake_window_seconds: 3600 } } })).status).toBe(201);
  });

  it('any other sender still needs its secret when the trigger is created', async () => {
    const res = await call(stack, 'POST', '/triggers', { token: await stack.token('handshakes-asana'), body: { flow: 'echo', signature: { service: 'stripe' } } });
    expect(res.status).toBe(400);
    expect(res.json.message).toMatch(/secret is required/);
  });
});

describe('GET handshakes', () => {
  // Changed with issue 30: a meta trigger needs its own verify_token (the app secret is never one), so this one sets it.
  it('meta: hub.mode=subscribe with the right verify token echoes the challenge; a wrong token is 401', async () => {
    const trigger = await createTrigger(stack, await stack.token('handshakes-meta'), { flow: 'echo', signature: { service: 'meta', secret: 'meta-app-secret', verify_token: 'meta-verify-token' } });
    const ok = await fetch(`${trigger.url}?hub.mode=subscribe&hub.verify_token=meta-verify-token&hub.challenge=1158201444`);
    expect(ok.status).toBe(200);
    expect(await ok.text()).toBe('1158201444');
    expect((await fetch(`${trigger.url}?hub.mode=subscribe&hub.verify_token=wrong&hub.challenge=1158201444`)).status).toBe(401);
  });

  it('meta: with signature.verify_token set, the handshake must carry that token, not the secret', async () => {
    const token = await stack.token('handshakes-meta');
    const trigger = await createTrigger(stack, token, { flow: 'echo', signature: { service: 'meta', secret: 'meta-app-secret', verify_token: 'my-own-verify-token' } });
    expect(JSON.stringify(trigger)).not.toContain('my-own-verify-token');
    const ok = await fetch(`${trigger.url}?hub.mode=subscribe&hub.verify_token=my-own-verify-token&hub.challenge=77`);
    expect(ok.status).toBe(200);
    expect(await ok.text()).toBe('77');
    expect((await fetch(`${trigger.url}?hub.mode=subscribe&hub.verify_token=meta-app-secret&hub.challenge=77`)).status).toBe(401);
    const elsewhere = await call(stack, 'POST', '/triggers', { token, body: { flow: 'echo', signature: { service: 'github', secret: 's', verify_token: 't' } } });
    expect(elsewhere.status).toBe(400);
  });

  it('dropbox: ?challenge is echoed as text/plain with nosniff', async () => {
    const { trigger } = await triggerOf('dropbox', 'dropbox-app-secret');
    const res = await fetch(`${trigger.url}?challenge=abcDEF123`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(await res.text()).toBe('abcDEF123');
  });

  it('x: ?crc_token is answered with its HMAC under the consumer secret', async () => {
    const { trigger } = await triggerOf('x', 'x-consumer-secret');
    const res = await fetch(`${trigger.url}?crc_token=Y3JjLTEyMy10b2tlbg==`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ response_token: `sha256=${createHmac('sha256', 'x-consumer-secret').update('Y3JjLTEyMy10b2tlbg==').digest('base64')}` });
  });

  it('okta: the verification challenge is answered once its authorization header verifies', async () => {
    const { trigger } = await triggerOf('okta', 'Authorization: okta-shared-secret');
    const res = await fetch(trigger.url, { headers: { authorization: 'okta-shared-secret', 'x-okta-verification-challenge': 'ch4ll3ng3' } });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ verification: 'ch4ll3ng3' });
    expect((await fetch(trigger.url, { headers: { 'x-okta-verification-challenge': 'ch4ll3ng3' } })).status).toBe(401);
  });

  it('a GET to a trigger whose sender has no GET handshake, or that is not the handshake, is still 405', async () => {
    const { trigger } = await triggerOf('stripe', 'whsec_stripe_handshake');
    const res = await fetch(`${trigger.url}?challenge=x`);
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
    const { trigger: dropbox } = await triggerOf('dropbox', 'dropbox-app-secret');
    expect((await fetch(dropbox.url)).status).toBe(405);
    const plain = await createTrigger(stack, await stack.token('handshakes-plain'), { flow: 'echo' });
    expect((await fetch(`${plain.url}?hub.mode=subscribe&hub.challenge=1`)).status).toBe(405);
  });
});

describe('handshakes are listed as deliveries', () => {
  it('GET /triggers/{id}/executions?status=handshake finds them', async () => {
    const { token, trigger } = await triggerOf('dropbox', 'dropbox-app-secret');
    await fetch(`${trigger.url}?challenge=listed`);
    await deliveries(token, trigger.id, 1);
    const res = await call(stack, 'GET', `/triggers/${trigger.id}/executions?status=handshake`, { token });
    expect(res.json.data.executions).toHaveLength(1);
    expect(res.json.data.executions[0].type).toBe('dropbox_challenge');
  });
});
