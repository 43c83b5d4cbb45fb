import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '../../local/stack.js';
import { call } from '../support/local-stack.js';
import { freePort, launch, start, stop, type NpmStart } from '../support/npm-start.js';
import { signStripe } from '../support/signers.js';
import { totpCodeAt } from '../support/totp.js';
import { deliver } from '../support/webhooks.js';

/*
 * What `npm start` and `npm run token` print, as a newcomer reads it in the terminal: the engines,
 * how to get a new token, a short line per request rather than the functions' metric lines, and a token
 * minted from the data directory's own secret, with nothing to paste. Then the same data directory
 * stopped and started again (with FLOWGATE_METRICS=stdout): everything kept. Two starts for the
 * whole file, each seconds of CPU.
 */
const ROOT = resolve(import.meta.dirname, '../..');
/** One answered request, as `npm start` logs it. */
const REQUEST_LINE = /^(GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS) \/\S* (\d{3}|-) \d+ ms$/;
/** What the receiver's metric line carries for every delivery. */
const METRIC_LINE = '"WebhooksReceived":';
const WITHIN_MS = 30_000;

let dataRoot: string;
/** Only what a user's shell would have, and the same port both times: a trigger's URL holds it. */
let env: { PORT: string; WEBHOOK_PORT: string; FLOWGATE_DATA_DIR: string };
let stack: NpmStart;
/** The same data directory started again, with FLOWGATE_METRICS=stdout. */
let restarted: NpmStart;
const running: NpmStart[] = [];

beforeAll(async () => {
  dataRoot = await mkdtemp(join(tmpdir(), 'flowgate-npm-start-terminal-'));
  // The restart keeps the function URL's port, as npm start's default (PORT + 2) does: trigger URLs given before still reach it.
  env = { PORT: String(await freePort()), WEBHOOK_PORT: String(await freePort()), FLOWGATE_DATA_DIR: join(dataRoot, 'data') };
  stack = await start(env);
  running.push(stack);
});

afterAll(async () => {
  for (const started of running) await stop(started);
  await rm(dataRoot, { recursive: true, force: true });
});

/** Waits until `started` has printed a line that `matches`, and returns it. */
async function printedLine(started: Pick<NpmStart, 'output'>, matches: (line: string) => boolean): Promise<string> {
  const deadline = Date.now() + WITHIN_MS;
  for (;;) {
    const line = started.output().split('\n').find(matches);
    if (line !== undefined) return line;
    if (Date.now() > deadline) throw new Error(`no such line within ${WITHIN_MS} ms:\n${started.output()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** `npm run -s token -- …args` in the checkout, with only what a shell would have plus `env`. */
function npmRunToken(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done, fail) => {
    const child = spawn('npm', ['run', '-s', 'token', '--', ...args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.once('error', fail);
    child.once('exit', (code) => done({ code, stdout, stderr }));
  });
}

const listTriggers = (token: string) => fetch(`${stack.baseUrl}/triggers?limit=1`, { headers: { authorization: `Bearer ${token}` } });

describe('npm start in the terminal', () => {
  it('names its engines, S3 among them, and says how to get a new token', () => {
    const banner = stack.output();
    expect(banner).toContain('Local stack ready (embedded DynamoDB, SQS, S3 and Step Functions).');
    expect(banner).toMatch(/New token, when this one expires: +FLOWGATE_DATA_DIR=\S+ npm run token\n/);
  });

  it('prints one line per request (method, path without its query, status, ms) and no metric lines', async () => {
    expect((await fetch(`${stack.baseUrl}/health`)).status).toBe(200);
    expect(await printedLine(stack, (line) => line.startsWith('GET /health '))).toMatch(/^GET \/health 200 \d+ ms$/);

    expect((await listTriggers(stack.token)).status).toBe(200);
    expect(await printedLine(stack, (line) => line.startsWith('GET /triggers '))).toMatch(/^GET \/triggers 200 \d+ ms$/);
    expect(stack.output()).not.toContain('limit=1');

    // The receiver counts every delivery, refused ones too: deployed, a metric line for CloudWatch.
    expect((await fetch(`${stack.baseUrl}/webhooks/not-a-webhook`, { method: 'POST', body: '{}' })).status).toBe(404);
    expect(await printedLine(stack, (line) => line.startsWith('POST /webhooks/'))).toMatch(/^POST \/webhooks\/not-a-webhook 404 \d+ ms$/);
    expect(stack.output()).not.toContain(METRIC_LINE);
    const afterBanner = stack.output().slice(stack.output().indexOf('Requests are logged below'));
    for (const line of afterBanner.split('\n').slice(1).filter(Boolean)) expect(line).toMatch(REQUEST_LINE);
  });
});

describe('npm run token', () => {
  it('prints only a token, signed with the data directory\'s secret, that the stack accepts', async () => {
    const printed = await npmRunToken([], { FLOWGATE_DATA_DIR: join(dataRoot, 'data') });
    expect(printed.stderr).toBe('');
    expect(printed.code).toBe(0);
    expect(printed.stdout).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+\n$/);
    expect((await listTriggers(printed.stdout.trim())).status).toBe(200);
  });

  it('mints for another user and account with the arguments npm start names', async () => {
    const printed = await npmRunToken(['someone-else', 'acct-other'], { FLOWGATE_DATA_DIR: join(dataRoot, 'data') });
    expect(printed.code).toBe(0);
    const claims = JSON.parse(Buffer.from(printed.stdout.trim().split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;
    expect(claims).toMatchObject({ sub: 'someone-else', account_id: 'acct-other' });
    expect((await listTriggers(printed.stdout.trim())).status).toBe(200);
  });

  it('says in one line what to do when the data directory has no secret yet', async () => {
    const printed = await npmRunToken([], { FLOWGATE_DATA_DIR: join(dataRoot, 'never-started') });
    expect(printed.code).toBe(2);
    expect(printed.stdout).toBe('');
    expect(printed.stderr.trimEnd().split('\n')).toEqual([expect.stringContaining('start the local stack once with npm start')]);
  });
});

const asStack = (started: NpmStart) => ({ baseUrl: started.baseUrl }) as LocalStack;
const SIGNING_SECRET = 'whsec_restart-test-signing-secret';

/** A delivery signed as Stripe signs it, to the trigger's URL. */
const signedDelivery = (url: string, id: string) => {
  const body = JSON.stringify({ id, type: 'invoice.paid', data: { object: {} } });
  return deliver(url, body, signStripe({ secret: SIGNING_SECRET, body, timestamp: Math.floor(Date.now() / 1000) }));
};

/** Polls the trigger's deliveries until `count` of them have succeeded. */
async function succeeded(started: NpmStart, triggerId: string, count: number) {
  for (const deadline = Date.now() + 20_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 100))) {
    const executions = (await call(asStack(started), 'GET', `/triggers/${triggerId}/executions`, { token: started.token })).json.data.executions as { status: string; event_id: string }[];
    if (executions.filter((e) => e.status === 'succeeded').length === count) return executions;
  }
  throw new Error('the deliveries did not finish');
}

describe('npm start on the same data directory again', () => {
  it('keeps triggers, API keys, buckets, TOTP registrations, deliveries and its secrets across a restart', async () => {
    const first = stack;
    expect(first.output()).toContain(`Data directory:    ${env.FLOWGATE_DATA_DIR} (created)`);
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
    // Started again with the metric lines on, for the FLOWGATE_METRICS test below.
    restarted = await start({ ...env, FLOWGATE_METRICS: 'stdout' });
    running.push(restarted);
    const second = restarted;
    expect(second.output()).toContain(`Data directory:    ${env.FLOWGATE_DATA_DIR} (reopened)`);
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
  });
});

describe('FLOWGATE_METRICS', () => {
  it('refuses a value it does not know, in one line, before starting anything', async () => {
    const refused = launch({ PORT: String(await freePort()), FLOWGATE_METRICS: 'yes', FLOWGATE_DATA_DIR: join(dataRoot, 'refused') });
    expect(await refused.exited).toBe(1);
    expect(refused.output().trimEnd().split('\n')).toEqual(['FLOWGATE_METRICS must be stdout (print the metric lines) or off (the default)']);
  });

  it('=stdout prints the metric lines beside the request lines', async () => {
    expect(restarted, 'started by the restart test above').toBeDefined();
    expect((await fetch(`${restarted.baseUrl}/webhooks/not-a-webhook`, { method: 'POST', body: '{}' })).status).toBe(404);
    await printedLine(restarted, (line) => line.startsWith('POST /webhooks/not-a-webhook 404 '));
    expect(restarted.output()).toContain(METRIC_LINE);
  });
});
