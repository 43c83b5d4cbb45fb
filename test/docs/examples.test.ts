import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { call, useLocalStack } from '../support/local-stack.js';
import { examples, guidePaths, GUIDES_OF_OTHERS, jsonValues, mismatch, NO_EXAMPLE_NEEDED, OWN_GUIDES, ROOT, type Example } from './guides.js';
import { blockDone, blockMarker, FAILED, tsExamples, tsProgram } from './typescript.js';

/**
 * The docs' examples are tests: every ```sh block of README.md and docs/*.md (unless marked
 * `<!-- not-runnable -->`) runs with bash against one local stack, in order, each guide in a bash
 * session of its own (so a variable one block sets is there for the next) with `$FLOWGATE_URL`, and
 * `$TOKEN` and `$API_KEY` of an account no other guide uses. A block must exit 0; the ```json block
 * after it, when there is one, is matched against the last JSON value the block printed; a block
 * without one must print no `{"error": …}` answer. A guide that goes stale fails here.
 *
 * Its ```ts blocks run the same way, in one tsx process per guide with the same account (see
 * typescript.ts), interleaved with the sh blocks in the guide's order: a block must not throw, and the
 * ```json block after it is matched against the last JSON value it printed.
 */
const stack = useLocalStack();
const BLOCK_TIMEOUT_MS = 60_000;
const work = mkdtempSync(join(tmpdir(), 'flowgate-docs-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** One bash process for one guide: blocks are sourced into it, so what one sets the next sees. */
class BashSession {
  private readonly bash: ChildProcessWithoutNullStreams;
  private stdout = '';
  private count = 0;
  private waiting?: () => void;

  constructor(env: Record<string, string>) {
    this.bash = spawn('bash', ['--noprofile', '--norc'], { cwd: ROOT, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? work, LANG: 'C.UTF-8', ...env } });
    this.bash.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      this.stdout += chunk;
      this.waiting?.();
    });
    this.bash.stdin.write('set -o pipefail\n');
  }

  /** Runs one block in the session: its exit status and what it printed. */
  async run(code: string): Promise<{ status: number; out: string; err: string }> {
    const n = ++this.count;
    const [script, out, err] = ['sh', 'out', 'err'].map((ext) => join(work, `${process.pid}-${n}-${Math.random().toString(36).slice(2)}.${ext}`)) as [string, string, string];
    writeFileSync(script, `${code}\n`);
    const marker = `__flowgate_docs_${n}__`;
    this.bash.stdin.write(`source '${script}' > '${out}' 2> '${err}' < /dev/null; printf '\\n${marker} %s\\n' "$?"\n`);
    const started = Date.now();
    while (!this.stdout.includes(marker)) {
      if (Date.now() - started > BLOCK_TIMEOUT_MS) throw new Error(`the block did not finish within ${BLOCK_TIMEOUT_MS / 1000} s`);
      if (this.bash.exitCode !== null) throw new Error(`bash exited (${this.bash.exitCode}): a block must not call exit`);
      await new Promise<void>((done) => {
        this.waiting = done;
        setTimeout(done, 200);
      });
    }
    const status = Number(new RegExp(`${marker} (\\d+)`).exec(this.stdout)![1]);
    this.stdout = '';
    return { status, out: readFileSync(out, 'utf8'), err: readFileSync(err, 'utf8') };
  }

  close(): void {
    this.bash.stdin.end();
    this.bash.kill();
  }
}

/** A fresh account for a guide: a user's token and an API key of its own. */
async function account(guide: string): Promise<Record<string, string>> {
  const sub = `docs-${guide.replace(/\W+/g, '-')}-${Math.random().toString(36).slice(2, 8)}`;
  const token = await stack.token(sub);
  const key = await call(stack, 'POST', '/api-keys', { token, body: {} });
  expect(key.status, key.text).toBe(201);
  return { FLOWGATE_URL: stack.baseUrl, TOKEN: token, API_KEY: key.json.data.api_key };
}

const where = (example: Example) => `${example.guide}:${example.line}`;

/** Commands a runnable block must never hold: they reach AWS, the repository or the machine, not the local stack. */
const OUTSIDE_THE_STACK = /(?:^|[\s;&|(])(?:npx cdk|cdk (?:deploy|destroy|bootstrap)|aws [a-z]|git (?:pull|push|checkout|reset|clean)|npm (?:ci|start|install)|rm -rf)\b/;

describe('the docs', () => {
  it('include every guide this project promises, and each holds a runnable example', () => {
    for (const guide of OWN_GUIDES) expect(existsSync(resolve(ROOT, guide)), guide).toBe(true);
    const runnable = (guide: string) => examples(guide).length + tsExamples(guide).length;
    const without = guidePaths().filter((guide) => !NO_EXAMPLE_NEEDED.includes(guide) && runnable(guide) === 0);
    expect(without, 'guides without a runnable ```sh or ```ts example').toEqual([]);
    // The guides others write are held to the same rule as soon as they exist.
    for (const guide of GUIDES_OF_OTHERS) if (existsSync(resolve(ROOT, guide))) expect(runnable(guide), guide).toBeGreaterThan(0);
  });

  for (const guide of guidePaths()) {
    const runnable = examples(guide);
    const typescript = tsExamples(guide);
    if (runnable.length + typescript.length === 0) continue;
    it(`${guide}: its ${runnable.length} sh and ${typescript.length} ts example(s) run against the local stack and answer as shown`, async () => {
      const env = await account(guide);
      const session = new BashSession(env);
      const ts = typescript.length > 0 ? new TsSession(typescript, env) : undefined;
      const inOrder = [...runnable.map((example) => ({ example, ts: false })), ...typescript.map((example) => ({ example, ts: true }))]
        .sort((a, b) => a.example.line - b.example.line);
      try {
        for (const { example, ts: isTs } of inOrder) {
          expect(OUTSIDE_THE_STACK.test(example.code), `${where(example)} reaches beyond the local stack: mark it <!-- not-runnable -->`).toBe(false);
          const { status, out, err } = isTs ? await ts!.run(example) : await session.run(example.code);
          expect(status, `${where(example)} ${isTs ? 'threw' : `exited ${status}`}\n--- stdout\n${out}\n--- stderr\n${err}`).toBe(0);
          const printed = jsonValues(out);
          if (example.expected !== undefined) {
            const expected: unknown = JSON.parse(example.expected);
            expect(printed.length, `${where(example)} printed no JSON\n${out}\n${err}`).toBeGreaterThan(0);
            const wrong = mismatch(expected, printed.at(-1));
            expect(wrong, `${where(example)} answered otherwise than its json block\n${out}`).toBeUndefined();
          } else {
            const errors = printed.filter((value) => value !== null && typeof value === 'object' && 'error' in value);
            expect(errors, `${where(example)} printed an error answer and shows no json block for it\n${out}`).toEqual([]);
          }
        }
        if (ts) expect(await ts.end(), `${guide}: tsx did not end cleanly after its last block`).toBe(0);
      } finally {
        session.close();
        ts?.close();
      }
    });
  }
});

/**
 * One tsx process for a guide's ts blocks (see typescript.ts), started with the guide so its start-up
 * overlaps the first sh blocks. Each block waits for a line on stdin, so sh and ts blocks run in the
 * guide's order, as a reader would run them.
 */
class TsSession {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly program: string;
  private stdout = '';
  private stderr = '';
  private exit?: number | string;
  private waiting?: () => void;

  constructor(runnable: readonly Example[], env: Record<string, string>) {
    // Inside the repository (so a bare import such as otplib resolves from its node_modules), out of
    // git's sight; run in a scratch directory, so a file a block writes lands there.
    const programs = resolve(ROOT, 'node_modules/.cache/flowgate-docs');
    mkdirSync(programs, { recursive: true });
    this.program = join(programs, `${runnable[0]!.guide.replace(/\W+/g, '-')}-${process.pid}-${Math.random().toString(36).slice(2)}.mts`);
    writeFileSync(this.program, tsProgram(runnable));
    this.child = spawn(resolve(ROOT, 'node_modules/.bin/tsx'), [this.program], {
      cwd: work,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? work, LANG: 'C.UTF-8', ...env },
    });
    const wake = () => this.waiting?.();
    this.child.stdout.setEncoding('utf8').on('data', (chunk: string) => ((this.stdout += chunk), wake()));
    this.child.stderr.setEncoding('utf8').on('data', (chunk: string) => ((this.stderr += chunk), wake()));
    this.child.on('close', (code, signal) => ((this.exit = code ?? String(signal)), wake()));
  }

  /** Runs the next block (blocks run in the order given): 0 when it returned, 1 when it threw. */
  async run(example: Example): Promise<{ status: number; out: string; err: string }> {
    this.child.stdin.write('next\n');
    const done = blockDone(example.line);
    await this.until(() => this.stdout.includes(done) || this.exit !== undefined);
    const start = this.stdout.indexOf(blockMarker(example.line));
    const out = this.stdout.slice(start < 0 ? 0 : start, this.stdout.includes(done) ? this.stdout.indexOf(done) : undefined);
    const failed = new RegExp(`${FAILED} (\\d+)`).exec(this.stderr);
    const status = this.stdout.includes(done) ? 0 : 1;
    const err = status === 0 ? '' : `${failed ? '' : `tsx exited ${this.exit} before the block ran\n`}${this.stderr}`;
    this.stdout = this.stdout.slice(this.stdout.indexOf(done) + done.length);
    return { status, out, err };
  }

  /** Ends the program after its last block: its exit status. */
  async end(): Promise<number | string> {
    this.child.stdin.end();
    await this.until(() => this.exit !== undefined);
    return this.exit!;
  }

  close(): void {
    this.child.stdin.end();
    if (this.exit === undefined) this.child.kill();
    rmSync(this.program, { force: true });
  }

  private async until(condition: () => boolean): Promise<void> {
    const started = Date.now();
    while (!condition()) {
      if (Date.now() - started > BLOCK_TIMEOUT_MS) throw new Error(`the ts block did not finish within ${BLOCK_TIMEOUT_MS / 1000} s\n${this.stderr}`);
      await new Promise<void>((woken) => {
        this.waiting = woken;
        setTimeout(woken, 200);
      });
    }
  }
}
