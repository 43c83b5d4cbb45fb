import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';

import { execFileSync } from 'node:child_process';

/**
 * The CLI as `npm pack` ships it: bundled once per test file (`cli/build.mjs`, about a second), so
 * that each run starts in a fraction of the time the source takes under tsx. `cli/bin/flowgate.mjs`
 * runs this same bundle once built.
 */
let bundled: string | undefined;
function cliBin(): string {
  if (bundled) return bundled;
  const out = join(mkdtempSync(join(tmpdir(), 'flowgate-cli-bin-')), 'flowgate.mjs');
  execFileSync(process.execPath, [resolve(import.meta.dirname, '../../cli/build.mjs'), out], { stdio: 'inherit' });
  return (bundled = out);
}

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
  /** stdout as JSON (`--json`). */
  json(): any;
}

/** Environment for the CLI: a config directory of its own (never the user's) and the given overrides. */
export function cliEnv(env: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const base: NodeJS.ProcessEnv = { ...process.env, FLOWGATE_CONFIG_DIR: mkdtempSync(join(tmpdir(), 'flowgate-cli-')), NO_COLOR: '1' };
  for (const name of ['FLOWGATE_BASE_URL', 'FLOWGATE_TOKEN', 'FLOWGATE_API_KEY', 'FLOWGATE_LISTEN_URL', 'FLOWGATE_PROFILE']) delete base[name];
  return { ...base, ...env };
}

/** Runs `flowgate args…` as a child process to its end. */
export function runCli(args: string[], env: NodeJS.ProcessEnv, input?: string): Promise<CliRun> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [cliBin(), ...args], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('error', fail);
    child.on('close', (code) => done({ code: code ?? -1, stdout, stderr, json: () => JSON.parse(stdout) }));
    child.stdin.end(input);
  });
}

/** A long-running `flowgate …` (listen, tail, sub): its stdout lines as they come, and its stderr. */
export interface RunningCli {
  child: ChildProcess;
  lines: string[];
  stderr(): string;
  /** Resolves with the first line (from the start) that `match` accepts. */
  waitForLine(match: (line: string) => boolean, timeoutMs?: number): Promise<string>;
  waitForStderr(text: string, timeoutMs?: number): Promise<void>;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export function startCli(args: string[], env: NodeJS.ProcessEnv): RunningCli {
  const child = spawn(process.execPath, [cliBin(), ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  let errText = '';
  const listeners = new Set<() => void>();
  const changed = () => listeners.forEach((fn) => fn());
  createInterface({ input: child.stdout! }).on('line', (line) => {
    lines.push(line);
    changed();
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    errText += chunk.toString('utf8');
    changed();
  });
  let exited: number | null | undefined;
  const exit = new Promise<number | null>((done) => child.on('close', (code) => {
    exited = code;
    changed();
    done(code);
  }));
  const until = <T>(check: () => T | undefined, what: string, timeoutMs: number) => new Promise<T>((done, fail) => {
    const attempt = () => {
      const found = check();
      if (found !== undefined) {
        listeners.delete(attempt);
        clearTimeout(timer);
        done(found);
      } else if (exited !== undefined) {
        listeners.delete(attempt);
        clearTimeout(timer);
        fail(new Error(`flowgate exited (${exited}) before ${what}; stderr: ${errText}; stdout: ${lines.join('\n')}`));
      }
    };
    const timer = setTimeout(() => {
      listeners.delete(attempt);
      fail(new Error(`timed out waiting for ${what}; stderr: ${errText}; stdout: ${lines.join('\n')}`));
    }, timeoutMs);
    listeners.add(attempt);
    attempt();
  });
  return {
    child,
    lines,
    stderr: () => errText,
    waitForLine: (match, timeoutMs = 30_000) => until(() => lines.find(match), 'a matching line', timeoutMs),
    waitForStderr: (text, timeoutMs = 30_000) => until(() => (errText.includes(text) ? true : undefined), `"${text}" on stderr`, timeoutMs).then(() => undefined),
    stop: (signal = 'SIGTERM') => {
      if (exited === undefined) child.kill(signal);
      return exit;
    },
  };
}
