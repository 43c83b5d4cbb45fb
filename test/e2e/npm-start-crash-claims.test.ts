import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import type { LocalStack } from '../../local/stack.js';
import { call } from '../support/local-stack.js';
import { freePort, start, stop, type NpmStart } from '../support/npm-start.js';
import { signStripe } from '../support/signers.js';
import { deliver } from '../support/webhooks.js';

/**
 * A Stripe delivery's replay claim is its record's first write (`receiver/claim-record.ts`): no
 * claim item beside it. Killed with deliveries in flight and restarted on its data directory, the
 * stack loses no acknowledged event, runs each once, and runs nothing for a replay of any capture.
 */
const running: NpmStart[] = [];
let root: string | undefined;
afterAll(async () => {
  await Promise.all(running.map((stack) => stop(stack, 'SIGKILL')));
  if (root) await rm(root, { recursive: true, force: true });
});

const asStack = (stack: NpmStart) => ({ baseUrl: stack.baseUrl }) as LocalStack;
const SIGNING_SECRET = 'whsec_crash-claims-test-secret';
const EVENTS = 30;

interface Listed { event_id: string; status: string }

async function executionsOf(stack: NpmStart, triggerId: string): Promise<Listed[]> {
  const res = await call(asStack(stack), 'GET', `/triggers/${triggerId}/executions?limit=500&since=1970-01-01`, { token: stack.token });
  return res.json.data.executions as Listed[];
}

it('killed with signed deliveries in flight: every acknowledged event runs once after the restart, and replays of every capture run nothing', async () => {
  root = await mkdtemp(join(tmpdir(), 'flowgate-crash-claims-'));
  const env = { PORT: String(await freePort()), FLOWGATE_DATA_DIR: join(root, 'data') };
  const first = await start(env);
  running.push(first);
  const trigger = (await call(asStack(first), 'POST', '/triggers', { token: first.token, body: { flow: 'echo', signature: { service: 'stripe', secret: SIGNING_SECRET } } })).json.data as { id: string; url: string };

  // Captures: each delivery's exact bytes and headers, as an attacker on the path would keep them.
  const captures = Array.from({ length: EVENTS }, (_, i) => {
    const body = JSON.stringify({ id: `evt_crash_${i}`, type: 'invoice.paid', data: { object: { n: i } } });
    return { id: `evt_crash_${i}`, body, headers: signStripe({ secret: SIGNING_SECRET, body, timestamp: Math.floor(Date.now() / 1000) }) };
  });
  const acknowledged = new Set<string>();
  // All at once; the stack is killed as soon as half of them are answered, the rest in flight.
  const half = new Promise<void>((resolve) => {
    for (const capture of captures) {
      deliver(trigger.url, capture.body, capture.headers).then((res) => {
        if (res.status === 200) acknowledged.add(capture.id);
        if (acknowledged.size >= EVENTS / 2) resolve();
      }, () => undefined);
    }
  });
  await half;
  await stop(first, 'SIGKILL');
  const answeredBeforeKill = new Set(acknowledged);
  expect(answeredBeforeKill.size).toBeGreaterThanOrEqual(EVENTS / 2);

  const second = await start(env);
  running.push(second);
  // Every capture replayed after the restart: an acknowledged one is a duplicate; none runs again.
  for (const capture of captures) {
    const res = await deliver(trigger.url, capture.body, capture.headers);
    expect(res.status).toBe(200);
    if (answeredBeforeKill.has(capture.id)) expect(res.json).toEqual({ status: 'duplicate' });
  }
  // Every event acknowledged before the kill runs, once; any event runs at most once.
  let listed: Listed[] = [];
  for (const deadline = Date.now() + 60_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 200))) {
    listed = await executionsOf(second, trigger.id);
    if ([...answeredBeforeKill].every((id) => listed.some((e) => e.event_id === id && e.status === 'succeeded'))
      && listed.every((e) => e.status !== 'queued' && e.status !== 'running')) break;
  }
  for (const capture of captures) {
    const runs = listed.filter((e) => e.event_id === capture.id && e.status !== 'duplicate');
    expect(runs.length, capture.id).toBeLessThanOrEqual(1);
    if (answeredBeforeKill.has(capture.id)) expect(runs.map((e) => e.status), capture.id).toEqual(['succeeded']);
  }
  // A second round of replays, once every flow has run: still nothing runs.
  for (const capture of captures) expect((await deliver(trigger.url, capture.body, capture.headers)).json).toEqual({ status: 'duplicate' });
  const after = await executionsOf(second, trigger.id);
  expect(after.filter((e) => e.status !== 'duplicate').length).toBe(listed.filter((e) => e.status !== 'duplicate').length);
}, 180_000);
