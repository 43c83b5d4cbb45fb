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

export interface LaunchOptions {
  /**
   * A command the stack runs under, given node and its arguments after its own: `withoutFileOverride`
   * to make root obey file permissions as any other user does.
   */
  via?: string[];
}

/**
 * util-linux's `setpriv` taking the capabilities that let root ignore file permissions
 * (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER) out of the child's bounding set: root stays
 * root, the owner of its checkout wherever it lives (a `0700` home or `mktemp -d` included), yet a
 * directory without write permission is refused to it as to anyone. Running as another user
 * instead (nobody) needed that user to read the checkout, which a private folder forbids.
 */
export const withoutFileOverride = ['setpriv', '--bounding-set=-dac_override,-dac_read_search,-fowner', '--'];

/**
 * `npm start` as a user runs it: `bin/local.ts` in a child process with only what a shell would
 * have plus `env`. `start` waits until it prints its token; `run` only until it exits (for starts
 * that must fail).
 */
export function launch(env: Record<string, string>, options: LaunchOptions = {}) {
  // LISTEN_PORT and WEBHOOK_PORT 0 unless a test names them: their defaults, PORT + 1 and + 2, are
  // ephemeral ports that another test's client socket may hold at that moment (EADDRINUSE at
  // start). A test that restarts and sends to trigger URLs given before names WEBHOOK_PORT.
  const [command, ...prefix] = [...(options.via ?? []), process.execPath];
  const child = spawn(command!, [...prefix, '--import', 'tsx', 'bin/local.ts'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true', POWERTOOLS_LOG_LEVEL: 'WARN', LISTEN_PORT: '0', WEBHOOK_PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
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
