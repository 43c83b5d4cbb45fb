import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { call, useLocalStack } from '../support/local-stack.js';
import { examples, guidePaths, GUIDES_OF_OTHERS, jsonValues, mismatch, NO_EXAMPLE_NEEDED, OWN_GUIDES, ROOT, type Example } from './guides.js';

/**
 * The docs' examples are tests: every ```sh block of README.md and docs/*.md (unless marked
 * `<!-- not-runnable -->`) runs with bash against one local stack, in order, each guide in a bash
 * session of its own (so a variable one block sets is there for the next) with `$FLOWGATE_URL`, and
 * `$TOKEN` and `$API_KEY` of an account no other guide uses. A block must exit 0; the ```json block
 * after it, when there is one, is matched against the last JSON value the block printed; a block
 * without one must print no `{"error": …}` answer. A guide that goes stale fails here.
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
    const without = guidePaths().filter((guide) => !NO_EXAMPLE_NEEDED.includes(guide) && examples(guide).length === 0);
    expect(without, 'guides without a runnable ```sh example').toEqual([]);
    // The guides others write are held to the same rule as soon as they exist.
    for (const guide of GUIDES_OF_OTHERS) if (existsSync(resolve(ROOT, guide))) expect(examples(guide).length, guide).toBeGreaterThan(0);
  });

  for (const guide of guidePaths()) {
    const runnable = examples(guide);
    if (runnable.length === 0) continue;
    it(`${guide}: its ${runnable.length} example(s) run against the local stack and answer as shown`, async () => {
      const session = new BashSession(await account(guide));
      try {
        for (const example of runnable) {
          expect(OUTSIDE_THE_STACK.test(example.code), `${where(example)} reaches beyond the local stack: mark it <!-- not-runnable -->`).toBe(false);
          const { status, out, err } = await session.run(example.code);
          expect(status, `${where(example)} exited ${status}\n--- stdout\n${out}\n--- stderr\n${err}`).toBe(0);
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
      } finally {
        session.close();
      }
    });
  }
});
