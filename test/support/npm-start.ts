import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '../..');
const READY = /Bearer token[^\n]*\n\s*(\S+)/;
/** Long enough for a start on a loaded two-core machine; a start that hangs still fails well inside a test's timeout. */
const START_WITHIN_MS = 45_000;

/** A loopback port that was free a moment ago. */
export const freePort = () => new Promise<number>((done) => {
  const server = createServer().listen(0, '127.0.0.1', () => {
    const { port } = server.address() as { port: number };
    server.close(() => done(port));
  });
});

export interface NpmStart {
  child: ChildProcess;
  baseUrl: string;
  /** The bearer token it printed. */
  token: string;
  /** Everything it wrote to stdout and stderr so far. */
  output(): string;
  /** Resolves with its exit code (or signal) once it has exited. */
  exited: Promise<number | NodeJS.Signals>;
}

/**
 * `npm start` as a user runs it: `bin/local.ts` in a child process with only what a shell would
 * have plus `env`. `start` waits until it prints its token; `run` only until it exits (for starts
 * that must fail).
 */
export function launch(env: Record<string, string>, options: { uid?: number; gid?: number } = {}) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bin/local.ts'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true', POWERTOOLS_LOG_LEVEL: 'WARN', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    ...options,
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | NodeJS.Signals>((done) => child.once('exit', (code, signal) => done(code ?? signal!)));
  return { child, output: () => output, exited };
}

export async function start(env: Record<string, string> & { PORT: string }): Promise<NpmStart> {
  const launched = launch(env);
  const deadline = Date.now() + START_WITHIN_MS;
  while (!READY.test(launched.output())) {
    if (Date.now() > deadline || launched.child.exitCode !== null) {
      launched.child.kill('SIGKILL');
      throw new Error(`npm start did not get ready:\n${launched.output()}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return { ...launched, baseUrl: `http://127.0.0.1:${env.PORT}`, token: READY.exec(launched.output())![1]! };
}

/** Stops it with `signal` and waits until it has exited. */
export async function stop(stack: Pick<NpmStart, 'child' | 'exited'>, signal: NodeJS.Signals = 'SIGTERM'): Promise<number | NodeJS.Signals> {
  if (stack.child.exitCode === null && stack.child.signalCode === null) stack.child.kill(signal);
  return stack.exited;
}
