import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import type { LocalStack } from '../../local/stack.js';
import { call } from '../support/local-stack.js';
import { freePort, start, stop, type NpmStart } from '../support/npm-start.js';
import { signStripe } from '../support/signers.js';
import { totpCodeAt } from '../support/totp.js';
import { deliver } from '../support/webhooks.js';

const running: NpmStart[] = [];
let root: string | undefined;
afterAll(async () => {
  await Promise.all(running.map((stack) => stop(stack, 'SIGKILL')));
  if (root) await rm(root, { recursive: true, force: true });
});

const asStack = (stack: NpmStart) => ({ baseUrl: stack.baseUrl }) as LocalStack;
const SIGNING_SECRET = 'whsec_restart-test-signing-secret';

/** A delivery signed as Stripe signs it, to the trigger's URL. */
const signedDelivery = (url: string, id: string) => {
  const body = JSON.stringify({ id, type: 'invoice.paid', data: { object: {} } });
  return deliver(url, body, signStripe({ secret: SIGNING_SECRET, body, timestamp: Math.floor(Date.now() / 1000) }));
};

/** Polls the trigger's deliveries until `count` of them have succeeded. */
async function succeeded(stack: NpmStart, triggerId: string, count: number) {
  for (const deadline = Date.now() + 20_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 100))) {
    const executions = (await call(asStack(stack), 'GET', `/triggers/${triggerId}/executions`, { token: stack.token })).json.data.executions as { status: string; event_id: string }[];
    if (executions.filter((e) => e.status === 'succeeded').length === count) return executions;
  }
  throw new Error('the deliveries did not finish');
}

it('npm start keeps triggers, API keys, buckets, TOTP registrations, deliveries and its secrets across a restart on the same data directory', async () => {
  root = await mkdtemp(join(tmpdir(), 'flowgate-restart-'));
  const dataDir = join(root, 'data');
  // Only what a user's shell would have, and the same port both times: the trigger's URL holds it.
  const env = { PORT: String(await freePort()), FLOWGATE_DATA_DIR: dataDir };

  const first = await start(env);
  running.push(first);
  expect(first.output()).toContain(`Data directory:    ${dataDir} (created)`);
  const before = asStack(first);
  const { token } = first;

  const trigger = (await call(before, 'POST', '/triggers', { token, body: { flow: 'echo', signature: { service: 'stripe', secret: SIGNING_SECRET } } })).json.data as { id: string; url: string };
  expect((await signedDelivery(trigger.url, 'evt_before')).status).toBe(200);
  const { api_key: apiKey } = (await call(before, 'POST', '/api-keys', { token })).json.data as { api_key: string };
  expect((await call(before, 'PUT', '/storage/kv/kept', { token, body: { description: 'survives restarts' } })).status).toBe(201);
  for (const key of ['a', 'b/c']) expect((await call(before, 'PUT', `/storage/kv/kept/keys/${key}`, { token, rawBody: `value of ${key}`, headers: { 'content-type': 'text/plain' } })).status).toBe(200);
  const { secret: totpSecret } = (await call(before, 'POST', '/accounts/totp-registration', { token })).json.data as { secret: string };
  const confirmed = await call(before, 'POST', '/accounts/confirm-totp-registration', { token, body: { code: totpCodeAt(totpSecret, Date.now()), secret: totpSecret } });
  expect(confirmed.status).toBe(200);
  const [recoveryCode] = confirmed.json.data.recovery_codes as string[];
  await succeeded(first, trigger.id, 1);

  expect(await stop(first, 'SIGTERM')).toBe(0);
  const second = await start(env);
  running.push(second);
  expect(second.output()).toContain(`Data directory:    ${dataDir} (reopened)`);
  // The token secret came from the data directory: the one printed is the same.
  expect(second.output()).toContain(/AUTH_JWT_SECRET: +(\S+)/.exec(first.output())![1]);
  const after = asStack(second);

  // The same URL, and the signing secret sealed before the restart opens after it.
  expect((await signedDelivery(trigger.url, 'evt_after')).json).toEqual({ status: 'accepted', event_id: 'evt_after' });
  const forged = await deliver(trigger.url, '{"id":"evt_x"}', signStripe({ secret: 'whsec_another-secret', body: '{"id":"evt_x"}', timestamp: Math.floor(Date.now() / 1000) }));
  expect(forged.status).toBe(401);
  // The API key, and the token minted before the restart.
  expect((await call(after, 'GET', '/storage/kv', { apiKey })).status).toBe(200);
  expect((await call(after, 'GET', `/triggers/${trigger.id}`, { token })).json.data.url).toBe(trigger.url);
  // The bucket and its keys.
  expect((await call(after, 'GET', '/storage/kv/kept', { apiKey })).json.data.description).toBe('survives restarts');
  expect((await call(after, 'GET', '/storage/kv/kept/keys', { token })).json.data.keys).toEqual(['a', 'b/c']);
  expect((await call(after, 'GET', '/storage/kv/kept/keys/b/c', { token })).text).toBe('value of b/c');
  // The TOTP registration.
  expect((await call(after, 'POST', '/accounts/totp-registration', { token })).json).toEqual({ error: 'already_registered', message: expect.any(String) });
  expect((await call(after, 'POST', '/accounts/recovery-codes/verify', { token, body: { code: recoveryCode } })).json).toEqual({ data: { remaining: 9, mfa_token: expect.any(String), expires_at: expect.any(String) } });
  // The deliveries, from before and after.
  const deliveries = await succeeded(second, trigger.id, 2);
  expect(deliveries.map((e) => [e.event_id, e.status])).toEqual([['evt_x', 'refused'], ['evt_after', 'succeeded'], ['evt_before', 'succeeded']]);
}, 120_000);
