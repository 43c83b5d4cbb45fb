import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect, it } from 'vitest';
import { startLocalStack } from '../../local/stack.js';

/**
 * Long enough that an answer delayed by a loaded two-core machine still arrives, short enough that
 * a request nobody will ever answer fails the test well inside its timeout.
 */
const ANSWER_WITHIN_MS = 10_000;

/** A loopback port that was free a moment ago. */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((done) => probe.listen(0, '127.0.0.1', done));
  const { port } = probe.address() as { port: number };
  await new Promise<void>((done) => probe.close(() => done()));
  return port;
}

type Outcome = { answered: number; body: string } | { failed: string };

/** One health check: `undefined` when nothing listens yet, else what came back (or why nothing did). */
async function poll(url: string): Promise<Outcome | undefined> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(ANSWER_WITHIN_MS) });
    return { answered: res.status, body: await res.text() };
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause;
    if (cause?.code === 'ECONNREFUSED') return undefined;
    return { failed: (error as Error).name === 'TimeoutError' ? 'no answer' : String(cause?.code ?? error) };
  }
}

it('every request that reaches the local stack while it starts is answered: 200, or 503 unavailable', async () => {
  const port = await freePort();
  const starting = startLocalStack({ port, visibilityTimeoutSeconds: 10 });
  let started = false;
  const ready = starting.finally(() => (started = true));

  const outcomes: Outcome[] = [];
  while (!started) {
    const outcome = await poll(`http://127.0.0.1:${port}/health`);
    if (outcome) outcomes.push(outcome);
    else await sleep(5);
  }
  const stack = await ready;
  try {
    const unanswered = outcomes.filter((o) => 'failed' in o);
    const answers = outcomes.filter((o): o is { answered: number; body: string } => 'answered' in o);
    expect(unanswered).toEqual([]);
    for (const { answered, body } of answers) {
      expect([200, 503]).toContain(answered);
      expect(JSON.parse(body)).toEqual(answered === 200 ? { status: 'ok', backlog: { waiting: 0, oldest_age_seconds: null } } : { error: 'unavailable' });
    }
    expect(await poll(`${stack.baseUrl}/health`)).toEqual({ answered: 200, body: '{"status":"ok","backlog":{"waiting":0,"oldest_age_seconds":null}}' });
  } finally {
    await stack.stop();
  }
}, 120_000);
