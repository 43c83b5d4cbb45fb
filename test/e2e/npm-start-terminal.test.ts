import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, launch, start, stop, type NpmStart } from '../support/npm-start.js';

/*
 * What `npm start` and `npm run token` print, as a newcomer reads it in the terminal: the engines,
 * how to get a new token, a short line per request rather than the functions' metric lines, and a token
 * minted from the data directory's own secret, with nothing to paste.
 */
const ROOT = resolve(import.meta.dirname, '../..');
/** One answered request, as `npm start` logs it. */
const REQUEST_LINE = /^(GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS) \/\S* (\d{3}|-) \d+ ms$/;
/** What the receiver's metric line carries for every delivery. */
const METRIC_LINE = '"WebhooksReceived":';
const WITHIN_MS = 30_000;

let dataRoot: string;
let stack: NpmStart;
const running: NpmStart[] = [];

beforeAll(async () => {
  dataRoot = await mkdtemp(join(tmpdir(), 'flowgate-npm-start-terminal-'));
  stack = await start({ PORT: String(await freePort()), FLOWGATE_DATA_DIR: join(dataRoot, 'data') });
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

describe('FLOWGATE_METRICS', () => {
  it('refuses a value it does not know, in one line, before starting anything', async () => {
    const refused = launch({ PORT: String(await freePort()), FLOWGATE_METRICS: 'yes', FLOWGATE_DATA_DIR: join(dataRoot, 'refused') });
    expect(await refused.exited).toBe(1);
    expect(refused.output().trimEnd().split('\n')).toEqual(['FLOWGATE_METRICS must be stdout (print the metric lines) or off (the default)']);
  });

  it('=stdout prints the metric lines beside the request lines', async () => {
    await stop(stack);
    const withMetrics = await start({ PORT: String(await freePort()), FLOWGATE_DATA_DIR: join(dataRoot, 'data'), FLOWGATE_METRICS: 'stdout' });
    running.push(withMetrics);
    expect((await fetch(`${withMetrics.baseUrl}/webhooks/not-a-webhook`, { method: 'POST', body: '{}' })).status).toBe(404);
    await printedLine(withMetrics, (line) => line.startsWith('POST /webhooks/not-a-webhook 404 '));
    expect(withMetrics.output()).toContain(METRIC_LINE);
  });
});
