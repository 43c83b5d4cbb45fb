import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, useLocalStack } from '../support/local-stack.js';
import { cliEnv, runCli, startCli, type RunningCli } from '../support/cli.js';

/*
 * `flowgate listen` end to end: the CLI as a child process, the local stack's listen endpoint, and
 * a local server that checks Stripe's signature with Stripe's own library.
 */

const SECRET = 'whsec_cli_listen_test_secret_0123456789';
const stripe = new Stripe('sk_test_unused');
const stack = useLocalStack();

interface Received { path: string; verified: boolean; type?: string; id?: string }
const received: Received[] = [];
/** Bodies taken whole by path (no signature check), for the large-body test. */
const bodies = new Map<string, (body: Buffer) => void>();
let local: Server;
let localUrl = '';

beforeAll(async () => {
  // What a developer's server does: verify with the raw bytes and the stripe-signature header.
  local = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const taker = bodies.get(req.url ?? '');
      if (taker) {
        taker(raw);
        res.writeHead(200);
        return res.end();
      }
      try {
        const event = stripe.webhooks.constructEvent(raw, String(req.headers['stripe-signature']), SECRET);
        received.push({ path: req.url ?? '', verified: true, type: event.type, id: event.id });
        res.writeHead(201, { 'content-type': 'application/json', 'x-from': 'laptop' });
        res.end(JSON.stringify({ answered_by: 'laptop', id: event.id }));
      } catch (error) {
        received.push({ path: req.url ?? '', verified: false });
        res.writeHead(400, { 'content-type': 'text/plain' });
        res.end(`bad signature: ${(error as Error).message}`);
      }
    });
  });
  await new Promise<void>((done) => local.listen(0, '127.0.0.1', done));
  localUrl = `http://127.0.0.1:${(local.address() as { port: number }).port}/hooks`;
});
afterAll(async () => {
  await new Promise((done) => local.close(done));
});

async function createTrigger(token: string, body: Record<string, unknown>) {
  const created = await call(stack, 'POST', '/triggers', { token, body: { flow: 'echo', signature: { service: 'stripe', secret: SECRET }, ...body } });
  expect(created.status, created.text).toBe(201);
  return created.json.data as { id: string; url: string };
}

/** A signed Stripe event, as Stripe sends it (the fixture the CLI's `trigger` sends is tested on its own). */
function stripeDelivery(id: string) {
  const payload = JSON.stringify({ id, object: 'event', type: 'payment_intent.succeeded', data: { object: { id: 'pi_1', amount: 2000 } } });
  return { payload, headers: { 'content-type': 'application/json', 'stripe-signature': stripe.webhooks.generateTestHeaderString({ payload, secret: SECRET }) } };
}

async function send(url: string, id: string) {
  const { payload, headers } = stripeDelivery(id);
  const response = await fetch(url, { method: 'POST', headers, body: payload });
  return { status: response.status, text: await response.text(), headers: response.headers };
}

const deliveryLine = (id: string) => (line: string) => {
  try {
    return (JSON.parse(line) as { event_id?: string }).event_id === id;
  } catch {
    return false;
  }
};

async function waitFor<T>(check: () => Promise<T | undefined>, what: string, timeoutMs = 20_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const found = await check();
    if (found !== undefined) return found;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((done) => setTimeout(done, 100));
  }
}

describe('flowgate listen', () => {
  let tokenA = '';
  let tokenB = '';
  let listener: RunningCli | undefined;
  const listenEnv = (token: string) => cliEnv({ FLOWGATE_BASE_URL: stack.baseUrl, FLOWGATE_TOKEN: token, FLOWGATE_LISTEN_URL: stack.listenUrl });

  beforeAll(async () => {
    tokenA = await stack.token('cli-listen-a');
    tokenB = await stack.token('cli-listen-b');
  });
  afterAll(async () => {
    await listener?.stop();
  });

  it('forwards a Stripe event with its exact bytes and headers, so stripe.webhooks.constructEvent accepts it, and records the local status on the delivery', async () => {
    const trigger = await createTrigger(tokenA, {});
    listener = startCli(['listen', '--forward-to', localUrl, '--trigger', trigger.id, '--json'], listenEnv(tokenA));
    await listener.waitForStderr('Ready');
    const answer = await send(trigger.url, 'evt_listen_1');
    expect(answer.status).toBe(200);
    const line = JSON.parse(await listener.waitForLine(deliveryLine('evt_listen_1')));
    expect(line).toMatchObject({ trigger_id: trigger.id, sender: 'stripe', type: 'payment_intent.succeeded', local_status: 201 });
    expect(received.find((r) => r.id === 'evt_listen_1')).toMatchObject({ verified: true, type: 'payment_intent.succeeded', path: '/hooks' });
    const forwarded = await waitFor(async () => {
      const detail = await call(stack, 'GET', `/triggers/${trigger.id}/executions/${line.execution_id}`, { token: tokenA });
      return detail.json?.data?.forwarded?.length ? detail.json.data : undefined;
    }, 'the forwarded attempt');
    expect(forwarded.forwarded[0]).toMatchObject({ status: 201, listener: expect.any(String) });
    expect(forwarded.forwarded[0].ms).toBeGreaterThanOrEqual(0);
    // The flow's own run is untouched by it.
    expect(forwarded.status).toMatch(/queued|succeeded/);
  });

  it('gives a wait-mode sender the local answer when its trigger answers from a listener, and the flow\'s when it does not', async () => {
    const switched = await createTrigger(tokenA, { response_mode: 'wait', answer_from_listener: true });
    const plain = await createTrigger(tokenA, { response_mode: 'wait' });
    await listener?.stop();
    listener = startCli(['listen', '--forward-to', localUrl, '--json'], listenEnv(tokenA));
    await listener.waitForStderr('Ready');
    const fromLaptop = await send(switched.url, 'evt_wait_switched');
    expect(fromLaptop.status).toBe(201);
    expect(JSON.parse(fromLaptop.text)).toEqual({ answered_by: 'laptop', id: 'evt_wait_switched' });
    expect(fromLaptop.headers.get('x-from')).toBe('laptop');
    const fromFlow = await send(plain.url, 'evt_wait_plain');
    expect(fromFlow.status).toBe(200);
    expect(JSON.parse(fromFlow.text)).toMatchObject({ event_id: 'evt_wait_plain', received: { id: 'evt_wait_plain' } });
    // Both were forwarded; the flow ran for both.
    await listener.waitForLine(deliveryLine('evt_wait_plain'));
    const list = await call(stack, 'GET', `/triggers/${switched.id}/executions`, { token: tokenA });
    expect(list.json.data.executions[0]).toMatchObject({ event_id: 'evt_wait_switched', status: 'succeeded' });
  });

  it('listening to every trigger, a trigger made meanwhile is listened to as well, without a restart', async () => {
    const token = await stack.token('cli-listen-new-trigger');
    const first = await createTrigger(token, { name: 'first' });
    const everything = startCli(['listen', '--forward-to', localUrl, '--json'], { ...listenEnv(token), FLOWGATE_LISTEN_REFRESH_MS: '200' });
    try {
      await everything.waitForStderr('Ready: listening to 1 trigger (first)');
      const later = await createTrigger(token, { name: 'later' });
      await everything.waitForStderr('New trigger (later): connecting again');
      await everything.waitForStderr('Ready: listening to 2 triggers');
      expect((await send(later.url, 'evt_on_later')).status).toBe(200);
      expect(JSON.parse(await everything.waitForLine(deliveryLine('evt_on_later')))).toMatchObject({ trigger_id: later.id, local_status: 201 });
      expect((await send(first.url, 'evt_on_first')).status).toBe(200);
      expect(JSON.parse(await everything.waitForLine(deliveryLine('evt_on_first')))).toMatchObject({ trigger_id: first.id, local_status: 201 });
      // Each forwarded once: the connection made again resumed after what the first one had seen.
      expect(everything.lines.filter(deliveryLine('evt_on_later'))).toHaveLength(1);
      expect(everything.stderr().match(/connecting again/g)).toHaveLength(1);
    } finally {
      await everything.stop();
    }
  });

  it('with its clock 10 minutes ahead of the endpoint\'s, a delivery made between two connections is still forwarded: it resumes from the endpoint\'s time', async () => {
    const token = await stack.token('cli-listen-clock-ahead');
    await createTrigger(token, { name: 'ahead-first' });
    const ahead = startCli(['listen', '--forward-to', localUrl, '--json'], {
      ...listenEnv(token),
      // The first look for new triggers comes 3 s after ready: the delivery below is made before it.
      FLOWGATE_LISTEN_REFRESH_MS: '3000',
      CLOCK_AHEAD_MS: String(10 * 60_000),
      NODE_OPTIONS: `--import ${pathToFileURL(resolve(import.meta.dirname, '../support/clock-ahead.mjs')).href}`,
    });
    try {
      await ahead.waitForStderr('Ready: listening to 1 trigger (ahead-first)');
      const later = await createTrigger(token, { name: 'ahead-later' });
      // Not listened to yet: only the connection made for the new trigger, resuming, can bring it.
      // Resuming from the laptop's clock (10 minutes ahead), it asked for nothing older than that.
      expect((await send(later.url, 'evt_between_connections')).status).toBe(200);
      await ahead.waitForStderr('New trigger (ahead-later): connecting again');
      expect(JSON.parse(await ahead.waitForLine(deliveryLine('evt_between_connections')))).toMatchObject({ trigger_id: later.id, local_status: 201 });
    } finally {
      await ahead.stop();
    }
  });

  it('forwards a body too large for a WebSocket message by reference, byte for byte', async () => {
    const trigger = (await call(stack, 'POST', '/triggers', { token: tokenA, body: { flow: 'echo' } })).json.data as { id: string; url: string };
    // 115 KB of JSON and 14 KB of headers: over the 128 KB a message carries, under what a flow input holds.
    const bytes = Buffer.from(JSON.stringify({ id: 'evt_large', type: 'large', blob: randomBytes(86 * 1024).toString('base64') }), 'utf8');
    const seen = new Promise<Buffer>((done) => bodies.set('/large', done));
    await listener?.stop();
    listener = startCli(['listen', '--forward-to', localUrl.replace('/hooks', '/large'), '--trigger', trigger.id, '--json'], listenEnv(tokenA));
    await listener.waitForStderr('Ready');
    const posted = await fetch(trigger.url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-padding': 'p'.repeat(14_000) }, body: bytes });
    expect(posted.status, await posted.text()).toBe(200);
    expect((await seen).equals(bytes)).toBe(true);
    expect(JSON.parse(await listener.waitForLine(deliveryLine('evt_large')))).toMatchObject({ local_status: 200, body_by_reference: true });
  });

  it('refuses answer_from_listener on an acknowledge-mode trigger, naming the field', async () => {
    const refused = await call(stack, 'POST', '/triggers', { token: tokenA, body: { flow: 'echo', answer_from_listener: true } });
    expect(refused.status).toBe(400);
    expect(refused.json).toMatchObject({ error: 'validation_error', message: expect.stringContaining('answer_from_listener') });
  });

  it('a listener killed and restarted with --since receives what arrived meanwhile', async () => {
    const trigger = await createTrigger(tokenA, {});
    await listener?.stop();
    listener = startCli(['listen', '--forward-to', localUrl, '--trigger', trigger.id, '--json'], listenEnv(tokenA));
    await listener.waitForStderr('Ready');
    const before = new Date().toISOString();
    await listener.stop('SIGKILL');
    expect((await send(trigger.url, 'evt_while_away_1')).status).toBe(200);
    expect((await send(trigger.url, 'evt_while_away_2')).status).toBe(200);
    listener = startCli(['listen', '--forward-to', localUrl, '--trigger', trigger.id, '--since', before, '--json'], listenEnv(tokenA));
    const first = JSON.parse(await listener.waitForLine(deliveryLine('evt_while_away_1')));
    const second = JSON.parse(await listener.waitForLine(deliveryLine('evt_while_away_2')));
    expect(first).toMatchObject({ replayed: true, local_status: 201 });
    expect(second).toMatchObject({ replayed: true, local_status: 201 });
    // In the order they arrived.
    expect(listener.lines.findIndex(deliveryLine('evt_while_away_1'))).toBeLessThan(listener.lines.findIndex(deliveryLine('evt_while_away_2')));
    // And what comes next arrives live.
    await send(trigger.url, 'evt_after_return');
    expect(JSON.parse(await listener.waitForLine(deliveryLine('evt_after_return')))).not.toHaveProperty('replayed');
  });

  it("a listener with another account's credentials receives nothing of it, and cannot name its triggers", async () => {
    const trigger = await createTrigger(tokenA, {});
    const other = startCli(['listen', '--forward-to', localUrl, '--json'], listenEnv(tokenB));
    try {
      await other.waitForStderr('Ready: listening to 0 triggers');
      await send(trigger.url, 'evt_not_for_b');
      // A's own listener gets it: by then the push to every listener of the trigger is done.
      await listener!.stop();
      listener = startCli(['listen', '--forward-to', localUrl, '--trigger', trigger.id, '--since', '5m', '--json'], listenEnv(tokenA));
      await listener.waitForLine(deliveryLine('evt_not_for_b'));
      expect(other.lines).toEqual([]);
    } finally {
      await other.stop();
    }
    const named = await runCli(['listen', '--forward-to', localUrl, '--trigger', trigger.id], listenEnv(tokenB));
    expect(named.code).toBe(1);
    expect(named.stderr).toContain('404 not_found');
    const noCredential = await runCli(['listen', '--forward-to', localUrl], listenEnv('not-a-token'));
    expect(noCredential.code).toBe(1);
    expect(noCredential.stderr).toContain('401 unauthorized');
  });
});
