/**
 * Runs a full scenario on the local stack (its handlers run in this worker) with the logger at
 * DEBUG, captures everything written to stdout, stderr and the console, and checks that no secret
 * the scenario handled appears in it: signing secrets, gateway and trigger API keys, the TOTP
 * secret, recovery codes, bearer tokens, the JWT secret and the local secrets key.
 */
import { randomBytes } from 'node:crypto';
import { format } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { call, useLocalStack } from '../support/local-stack.js';
import { signCustom, signGithub, signSlack, signStripe } from '../support/signers.js';
import { totpCodeAt } from '../support/totp.js';
import { createTrigger, deliver, TEST_FLOWS_DIR, waitForExecutions } from '../support/webhooks.js';

// ---------------------------------------------------------------------------------------------
// Capture. Registered before the stack so its start-up is captured too; restored after its stop.

const captured: string[] = [];
const restorers: (() => void)[] = [];

beforeAll(() => {
  for (const stream of [process.stdout, process.stderr]) {
    const original = stream.write;
    // Swallowed rather than passed on: at DEBUG the output is long, and it is asserted on below.
    stream.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
      captured.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
      const callback = rest.find((arg): arg is () => void => typeof arg === 'function');
      callback?.();
      return true;
    }) as typeof stream.write;
    restorers.push(() => (stream.write = original));
  }
  for (const method of ['log', 'info', 'warn', 'error', 'debug', 'trace'] as const) {
    const spy = vi.spyOn(console, method).mockImplementation((...args: unknown[]) => void captured.push(format(...args)));
    restorers.push(() => spy.mockRestore());
  }
});
afterAll(() => restorers.forEach((restore) => restore()));

/**
 * Flows retry after the visibility timeout: short here so a failing flow's attempts finish
 * soon. The wait limit leaves a loaded machine room for the fast flows, and still ends the 20 s one.
 */
/** The key sealing secrets at rest, given to the stack so the scan can look for it too. */
const LOCAL_SECRETS_KEY = randomBytes(32).toString('base64');
const stack = useLocalStack({
  flowsDir: TEST_FLOWS_DIR,
  visibilityTimeoutSeconds: 2,
  env: { POWERTOOLS_LOG_LEVEL: 'DEBUG', WAIT_TIMEOUT_MS: '8000', TRIGGER_CACHE_TTL_MS: '0', LOCAL_SECRETS_KEY },
});

// ---------------------------------------------------------------------------------------------
// The scenario: everything that handles a secret, good and bad.

const SIGNING_SECRETS = {
  github: 'log-test-github-secret-7f3a9c',
  githubRotated: 'log-test-github-rotated-51d0e2',
  stripe: 'whsec_log_test_stripe_2b8e41',
  slack: 'log-test-slack-secret-c09a77',
  custom: 'log-test-custom-secret-93be10',
  stripeBeforeRotation: 'whsec_log_test_before_rotation_6c1f0a',
  stripeAfterRotation: 'whsec_log_test_after_rotation_d472b8',
};
const CUSTOM = { algorithm: 'sha256', header: 'x-signature', encoding: 'hex', prefix: 'sha256=' } as const;

/** Every secret seen, by what it is. */
const secrets = new Map<string, string>();
const remember = (what: string, value: string | undefined) => {
  if (!value) throw new Error(`scenario did not produce ${what}`);
  secrets.set(what, value);
};

const nowSeconds = () => Math.floor(Date.now() / 1000);

async function scenario() {
  remember('JWT secret', stack.jwtSecret);
  remember('local secrets key', LOCAL_SECRETS_KEY);
  for (const [name, secret] of Object.entries(SIGNING_SECRETS)) remember(`signing secret (${name})`, secret);

  const owner = await stack.token('log-owner');
  const mfaUser = await stack.token('log-mfa-user');
  remember('bearer token (owner)', owner);
  remember('bearer token (mfa user)', mfaUser);

  // Gateway API keys: create, use, revoke, use the revoked one.
  const keys = [];
  for (let i = 0; i < 2; i++) keys.push((await call(stack, 'POST', '/api-keys', { token: owner })).json.data);
  keys.forEach((key, i) => remember(`gateway API key ${i}`, key.api_key));
  expect((await call(stack, 'GET', '/storage/kv', { apiKey: keys[0].api_key })).status).toBe(200);
  expect((await call(stack, 'PUT', '/storage/kv/logs', { apiKey: keys[0].api_key, body: { description: 'log test' } })).status).toBe(201);
  expect((await call(stack, 'PUT', '/storage/kv/logs/keys/k', { apiKey: keys[0].api_key, rawBody: 'v', headers: { 'content-type': 'text/plain' } })).status).toBe(200);
  expect((await call(stack, 'DELETE', `/api-keys/${keys[1].id}`, { token: owner })).status).toBe(204);
  expect((await call(stack, 'GET', '/storage/kv', { apiKey: keys[1].api_key })).status).toBe(401);
  expect((await call(stack, 'GET', '/storage/kv', { headers: { 'x-api-key': `${keys[0].api_key}x` } })).status).toBe(401);

  // TOTP: a wrong code, the right one, recovery codes used right and wrong.
  const started = (await call(stack, 'POST', '/accounts/totp-registration', { token: mfaUser })).json.data;
  remember('TOTP secret', started.secret);
  const wrong = ['000000', '111111', '222222'].find((code) => code !== totpCodeAt(started.secret, Date.now()))!;
  expect((await call(stack, 'POST', '/accounts/confirm-totp-registration', { token: mfaUser, body: { code: wrong, secret: started.secret } })).status).toBe(400);
  const confirmed = await call(stack, 'POST', '/accounts/confirm-totp-registration', { token: mfaUser, body: { code: totpCodeAt(started.secret, Date.now()), secret: started.secret } });
  expect(confirmed.status).toBe(200);
  const recoveryCodes: string[] = confirmed.json.data.recovery_codes;
  recoveryCodes.forEach((code, i) => remember(`recovery code ${i}`, code));
  expect((await call(stack, 'POST', '/accounts/recovery-codes/verify', { token: mfaUser, body: { code: recoveryCodes[0] } })).status).toBe(200);
  expect((await call(stack, 'POST', '/accounts/recovery-codes/verify', { token: mfaUser, body: { code: recoveryCodes[0] } })).status).toBe(401);
  expect((await call(stack, 'POST', '/accounts/recovery-codes/verify', { token: mfaUser, body: { code: 'zzzz-zzzz-zz' } })).status).toBe(401);

  // Triggers with signing secrets and API keys; a key regenerated and a secret rotated.
  const poisonous = await createTrigger(stack, owner, { flow: 'fails-on-type', api_key_enabled: true, signature: { service: 'github', secret: SIGNING_SECRETS.github } });
  remember('trigger API key (first)', poisonous.api_key);
  const regenerated = await call(stack, 'POST', `/triggers/${poisonous.id}/regenerate-api-key`, { token: owner });
  const triggerKey: string = regenerated.json.data.api_key;
  remember('trigger API key (regenerated)', triggerKey);
  expect((await call(stack, 'PATCH', `/triggers/${poisonous.id}`, { token: owner, body: { signature: { service: 'github', secret: SIGNING_SECRETS.githubRotated } } })).status).toBe(200);

  const waitEcho = await createTrigger(stack, owner, { flow: 'echo', response_mode: 'wait', signature: { service: 'stripe', secret: SIGNING_SECRETS.stripe } });
  const waitSlow = await createTrigger(stack, owner, { flow: 'slow', response_mode: 'wait', signature: { service: 'slack', secret: SIGNING_SECRETS.slack } });
  const doomed = await createTrigger(stack, owner, { flow: 'always-fails', api_key_enabled: true, signature: { service: 'custom', secret: SIGNING_SECRETS.custom, custom: CUSTOM } });
  remember('trigger API key (doomed)', doomed.api_key);
  const waitFailing = await createTrigger(stack, owner, { flow: 'always-fails', response_mode: 'wait' });

  // Deliveries: signed and keyed (header and query), a poison event, bad keys and signatures.
  const github = async (body: string, event: string, secret = SIGNING_SECRETS.githubRotated) =>
    ({ ...(await signGithub({ secret, body })), 'x-github-event': event, 'x-api-key': triggerKey });
  const ok = JSON.stringify({ id: 'evt_log_ok', amount: 1 });
  const poison = JSON.stringify({ id: 'evt_log_poison' });
  expect((await deliver(poisonous.url, ok, await github(ok, 'ok'))).status).toBe(200);
  expect((await deliver(poisonous.url, poison, await github(poison, 'poison'))).status).toBe(200);
  expect((await deliver(`${poisonous.url}?api_key=${triggerKey}`, ok, { ...(await github(ok, 'ok')), 'x-api-key': '' })).status).toBe(200);
  expect((await deliver(poisonous.url, ok, await github(ok, 'ok', SIGNING_SECRETS.github))).status).toBe(401); // the rotated-out secret
  expect((await deliver(poisonous.url, ok, { ...(await github(ok, 'ok')), 'x-api-key': poisonous.api_key! })).status).toBe(401); // the replaced key
  expect((await deliver(poisonous.url, ok, { ...(await github(ok, 'ok')), 'x-api-key': `${triggerKey}0` })).status).toBe(401);

  const charge = JSON.stringify({ id: 'evt_log_charge', type: 'charge.succeeded' });
  expect((await deliver(waitEcho.url, charge, signStripe({ secret: SIGNING_SECRETS.stripe, body: charge, timestamp: nowSeconds() }))).status).toBe(200);
  expect((await deliver(waitEcho.url, charge, signStripe({ secret: SIGNING_SECRETS.stripe, body: charge, timestamp: nowSeconds() - 900 }))).status).toBe(401);

  const slow = JSON.stringify({ type: 'event_callback', event_id: 'Ev_log_slow' });
  expect((await deliver(waitSlow.url, slow, signSlack({ secret: SIGNING_SECRETS.slack, body: slow, timestamp: nowSeconds() }))).status).toBe(504);

  const doomedBody = JSON.stringify({ id: 'evt_log_doomed' });
  expect((await deliver(doomed.url, doomedBody, { ...signCustom(CUSTOM, SIGNING_SECRETS.custom, doomedBody), 'x-api-key': doomed.api_key! })).status).toBe(200);
  expect((await deliver(doomed.url, doomedBody, { ...signCustom(CUSTOM, 'wrong', doomedBody), 'x-api-key': doomed.api_key! })).status).toBe(401);
  expect((await deliver(waitFailing.url, '{"id":"evt_log_wait_fail"}')).status).toBe(502);

  // A secret rotated and a key regenerated, both with an overlap: old and new accepted, others refused.
  const rolled = await createTrigger(stack, owner, { flow: 'echo', event_filter: ['listed'], api_key_enabled: true, signature: { service: 'stripe', secret: SIGNING_SECRETS.stripeBeforeRotation } });
  remember('trigger API key (before the overlap)', rolled.api_key);
  expect((await call(stack, 'POST', `/triggers/${rolled.id}/rotate-signing-secret`, { token: owner, body: { secret: SIGNING_SECRETS.stripeAfterRotation, previous_secret_expires_in_seconds: 600 } })).status).toBe(200);
  const rekeyed = await call(stack, 'POST', `/triggers/${rolled.id}/regenerate-api-key`, { token: owner, body: { previous_key_expires_in_seconds: 600 } });
  remember('trigger API key (after the overlap)', rekeyed.json.data.api_key);
  const unlisted = JSON.stringify({ id: 'evt_log_rolled', type: 'unlisted' });
  const stripeWith = (secret: string, key: string) => ({ ...signStripe({ secret, body: unlisted, timestamp: nowSeconds() }), 'x-api-key': key });
  expect((await deliver(rolled.url, unlisted, stripeWith(SIGNING_SECRETS.stripeBeforeRotation, rolled.api_key!))).status).toBe(200);
  expect((await deliver(rolled.url, unlisted, stripeWith(SIGNING_SECRETS.stripeAfterRotation, rekeyed.json.data.api_key))).status).toBe(200);
  expect((await deliver(rolled.url, unlisted, stripeWith('whsec_log_test_wrong', rekeyed.json.data.api_key))).status).toBe(401);
  const fenced = await createTrigger(stack, owner, { flow: 'echo', allowed_source_ips: ['10.0.0.0/8'], api_key_enabled: true });
  remember('trigger API key (fenced)', fenced.api_key);
  expect((await deliver(fenced.url, unlisted, { 'x-api-key': fenced.api_key! })).status).toBe(403);

  // A request the service may fault on, so the fault path's logging is exercised too.
  await call(stack, 'GET', `/triggers/${poisonous.id}/executions?cursor=${Buffer.from('{"sk":"ZZZ"}').toString('base64url')}`, { token: owner });

  // Let the queued flows finish: the poison event and the doomed one fail on every receive.
  await waitForExecutions(stack, owner, poisonous.id, (e) => {
    const ran = e.filter((x) => x.status !== 'refused');
    return ran.length === 3 && ran.every((x) => x.status === 'succeeded' || x.status === 'failed');
  }, 40_000);
  await waitForExecutions(stack, owner, doomed.id, (e) => e.find((x) => x.status !== 'refused')?.status === 'failed', 40_000);

  // Everything an operator can read about the deliveries: every execution, listed and in detail.
  const triggers = (await call(stack, 'GET', '/triggers?limit=500', { token: owner })).json.data.triggers as { id: string }[];
  for (const { id } of triggers) {
    const listed = await call(stack, 'GET', `/triggers/${id}/executions?limit=500`, { token: owner });
    executionReads.push(listed.text);
    for (const execution of listed.json.data.executions as { execution_id: string }[]) {
      executionReads.push((await call(stack, 'GET', `/triggers/${id}/executions/${execution.execution_id}`, { token: owner })).text);
    }
  }
}

/** The bodies of every execution read (list and detail) at the end of the scenario. */
const executionReads: string[] = [];

describe('log output of a full scenario', () => {
  beforeAll(scenario, 90_000);

  it('runs the handlers with the logger at DEBUG', async () => {
    const { logLevelName } = await import('../../functions/shared/logger.js');
    expect(logLevelName()).toBe('DEBUG');
  });

  it('captured the service\'s own log lines (failed flow attempts), so the capture works', () => {
    expect(captured.join('')).toContain('flow attempt failed');
  });

  it('execution reads show refused deliveries with their requests, and no API key or signing secret', () => {
    const reads = executionReads.join('\n');
    expect(reads).toContain('"status":"refused"');
    expect(reads).toContain('"x-api-key":"[redacted]"');
    const leaks = [...secrets].filter(([, value]) => reads.includes(value)).map(([what]) => what);
    expect(leaks).toEqual([]);
  });

  it('contains none of the secrets, API keys, TOTP secret, recovery codes or tokens', () => {
    const output = captured.join('');
    const leaks = [...secrets].flatMap(([what, value]) => {
      // Also its last 16 characters (a JWT's signature), in case it is logged truncated.
      const needles = value.length >= 24 ? [value, value.slice(-16)] : [value];
      return needles.filter((needle) => output.includes(needle)).map((needle) => {
        const at = output.indexOf(needle);
        return `${what} at …${output.slice(Math.max(0, at - 80), at + needle.length + 40)}…`;
      });
    });
    expect(secrets.size).toBeGreaterThanOrEqual(25);
    expect(leaks, leaks.join('\n')).toEqual([]);
  });
});
