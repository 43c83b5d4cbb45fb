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

it.concurrent('a crash loses no acknowledged delivery: after SIGKILL and a restart on the same data directory, every delivery answered 200 succeeds', async () => {
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

it.concurrent('a crash while publishers run loses no acknowledged publish: after SIGKILL and a restart, sequences go on without a gap filled later, msg_ids deduplicate, and a consumer resumes from its acknowledgements', async () => {
  const streamRoot = await mkdtemp(join(tmpdir(), 'flowgate-streams-crash-'));
  // A 2 s lease: a sequence reserved by a publish the kill cut short is skipped 2 s after it.
  const env = { PORT: String(await freePort()), FLOWGATE_DATA_DIR: join(streamRoot, 'data'), STREAMS_LEASE_SECONDS: '2' };
  try {
    const first = await start(env);
    running.push(first);
    const base = '/storage/streams/crash';
    const firstStack = { baseUrl: first.baseUrl } as LocalStack;
    expect((await call(firstStack, 'PUT', base, { token: first.token, body: {} })).status).toBe(201);
    expect((await call(firstStack, 'PUT', `${base}/consumers/worker`, { token: first.token, body: { ack_wait_seconds: 1 } })).status).toBe(201);

    /** msg_id → the sequence its publish was acknowledged with. */
    const acknowledged = new Map<string, number>();
    const sent = new Set<string>();
    let killed = false;
    const publisher = async (p: number) => {
      for (let i = 0; i < 100 && !killed; i++) {
        const ids = Array.from({ length: 5 }, (_, k) => `p${p}-${i}-${k}`);
        ids.forEach((id) => sent.add(id));
        try {
          const res = await call(firstStack, 'POST', `${base}/messages`, { token: first.token, body: { messages: ids.map((id) => ({ data: id, msg_id: id })) } });
          if (res.status === 200) ids.forEach((id, k) => acknowledged.set(id, res.json.data.seqs[k]));
        } catch {
          return;
        }
        if (acknowledged.size >= 400 && !killed) {
          killed = true;
          first.child.kill('SIGKILL');
        }
      }
    };
    // The consumer takes and acknowledges some messages while the publishers run.
    const ackedBeforeKill: number[] = [];
    const consumer = (async () => {
      while (!killed && ackedBeforeKill.length < 100) {
        try {
          const got = await call(firstStack, 'POST', `${base}/consumers/worker/fetch`, { token: first.token, body: { batch: 20 } });
          const seqs = (got.json?.data?.messages ?? []).map((m: { seq: number }) => m.seq) as number[];
          if (seqs.length === 0) continue;
          const acked = await call(firstStack, 'POST', `${base}/consumers/worker/ack`, { token: first.token, body: { seqs } });
          if (acked.status === 200) ackedBeforeKill.push(...seqs);
        } catch {
          return;
        }
      }
    })();
    await Promise.all([...Array.from({ length: 8 }, (_, p) => publisher(p)), consumer]);
    expect(killed).toBe(true);
    expect(await first.exited).toBe('SIGKILL');
    // No reservation is made after this: a lease taken before the kill has passed 2 s from now.
    const leasesPassAt = Date.now() + 2_100;

    const second = await start(env);
    running.push(second);
    const stack = { baseUrl: second.baseUrl } as LocalStack;
    const token = second.token;
    // Publishing every unacknowledged batch again, as a client would, once the lease has passed
    // (counted from the kill, not from the restart, which takes longer than the lease).
    await new Promise((r) => setTimeout(r, Math.max(0, leasesPassAt - Date.now())));
    const unacknowledged = [...sent].filter((id) => !acknowledged.has(id));
    for (let i = 0; i < unacknowledged.length; i += 50) {
      const res = await call(stack, 'POST', `${base}/messages`, { token, body: { messages: unacknowledged.slice(i, i + 50).map((id) => ({ data: id, msg_id: id })) } });
      expect(res.status, res.text).toBe(200);
    }

    const read: { seq: number; data: string }[] = [];
    for (let after = 0; ;) {
      const page = (await call(stack, 'GET', `${base}/messages?after_seq=${after}&limit=1000`, { token })).json.data;
      read.push(...page.messages);
      if (page.next_after_seq === after) break;
      after = page.next_after_seq;
    }
    const info = (await call(stack, 'GET', base, { token })).json.data;
    // Every acknowledged publish is there, at the sequence it was acknowledged with.
    const bySeq = new Map(read.map((m) => [m.seq, m.data]));
    for (const [id, seq] of acknowledged) expect(bySeq.get(seq), id).toBe(id);
    // Every message sent is there exactly once (the republished ones deduplicated by msg_id), in increasing sequences.
    expect(read.map((m) => m.data).sort()).toEqual([...sent].sort());
    expect(read.map((m) => m.seq)).toEqual([...read.map((m) => m.seq)].sort((a, b) => a - b));
    // The only sequences missing are those of publishes the kill cut short before they wrote: skipped, never filled.
    const missing: number[] = [];
    for (let seq = 1; seq <= info.last_seq; seq++) if (!bySeq.has(seq)) missing.push(seq);
    for (const seq of missing) expect((await call(stack, 'GET', `${base}/messages/${seq}`, { token })).status).toBe(404);
    expect(missing.length).toBeLessThanOrEqual(8 * 5);

    // The consumer resumes: everything it acknowledged stays acknowledged; everything else arrives.
    const delivered = new Set<number>();
    for (const deadline = Date.now() + 30_000; delivered.size + ackedBeforeKill.length < read.length && Date.now() < deadline;) {
      const got = (await call(stack, 'POST', `${base}/consumers/worker/fetch`, { token, body: { batch: 100, wait_ms: 1000 } })).json.data.messages as { seq: number }[];
      for (const m of got) {
        expect(ackedBeforeKill).not.toContain(m.seq);
        delivered.add(m.seq);
      }
      if (got.length > 0) await call(stack, 'POST', `${base}/consumers/worker/ack`, { token, body: { seqs: got.map((m) => m.seq) } });
    }
    expect([...delivered, ...ackedBeforeKill].sort((a, b) => a - b)).toEqual(read.map((m) => m.seq));
    console.log(`streams crash test: ${acknowledged.size} messages acknowledged before the kill, ${unacknowledged.length} sent again after it, ${missing.length} sequences skipped, ${ackedBeforeKill.length} consumed before and ${delivered.size} after`);
  } finally {
    await rm(streamRoot, { recursive: true, force: true });
  }
}, 180_000);
