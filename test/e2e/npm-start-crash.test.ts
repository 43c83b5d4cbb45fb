import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { LocalStack } from '../../local/stack.js';
import { call } from '../support/local-stack.js';
import { freePort, start, stop, type NpmStart } from '../support/npm-start.js';
import { signStripe } from '../support/signers.js';
import { deliver } from '../support/webhooks.js';

/*
 * One `npm start` killed with SIGKILL under four kinds of work at once, then started again on its
 * data directory (two starts for the whole file: each costs seconds of CPU):
 *
 * - queued: 8 senders deliver to a trigger of `pause` (300 ms a run) and go on until the kill,
 *   so it finds runs under way, events still queued and requests in flight;
 * - direct: a quiet trigger's deliveries (fewer than 8 a second) of `linger` (2 s a run) go
 *   straight to the flow worker, none through the queue; the kill comes less than a run's time
 *   after one was sent, so at least that one is unfinished (Lambda would hold it; the emulator
 *   holds it in memory);
 * - signed: a burst of Stripe-signed deliveries whose replay claim is the record's first write
 *   (`receiver/claim-record.ts`); the kill comes once half of them are answered, the rest in flight;
 * - streams: 8 publishers and a consumer that acknowledges as it goes (a 2 s lease).
 *
 * Each test below checks one of them after the restart.
 */
const ROOT = resolve(import.meta.dirname, '../..');
/** `linger` waits this long: a direct delivery sent less than this before the kill cannot have finished its run. */
const LINGER_MS = 2_000;
/** Queued: concurrent senders, each sending its next delivery once the last is answered. */
const SENDERS = 8;
/** Queued: the kill waits for this many acknowledged deliveries (the senders go on meanwhile)… */
const QUEUED_BEFORE_KILL = 40;
/** …and each sender stops after this many, should the kill be late. */
const PER_SENDER = 50;
/** Direct: apart enough for the receiver's quiet rule (fewer than 8 a second). */
const DIRECT_SPACING_MS = 150;
/** Signed: sent all at once once the others are under way; the kill comes when half are answered. */
const SIGNED_EVENTS = 30;
const SIGNING_SECRET = 'whsec_crash-claims-test-secret';
/** Streams: the kill waits for this many acknowledged messages, and for the consumer to acknowledge some. */
const PUBLISHED_BEFORE_KILL = 100;
const CONSUMED_BEFORE_KILL = 20;
const STREAM = '/storage/streams/crash';
/** Long enough for the recovered runs on a loaded two-core machine. */
const SETTLE_WITHIN_MS = 90_000;

const running: NpmStart[] = [];
let root: string;
let first: NpmStart;
let second: NpmStart;
/** The number in the restart's "(reopened: N unfinished deliveries queued again" line. */
let requeued = 0;
let killedAt = 0;

const queued = { trigger: { id: '', url: '' }, acknowledged: new Set<string>() };
const direct = { trigger: { id: '', url: '' }, acknowledged: [] as string[], unfinishedAtKill: '' };
const signed = {
  trigger: { id: '', url: '' },
  /** Each delivery's exact bytes and headers, as an attacker on the path would keep them. */
  captures: [] as { id: string; body: string; headers: Record<string, string> }[],
  answeredBeforeKill: new Set<string>(),
};
const streams = {
  /** msg_id → the sequence its publish was acknowledged with. */
  acknowledged: new Map<string, number>(),
  sent: new Set<string>(),
  ackedBeforeKill: [] as number[],
  /** Sequences whose ack was in flight at the kill: written or not, the consumer cannot know. */
  ackUnanswered: [] as number[],
};

const asStack = (stack: NpmStart) => ({ baseUrl: stack.baseUrl }) as LocalStack;
const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

interface Listed { event_id: string; status: string; attempts: number; timeline: { attempt: number; status: string; error?: string }[] }

async function listAll(stack: NpmStart, triggerId: string): Promise<Listed[]> {
  const all: Listed[] = [];
  let cursor: string | null = null;
  do {
    const res = await call(asStack(stack), 'GET', `/triggers/${triggerId}/executions?limit=500&since=1970-01-01${cursor ? `&cursor=${cursor}` : ''}`, { token: stack.token });
    all.push(...res.json.data.executions);
    cursor = res.json.data.next_cursor;
  } while (cursor);
  return all;
}

/** Lists the trigger's deliveries every 250 ms until `settled` holds of them (or the time is up), and returns the last list. */
async function settle(triggerId: string, settled: (executions: Listed[]) => boolean): Promise<Listed[]> {
  let executions: Listed[] = [];
  for (const deadline = Date.now() + SETTLE_WITHIN_MS; Date.now() < deadline; await sleep(250)) {
    executions = await listAll(second, triggerId);
    if (settled(executions)) break;
  }
  return executions;
}

afterAll(async () => {
  await Promise.all(running.map((stack) => stop(stack, 'SIGKILL')));
  if (root) await rm(root, { recursive: true, force: true });
});

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'flowgate-crash-'));
  const env = {
    PORT: String(await freePort()),
    // The restart keeps the function URL's port: the replays go to the URLs captured before the kill.
    WEBHOOK_PORT: String(await freePort()),
    FLOWGATE_DATA_DIR: join(root, 'data'),
    FLOWS_DIR: [join(ROOT, 'flows'), join(ROOT, 'test/fixtures/flows-pause')].join(delimiter),
    // A 2 s lease: a sequence reserved by a publish the kill cut short is skipped 2 s after it.
    STREAMS_LEASE_SECONDS: '2',
  };
  first = await start(env);
  running.push(first);
  const stack = asStack(first);
  const { token } = first;
  const createTrigger = async (body: object) => (await call(stack, 'POST', '/triggers', { token, body })).json.data as { id: string; url: string };
  queued.trigger = await createTrigger({ flow: 'pause' });
  direct.trigger = await createTrigger({ flow: 'linger' });
  signed.trigger = await createTrigger({ flow: 'echo', signature: { service: 'stripe', secret: SIGNING_SECRET } });
  expect((await call(stack, 'PUT', STREAM, { token, body: {} })).status).toBe(201);
  expect((await call(stack, 'PUT', `${STREAM}/consumers/worker`, { token, body: { ack_wait_seconds: 1 } })).status).toBe(201);

  let killed = false;
  let signedSent = false;
  const signedHalfAnswered = () => signed.answeredBeforeKill.size >= SIGNED_EVENTS / 2;
  const othersUnderWay = () => queued.acknowledged.size >= QUEUED_BEFORE_KILL && streams.acknowledged.size >= PUBLISHED_BEFORE_KILL && streams.ackedBeforeKill.length >= CONSUMED_BEFORE_KILL;

  const queuedSender = async (n: number) => {
    for (let i = 0; i < PER_SENDER && !killed; i++) {
      try {
        const res = await deliver(queued.trigger.url, JSON.stringify({ id: `evt_${n}_${i}`, type: 'crash.test' }));
        if (res.status === 200 && res.json.status === 'accepted') queued.acknowledged.add(res.json.event_id);
      } catch {
        return; // The stack died under this request: it was never acknowledged.
      }
    }
  };
  const publisher = async (p: number) => {
    for (let i = 0; i < 100 && !killed; i++) {
      const ids = Array.from({ length: 5 }, (_, k) => `p${p}-${i}-${k}`);
      ids.forEach((id) => streams.sent.add(id));
      try {
        const res = await call(stack, 'POST', `${STREAM}/messages`, { token, body: { messages: ids.map((id) => ({ data: id, msg_id: id })) } });
        if (res.status === 200) ids.forEach((id, k) => streams.acknowledged.set(id, res.json.data.seqs[k]));
      } catch {
        return;
      }
    }
  };
  const consumer = async () => {
    while (!killed && streams.ackedBeforeKill.length < 100) {
      try {
        const got = await call(stack, 'POST', `${STREAM}/consumers/worker/fetch`, { token, body: { batch: 20 } });
        const seqs = (got.json?.data?.messages ?? []).map((m: { seq: number }) => m.seq) as number[];
        if (seqs.length === 0) {
          await sleep(20);
          continue;
        }
        const acked = await call(stack, 'POST', `${STREAM}/consumers/worker/ack`, { token, body: { seqs } }).catch((error: unknown) => {
          streams.ackUnanswered.push(...seqs);
          throw error;
        });
        if (acked.status === 200) streams.ackedBeforeKill.push(...seqs);
      } catch {
        return;
      }
    }
  };
  /** Sends the signed burst once the others are under way; resolves when half of it is answered. */
  const signedBurst = async () => {
    while (!othersUnderWay() && !killed) await sleep(20);
    signed.captures = Array.from({ length: SIGNED_EVENTS }, (_, i) => {
      const body = JSON.stringify({ id: `evt_crash_${i}`, type: 'invoice.paid', data: { object: { n: i } } });
      return { id: `evt_crash_${i}`, body, headers: signStripe({ secret: SIGNING_SECRET, body, timestamp: Math.floor(Date.now() / 1000) }) };
    });
    signedSent = true;
    for (const capture of signed.captures) {
      deliver(signed.trigger.url, capture.body, capture.headers).then((res) => {
        if (res.status === 200) signed.answeredBeforeKill.add(capture.id);
      }, () => undefined);
    }
  };
  /** The direct sender kills the stack, right after a delivery it sent less than a run's time ago was answered, once all else is ready. */
  const directSender = async () => {
    for (let i = 0; !killed; i++) {
      const sentAt = Date.now();
      const res = await deliver(direct.trigger.url, JSON.stringify({ id: `evt_direct_${i}` }));
      expect(res.status).toBe(200);
      direct.acknowledged.push(res.json.event_id);
      if (signedSent && signedHalfAnswered() && Date.now() - sentAt < LINGER_MS - 100) {
        killed = true;
        direct.unfinishedAtKill = res.json.event_id;
        first.child.kill('SIGKILL');
        killedAt = Date.now();
        return;
      }
      await sleep(Math.max(0, sentAt + DIRECT_SPACING_MS - Date.now()));
    }
  };
  await Promise.all([
    ...Array.from({ length: SENDERS }, (_, n) => queuedSender(n)),
    ...Array.from({ length: 8 }, (_, p) => publisher(p)),
    consumer(),
    signedBurst(),
    directSender(),
  ]);
  expect(await first.exited).toBe('SIGKILL');

  second = await start(env);
  running.push(second);
  const reopened = /\(reopened: (\d+) unfinished deliveries queued again/.exec(second.output());
  // The kill came while flows were under way: there was something to recover.
  expect(reopened, second.output()).not.toBeNull();
  requeued = Number(reopened![1]);
});

it.concurrent('queued: no acknowledged delivery is lost; every one succeeds, and a run cut short shows as interrupted, then succeeded', async () => {
  const executions = await settle(queued.trigger.id, (all) => all.every((e) => e.status === 'succeeded'));
  const succeeded = new Set(executions.filter((e) => e.status === 'succeeded').map((e) => e.event_id));
  const lost = [...queued.acknowledged].filter((id) => !succeeded.has(id));
  const interrupted = executions.filter((e) => e.timeline.some((attempt) => attempt.error === 'interrupted'));
  console.log(`crash test: ${queued.acknowledged.size} acknowledged before the kill, ${executions.length} recorded, ${requeued} queued again at restart over all triggers (${interrupted.length} of this one's interrupted mid-run), ${succeeded.size} succeeded, ${lost.length} lost`);
  expect(queued.acknowledged.size).toBeGreaterThanOrEqual(QUEUED_BEFORE_KILL);
  expect(lost).toEqual([]);
  expect(executions.filter((e) => e.status !== 'succeeded')).toEqual([]);
  for (const execution of interrupted) {
    const last = execution.timeline.at(-1)!;
    expect(last).toMatchObject({ attempt: execution.attempts, status: 'succeeded' });
    expect(execution.timeline.find((attempt) => attempt.error === 'interrupted')!.attempt).toBeLessThan(last.attempt);
  }
});

it.concurrent('direct: killed while the worker runs them, the restart runs each acknowledged direct delivery from its record', async () => {
  // The last one was answered less than a run's time after it was sent, and the kill came at once: its run had not finished.
  expect(direct.unfinishedAtKill).not.toBe('');
  const executions = await settle(direct.trigger.id, (all) => all.length === direct.acknowledged.length && all.every((e) => e.status === 'succeeded'));
  expect(executions.map((e) => e.event_id).sort()).toEqual([...direct.acknowledged].sort());
  expect(executions.filter((e) => e.status !== 'succeeded')).toEqual([]);
});

it.concurrent('signed: every acknowledged event runs once after the restart, and replays of every capture run nothing', async () => {
  expect(signed.answeredBeforeKill.size).toBeGreaterThanOrEqual(SIGNED_EVENTS / 2);
  // Every capture replayed after the restart: an acknowledged one is a duplicate; none runs again.
  for (const capture of signed.captures) {
    const res = await deliver(signed.trigger.url, capture.body, capture.headers);
    expect(res.status).toBe(200);
    if (signed.answeredBeforeKill.has(capture.id)) expect(res.json).toEqual({ status: 'duplicate' });
  }
  // Every event acknowledged before the kill runs, once; any event runs at most once.
  const listed = await settle(signed.trigger.id, (all) => [...signed.answeredBeforeKill].every((id) => all.some((e) => e.event_id === id && e.status === 'succeeded'))
    && all.every((e) => e.status !== 'queued' && e.status !== 'running'));
  for (const capture of signed.captures) {
    const runs = listed.filter((e) => e.event_id === capture.id && e.status !== 'duplicate');
    expect(runs.length, capture.id).toBeLessThanOrEqual(1);
    if (signed.answeredBeforeKill.has(capture.id)) expect(runs.map((e) => e.status), capture.id).toEqual(['succeeded']);
  }
  // A second round of replays, once every flow has run: still nothing runs.
  for (const capture of signed.captures) expect((await deliver(signed.trigger.url, capture.body, capture.headers)).json).toEqual({ status: 'duplicate' });
  const after = await listAll(second, signed.trigger.id);
  expect(after.filter((e) => e.status !== 'duplicate').length).toBe(listed.filter((e) => e.status !== 'duplicate').length);
});

it.concurrent('streams: no acknowledged publish is lost; sequences go on without a gap filled later, msg_ids deduplicate, and the consumer resumes from its acknowledgements', async () => {
  const stack = asStack(second);
  const { token } = second;
  // Publishing every unacknowledged batch again, as a client would, once the lease has passed
  // (counted from the kill, not from the restart, which takes longer than the lease).
  await sleep(Math.max(0, killedAt + 2_100 - Date.now()));
  const unacknowledged = [...streams.sent].filter((id) => !streams.acknowledged.has(id));
  for (let i = 0; i < unacknowledged.length; i += 50) {
    const res = await call(stack, 'POST', `${STREAM}/messages`, { token, body: { messages: unacknowledged.slice(i, i + 50).map((id) => ({ data: id, msg_id: id })) } });
    expect(res.status, res.text).toBe(200);
  }

  const read: { seq: number; data: string }[] = [];
  for (let after = 0; ;) {
    const page = (await call(stack, 'GET', `${STREAM}/messages?after_seq=${after}&limit=1000`, { token })).json.data;
    read.push(...page.messages);
    if (page.next_after_seq === after) break;
    after = page.next_after_seq;
  }
  const info = (await call(stack, 'GET', STREAM, { token })).json.data;
  // Every acknowledged publish is there, at the sequence it was acknowledged with.
  const bySeq = new Map(read.map((m) => [m.seq, m.data]));
  for (const [id, seq] of streams.acknowledged) expect(bySeq.get(seq), id).toBe(id);
  // Every message sent is there exactly once (the republished ones deduplicated by msg_id), in increasing sequences.
  expect(read.map((m) => m.data).sort()).toEqual([...streams.sent].sort());
  expect(read.map((m) => m.seq)).toEqual([...read.map((m) => m.seq)].sort((a, b) => a - b));
  // The only sequences missing are those of publishes the kill cut short before they wrote: skipped, never filled.
  const missing: number[] = [];
  for (let seq = 1; seq <= info.last_seq; seq++) if (!bySeq.has(seq)) missing.push(seq);
  for (const seq of missing) expect((await call(stack, 'GET', `${STREAM}/messages/${seq}`, { token })).status).toBe(404);
  expect(missing.length).toBeLessThanOrEqual(8 * 5);

  // The consumer resumes: everything it acknowledged stays acknowledged; everything else arrives,
  // but for an ack the kill cut short, which the stack may have written before it died (a CI run
  // saw one: sequences 21 to 40): those may come again or not.
  const { ackedBeforeKill, ackUnanswered } = streams;
  const delivered = new Set<number>();
  const covered = () => new Set([...delivered, ...ackedBeforeKill, ...ackUnanswered]).size;
  for (const deadline = Date.now() + 30_000; covered() < read.length && Date.now() < deadline;) {
    const got = (await call(stack, 'POST', `${STREAM}/consumers/worker/fetch`, { token, body: { batch: 100, wait_ms: 1000 } })).json.data.messages as { seq: number }[];
    for (const m of got) {
      expect(ackedBeforeKill).not.toContain(m.seq);
      delivered.add(m.seq);
    }
    if (got.length > 0) await call(stack, 'POST', `${STREAM}/consumers/worker/ack`, { token, body: { seqs: got.map((m) => m.seq) } });
  }
  expect([...new Set([...delivered, ...ackedBeforeKill, ...ackUnanswered])].sort((a, b) => a - b)).toEqual(read.map((m) => m.seq));
  console.log(`streams crash test: ${streams.acknowledged.size} messages acknowledged before the kill, ${unacknowledged.length} sent again after it, ${missing.length} sequences skipped, ${ackedBeforeKill.length} consumed before (${ackUnanswered.length} more unanswered) and ${delivered.size} after`);
});
