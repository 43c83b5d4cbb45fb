import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import type { LocalStack } from '../../local/stack.js';
import { call } from '../support/local-stack.js';
import { freePort, start, stop, type NpmStart } from '../support/npm-start.js';

const ROOT = resolve(import.meta.dirname, '../..');
/** Quiet deliveries, one at a time: each goes straight to the flow worker (the direct path), none through the queue. */
const DELIVERIES = 6;
/** Apart enough for the receiver's quiet rule (fewer than 8 a second). */
const SPACING_MS = 150;
const SETTLE_WITHIN_MS = 60_000;

const running: NpmStart[] = [];
let root: string | undefined;
afterAll(async () => {
  await Promise.all(running.map((stack) => stop(stack, 'SIGKILL')));
  if (root) await rm(root, { recursive: true, force: true });
});

it('a crash loses no acknowledged direct delivery: killed while the worker runs them (Lambda would hold them; the emulator holds them in memory), the restart runs each from its record', async () => {
  root = await mkdtemp(join(tmpdir(), 'flowgate-crash-direct-'));
  const env = {
    PORT: String(await freePort()),
    FLOWGATE_DATA_DIR: join(root, 'data'),
    // `pause` takes 300 ms: the kill finds the direct runs under way.
    FLOWS_DIR: [join(ROOT, 'flows'), join(ROOT, 'test/fixtures/flows-pause')].join(delimiter),
  };
  const first = await start(env);
  running.push(first);
  const stack = { baseUrl: first.baseUrl } as LocalStack;
  const trigger = (await call(stack, 'POST', '/triggers', { token: first.token, body: { flow: 'pause' } })).json.data as { id: string; url: string };

  const acknowledged: string[] = [];
  for (let i = 0; i < DELIVERIES; i++) {
    const sentAt = Date.now();
    const res = await fetch(trigger.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id: `evt_direct_${i}` }) });
    expect(res.status).toBe(200);
    acknowledged.push(((await res.json()) as { event_id: string }).event_id);
    await new Promise((r) => setTimeout(r, Math.max(0, sentAt + SPACING_MS - Date.now())));
  }
  first.child.kill('SIGKILL');
  expect(await first.exited).toBe('SIGKILL');

  const second = await start(env);
  running.push(second);
  // The kill came while direct runs were under way (each takes 300 ms, sent 150 ms apart): there was something to recover.
  const reopened = /\(reopened: (\d+) unfinished deliveries queued again/.exec(second.output());
  expect(Number(reopened?.[1] ?? 0), second.output()).toBeGreaterThan(0);
  let executions: { event_id: string; status: string }[] = [];
  for (const deadline = Date.now() + SETTLE_WITHIN_MS; Date.now() < deadline; await new Promise((r) => setTimeout(r, 250))) {
    executions = (await call({ baseUrl: second.baseUrl } as LocalStack, 'GET', `/triggers/${trigger.id}/executions?limit=500`, { token: second.token })).json.data.executions;
    if (executions.length === DELIVERIES && executions.every((e) => e.status === 'succeeded')) break;
  }
  expect(executions.map((e) => e.event_id).sort()).toEqual([...acknowledged].sort());
  expect(executions.filter((e) => e.status !== 'succeeded')).toEqual([]);
}, 120_000);
