import { createHmac, generateKeyPairSync, sign } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { call, useLocalStack } from '../support/local-stack.js';
import { createTrigger, deliver, waitForExecutions } from '../support/webhooks.js';
import { SENDERS_MD_IDS } from '../support/senders-md.js';

const stack = useLocalStack();


describe('GET /signature-services', () => {
  it('needs gateway credentials', async () => {
    const res = await call(stack, 'GET', '/signature-services');
    expect(res.status).toBe(401);
    expect(res.json).toEqual({ error: 'unauthorized', message: expect.any(String) });
  });

  it('lists at least 48 of the 50 senders, each with its name, group, docs, what to paste and whether it has a handshake; the rest with the reason', async () => {
    const res = await call(stack, 'GET', '/signature-services', { token: await stack.token('senders-reader') });
    expect(res.status).toBe(200);
    const { services, left_out } = res.json.data as { services: Record<string, unknown>[]; left_out: { id: string; reason: string }[] };
    const listed = new Set(services.map((service) => service.id));
    expect(SENDERS_MD_IDS.filter((id) => listed.has(id)).length).toBeGreaterThanOrEqual(SENDERS_MD_IDS.length - 2);
    expect(listed.has('standard_webhooks') && listed.has('custom')).toBe(true);
    for (const id of SENDERS_MD_IDS.filter((id) => !listed.has(id))) {
      expect(left_out.find((sender) => sender.id === id)?.reason, id).toMatch(/\w{10,}/);
    }
    for (const service of services) {
      // needs_verify_token added with issue 30 (a meta trigger needs its own verify token); event_type, delivery_id, batch, delivery_policy and event_names with issue 31.
      const keys = ['batch', 'category', 'delivery_id', 'delivery_policy', 'docs_url', 'event_names', 'event_type', 'handshake', 'id', 'name', 'needs_verify_token', 'secret_label', ...('limits' in service ? ['limits'] : [])];
      expect(Object.keys(service).sort()).toEqual(keys.sort());
      expect(new URL(service.docs_url as string).protocol).toBe('https:');
    }
    expect(services.find((service) => service.id === 'zoom')).toMatchObject({ name: 'Zoom', handshake: true });
    // Where each sender's event type and delivery id are, in order of the sources tried.
    expect(services.find((service) => service.id === 'gitlab')).toMatchObject({
      event_type: { sources: [{ from: 'header', name: 'x-gitlab-event' }, { from: 'json', path: ['object_kind'] }], example: 'Push Hook' },
      delivery_id: { from: 'header', name: 'idempotency-key', signed: false },
    });
    expect(services.find((service) => service.id === 'aws_sns')).toMatchObject({ event_type: { sources: [], note: expect.stringMatching(/MessageAttributes/) } });
    expect(services.find((service) => service.id === 'zoom')?.delivery_id).toBeNull();
    // What a signature leaves unprotected is said where a user picks the sender.
    expect(services.find((service) => service.id === 'mailgun')?.limits).toMatch(/payload itself is unsigned/);
    expect(services.find((service) => service.id === 'paypal')?.limits).toMatch(/CRC32/);
  });
});

describe('a catalog sender over HTTP', () => {
  it('zoom: a delivery signed as Zoom signs is accepted; a forged one is 401 invalid_signature and recorded as refused', async () => {
    const token = await stack.token('senders-zoom');
    const secret = 'zoom-secret-token-0123456789';
    const trigger = await createTrigger(stack, token, { flow: 'echo', signature: { service: 'zoom', secret } });
    const body = JSON.stringify({ event: 'meeting.started', event_ts: 1_700_000_000_000, payload: { object: { id: '123' } } });
    const timestamp = String(Math.floor(Date.now() / 1000));
    // https://developers.zoom.us/docs/api/webhooks/#verify-webhook-events
    const signature = `v0=${createHmac('sha256', secret).update(`v0:${timestamp}:${body}`).digest('hex')}`;
    expect((await deliver(trigger.url, body, { 'x-zm-request-timestamp': timestamp, 'x-zm-signature': signature })).status).toBe(200);
    const forged = await deliver(trigger.url, body, { 'x-zm-request-timestamp': timestamp, 'x-zm-signature': `v0=${'0'.repeat(64)}` });
    expect(forged.status).toBe(401);
    expect(forged.json).toEqual({ error: 'invalid_signature', message: expect.any(String) });
    const executions = await waitForExecutions(stack, token, trigger.id, (list) => list.length === 2 && list.some((e) => e.status === 'succeeded'));
    expect(executions.map((e) => e.status).sort()).toEqual(['refused', 'succeeded']);
  });

  it('custom: the assembled-content HMAC verifies a sender configured by the user alone (HubSpot v3, say)', async () => {
    const token = await stack.token('senders-custom');
    const secret = 'client-secret-of-the-app';
    const custom = {
      algorithm: 'sha256',
      key: { format: 'text' },
      content: [{ part: 'method' }, { part: 'url' }, { part: 'body' }, { part: 'timestamp' }],
      signature: { from: 'header', name: 'x-hubspot-signature-v3' },
      encoding: 'base64',
      timestamp: { source: { from: 'header', name: 'x-hubspot-request-timestamp' }, format: 'unix_milliseconds', tolerance_seconds: 300 },
    };
    const created = await call(stack, 'POST', '/triggers', { token, body: { flow: 'echo', signature: { service: 'custom', secret, custom } } });
    expect(created.status, created.text).toBe(201);
    const trigger = created.json.data as { url: string };
    const body = JSON.stringify([{ eventId: 1, subscriptionType: 'contact.creation' }]);
    const timestamp = String(Date.now());
    const signature = createHmac('sha256', secret).update(`POST${trigger.url}${body}${timestamp}`).digest('base64');
    expect((await deliver(trigger.url, body, { 'x-hubspot-request-timestamp': timestamp, 'x-hubspot-signature-v3': signature })).status).toBe(200);
    expect((await deliver(trigger.url, `${body} `, { 'x-hubspot-request-timestamp': timestamp, 'x-hubspot-signature-v3': signature })).status).toBe(401);
  });

  it('discord: an Ed25519-signed interaction is accepted with the application\'s public key as the secret; one signed by another key is 401', async () => {
    const token = await stack.token('senders-discord');
    const { publicKey, privateKey } = generateKeyPairSync('ed25519');
    const hexKey = (publicKey.export({ format: 'der', type: 'spki' }) as Buffer).subarray(-32).toString('hex');
    const trigger = await createTrigger(stack, token, { flow: 'echo', signature: { service: 'discord', secret: hexKey } });
    const body = JSON.stringify({ type: 2, id: 'interaction_1', data: { name: 'hello' } });
    const timestamp = String(Math.floor(Date.now() / 1000));
    const signed = (key: typeof privateKey) => sign(null, Buffer.from(timestamp + body), key).toString('hex');
    expect((await deliver(trigger.url, body, { 'x-signature-ed25519': signed(privateKey), 'x-signature-timestamp': timestamp })).status).toBe(200);
    const other = generateKeyPairSync('ed25519').privateKey;
    expect((await deliver(trigger.url, body, { 'x-signature-ed25519': signed(other), 'x-signature-timestamp': timestamp })).status).toBe(401);
  });

  it('a secret that could never verify its sender is 400, saying the form expected', async () => {
    const token = await stack.token('senders-secrets');
    const res = await call(stack, 'POST', '/triggers', { token, body: { flow: 'echo', signature: { service: 'discord', secret: 'not-a-hex-key' } } });
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ error: 'validation_error', message: expect.stringMatching(/^signature\.secret: .*hex/) });
  });

  it('custom settings with a mistake are 400 validation_error naming the field', async () => {
    const token = await stack.token('senders-custom');
    const custom = { algorithm: 'sha256', key: { format: 'rot13' }, content: [{ part: 'body' }], signature: { from: 'header', name: 'x-sig' }, encoding: 'hex' };
    const res = await call(stack, 'POST', '/triggers', { token, body: { flow: 'echo', signature: { service: 'custom', secret: 's', custom } } });
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ error: 'validation_error', message: expect.stringContaining('signature.custom.key.format') });
  });
});
