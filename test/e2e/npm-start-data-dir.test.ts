import { spawn, type ChildProcess } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, launch, withoutFileOverride, type LaunchOptions } from '../support/npm-start.js';

let root: string;
/** Parents that never reap (see `startUnreaped`), killed at the end so their zombies are reaped. */
const nonReapingParents: ChildProcess[] = [];
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'flowgate-data-dir-'));
});
afterAll(async () => {
  for (const parent of nonReapingParents) parent.kill('SIGKILL');
  await rm(root, { recursive: true, force: true });
});

/** Runs `npm start` on `dataDir` until it exits; it must not start. */
async function refused(dataDir: string, options: LaunchOptions = {}) {
  const run = launch({ PORT: String(await freePort()), FLOWGATE_DATA_DIR: dataDir }, options);
  const code = await run.exited;
  return { code, output: run.output() };
}

/** Exit code 1 and one line that says what is wrong: no stack trace. */
function expectOneLine(result: { code: number | string; output: string }, pattern: RegExp) {
  expect(result.code).toBe(1);
  expect(result.output.trimEnd().split('\n'), result.output).toHaveLength(1);
  expect(result.output).toMatch(pattern);
}

const snapshot = async (dir: string) =>
  Object.fromEntries(await Promise.all((await readdir(dir, { recursive: true })).sort().map(async (name) => [name, await readFile(join(dir, name)).catch(() => 'dir')])));

describe('npm start refuses a data directory it cannot use, in one line, and leaves it as it was', () => {
  // Each case has a directory of its own and waits on a child process of its own: run side by side.
  // (One in use by another npm start is refused too: see the crash test below.)
  it.concurrent('one this user cannot write', async () => {
    const dir = join(root, 'read-only');
    await mkdir(dir);
    await chmod(dir, 0o555);
    // root writes anywhere: then without the capabilities that let it, so the stack still runs from
    // this checkout, wherever it is (as another user it could not read one under a private folder).
    const asUser = process.getuid?.() === 0 ? { via: withoutFileOverride } : {};
    expectOneLine(await refused(dir, asUser), new RegExp(`^The data directory ${dir} is not writable by this user`));
    expect(await readdir(dir)).toEqual([]);
  });

  it.concurrent('one written by a newer Flowgate', async () => {
    const dir = join(root, 'newer');
    await mkdir(dir, { mode: 0o700 });
    await writeFile(join(dir, 'layout.json'), '{"layout": 99}\n');
    await writeFile(join(dir, 'secrets.json'), '{}\n');
    const before = await snapshot(dir);
    expectOneLine(await refused(dir), /was written by a newer Flowgate \(layout 99; this one reads layout 1\)/);
    expect(await snapshot(dir)).toEqual(before);
  });

  it.concurrent('a folder that holds something else', async () => {
    const dir = join(root, 'not-ours');
    await mkdir(dir);
    await writeFile(join(dir, 'notes.txt'), 'mine');
    expectOneLine(await refused(dir), /is not a Flowgate data directory/);
    expect(await readdir(dir)).toEqual(['notes.txt']);
  });
});

/**
 * `npm start` under a parent that never reaps its children, as in a container whose first process
 * does not: `sh` starts the stack in a process group of its own (setsid) and becomes `sleep`. A
 * stack killed there stays a zombie, its pid answering signals, until the parent goes.
 */
async function startUnreaped(env: Record<string, string>) {
  const parent = spawn('sh', ['-c', 'setsid "$0" --import tsx bin/local.ts & echo "stack pid $!"; exec sleep 600', process.execPath], {
    cwd: resolve(import.meta.dirname, '../..'),
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true', POWERTOOLS_LOG_LEVEL: 'WARN', LISTEN_PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  nonReapingParents.push(parent);
  let output = '';
  parent.stdout!.on('data', (chunk) => (output += chunk));
  parent.stderr!.on('data', (chunk) => (output += chunk));
  const deadline = Date.now() + 45_000;
  while (!/Bearer token/.test(output)) {
    if (Date.now() > deadline || /^The data directory/m.test(output)) throw new Error(`npm start did not get ready:\n${output}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return { pid: Number(/stack pid (\d+)/.exec(output)![1]), output: () => output };
}

/** The state letter of /proc/<pid>/stat: `Z` for a zombie. */
const processState = async (pid: number) => (await readFile(`/proc/${pid}/stat`, 'utf8')).replace(/^.*\) /s, '')[0];

describe('npm start after a crash', () => {
  it('starts again at once on the same directory after its process group is SIGKILLed, twice in a row, though the killed stack is still a zombie; the last one started holds the directory', async () => {
    const dir = join(root, 'crashed');
    const env = { PORT: String(await freePort()), FLOWGATE_DATA_DIR: dir };
    let stack = await startUnreaped(env);
    for (let round = 0; round < 2; round++) {
      process.kill(-stack.pid, 'SIGKILL');
      const killed = stack.pid;
      // At once: no wait for the kill to land, nor for anyone to reap the killed stack.
      stack = await startUnreaped(env);
      expect(await processState(killed)).toBe('Z');
      expect((await fetch(`http://127.0.0.1:${env.PORT}/health`)).status).toBe(200);
    }
    // Another start on the directory is refused, naming the stack that holds it, which goes on serving.
    expectOneLine(await refused(dir), new RegExp(`^The data directory ${dir} is in use by another local stack \\(pid ${stack.pid}\\)`));
    expect((await fetch(`http://127.0.0.1:${env.PORT}/health`)).status).toBe(200);
    process.kill(-stack.pid, 'SIGKILL');
  });
});
