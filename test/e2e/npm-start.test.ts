import { spawn, type ChildProcess } from 'node:child_process';
import { access, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cliEnv, runCli } from '../support/cli.js';

const ROOT = resolve(import.meta.dirname, '../..');

const freePort = () => new Promise<number>((done) => {
  const server = createServer().listen(0, '127.0.0.1', () => {
    const { port } = server.address() as { port: number };
    server.close(() => done(port));
  });
});

let child: ChildProcess | undefined;
let dataRoot: string | undefined;
let dataDir = '';
let base = '';
afterAll(async () => {
  child?.kill('SIGTERM');
  if (child && child.exitCode === null) await new Promise((done) => child!.once('exit', done));
  if (dataRoot) await rm(dataRoot, { recursive: true, force: true });
});

/** The README's quick start (and docs/local-stack.md): `npm start` serves, and prints a token that works. */
describe('npm start', () => {
  it('starts the local stack from a bare environment, prints a working token, and honours a handler setting', async () => {
    const port = await freePort();
    // A data directory of its own rather than the default `.flowgate/` of the checkout.
    dataRoot = await mkdtemp(join(tmpdir(), 'flowgate-npm-start-'));
    dataDir = join(dataRoot, 'data');
    // Only what a user's shell would have: no LOCAL_SECRETS_KEY, no AUTH_JWT_SECRET.
    const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', PORT: String(port), LISTEN_PORT: '0', WEBHOOK_MAX_BODY_BYTES: '64', FLOWGATE_DATA_DIR: dataDir };
    child = spawn(process.execPath, ['--import', 'tsx', 'bin/local.ts'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout!.on('data', (chunk) => (output += chunk));
    child.stderr!.on('data', (chunk) => (output += chunk));
    const deadline = Date.now() + 45_000;
    while (!/Bearer token[^\n]*\n\s*(\S+)/.test(output)) {
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`npm start did not get ready:\n${output}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const token = /Bearer token[^\n]*\n\s*(\S+)/.exec(output)![1]!;
    expect(output).toContain(`Data directory:    ${dataDir} (created)`);
    base = `http://127.0.0.1:${port}`;
    expect(await (await fetch(`${base}/health`)).json()).toEqual({ status: 'ok', backlog: { waiting: 0, oldest_age_seconds: null } });
    const created = await fetch(`${base}/triggers`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ flow: 'echo', signature: { service: 'github', secret: 'a-signing-secret' } }) });
    expect(created.status).toBe(201);
    const { data } = await created.json() as { data: { url: string } };
    // WEBHOOK_MAX_BODY_BYTES from npm start's environment reached the receiver.
    expect((await fetch(data.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ pad: 'x'.repeat(100) }) })).status).toBe(413);
    expect(output).not.toContain('NodeVersionSupportWarning');
  }, 60_000);

  it('flowgate login --local finds it on the ports it was started on, from another terminal without PORT', async () => {
    const env = cliEnv({ PORT: undefined, LISTEN_PORT: undefined });
    const login = await runCli(['login', '--local', '--data-dir', dataDir, '--json'], env);
    expect(login.stderr).toBe('');
    // LISTEN_PORT=0 gave the listen endpoint a port of the system's choosing: only the stack knows it.
    expect(login.json()).toMatchObject({ base_url: base, listen_url: expect.stringMatching(/^ws:\/\/127\.0\.0\.1:\d+$/) });
    expect(login.json().listen_url).not.toBe(`ws://127.0.0.1:${Number(new URL(base).port) + 1}`);
    const triggers = await runCli(['triggers', 'list', '--json'], env);
    expect(triggers.code).toBe(0);
    expect(triggers.json()).toHaveLength(1);
  });

  it('a stop removes the address it recorded', async () => {
    await access(join(dataDir, 'address.json'));
    child!.kill('SIGTERM');
    if (child!.exitCode === null) await new Promise((done) => child!.once('exit', done));
    await expect(access(join(dataDir, 'address.json'))).rejects.toThrow(/ENOENT/);
  });
});
