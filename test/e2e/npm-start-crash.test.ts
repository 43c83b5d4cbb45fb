import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import type { LocalStack } from '../../local/stack.js';
import { call } from '../support/local-stack.js';
import { freePort, start, stop, type NpmStart } from '../support/npm-start.js';

const ROOT = resolve(import.meta.dirname, '../..');
/** Concurrent senders, each sending its next delivery once the last is answered. */
const SENDERS = 8;
/** The stack is killed once this many deliveries have been acknowledged, while the senders go on. */
const KILL_AFTER_ACKNOWLEDGED = 200;
/** Each sender stops after this many (the kill comes first). */
const PER_SENDER = 50;
/** Long enough for a few hundred 300 ms flows on a loaded two-core machine. */
const SETTLE_WITHIN_MS = 90_000;

const running: NpmStart[] = [];
let root: string | undefined;
afterAll(async () => {
  await Promise.all(running.map((stack) => stop(stack, 'SIGKILL')));
  if (root) await rm(root, { recursive: true, force: true });
});

interface Listed { event_id: string; status: string; attempts: number; timeline: { attempt: number; status: string; error?: string }[] }

async function listAll(stack: LocalStack, token: string, triggerId: string): Promise<Listed[]> {
  const all: Listed[] = [];
  let cursor: string | null = null;
  do {
    const res = await call(stack, 'GET', `/triggers/${triggerId}/executions?limit=500${cursor ? `&cursor=${cursor}` : ''}`, { token });
    all.push(...res.json.data.executions);
    cursor = res.json.data.next_cursor;
  } while (cursor);
  return all;
}

it('a crash loses no acknowledged delivery: after SIGKILL and a restart on the same data directory, every delivery answered 200 succeeds', async () => {
  root = await mkdtemp(join(tmpdir(), 'flowgate-crash-'));
  const env = {
    PORT: String(await freePort()),
    FLOWGATE_DATA_DIR: join(root, 'data'),
    // `pause` takes 300 ms, so a kill finds flows under way and events still queued.
    FLOWS_DIR: [join(ROOT, 'flows'), join(ROOT, 'test/fixtures/flows-pause')].join(delimiter),
  };
  const first = await start(env);
  running.push(first);
  const stack = { baseUrl: first.baseUrl } as LocalStack;
  const { token } = first;
  const trigger = (await call(stack, 'POST', '/triggers', { token, body: { flow: 'pause' } })).json.data as { id: string; url: string };

  const acknowledged = new Set<string>();
  let killed = false;
  const sender = async (n: number) => {
    for (let i = 0; i < PER_SENDER && !killed; i++) {
      const id = `evt_${n}_${i}`;
      try {
        const res = await fetch(trigger.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id, type: 'crash.test' }) });
        const body = await res.json() as { status?: string; event_id?: string };
        if (res.status === 200 && body.status === 'accepted') acknowledged.add(body.event_id!);
      } catch {
        // The stack died under this request: it was never acknowledged.
        return;
      }
      if (acknowledged.size >= KILL_AFTER_ACKNOWLEDGED && !killed) {
        killed = true;
        first.child.kill('SIGKILL');
      }
    }
  };
  await Promise.all(Array.from({ length: SENDERS }, (_, n) => sender(n)));
  expect(killed).toBe(true);
  expect(await first.exited).toBe('SIGKILL');

  const second = await start(env);
  running.push(second);
  const reopened = /\(reopened: (\d+) unfinished deliveries queued again/.exec(second.output());
  // The kill came while flows were under way: there was something to recover.
  expect(reopened, second.output()).not.toBeNull();
  const requeued = Number(reopened![1]);

  let executions: Listed[] = [];
  for (const deadline = Date.now() + SETTLE_WITHIN_MS; Date.now() < deadline; await new Promise((r) => setTimeout(r, 250))) {
    executions = await listAll({ baseUrl: second.baseUrl } as LocalStack, second.token, trigger.id);
    if (executions.every((e) => e.status === 'succeeded')) break;
  }
  const succeeded = new Set(executions.filter((e) => e.status === 'succeeded').map((e) => e.event_id));
  const lost = [...acknowledged].filter((id) => !succeeded.has(id));
  const interrupted = executions.filter((e) => e.timeline.some((attempt) => attempt.error === 'interrupted'));
  console.log(`crash test: ${acknowledged.size} acknowledged before the kill, ${executions.length} recorded, ${requeued} queued again at restart (${interrupted.length} of them interrupted mid-run), ${succeeded.size} succeeded, ${lost.length} lost`);

  expect(lost).toEqual([]);
  expect(executions.filter((e) => e.status !== 'succeeded')).toEqual([]);
  // A run cut short shows in the timeline: the interrupted attempt, then the one that succeeded.
  for (const execution of interrupted) {
    const last = execution.timeline.at(-1)!;
    expect(last).toMatchObject({ attempt: execution.attempts, status: 'succeeded' });
    expect(execution.timeline.find((attempt) => attempt.error === 'interrupted')!.attempt).toBeLessThan(last.attempt);
  }
}, 180_000);
