import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { LOCAL_AWS_ENV } from '../local/engines.js';
import { signStripe } from '../test/support/signers.js';
import type { ChartRow } from './support/chart-row.js';
import { startChild, type BenchChild } from './support/child.js';
import { runLoad, type LoadResult } from './support/load.js';
import { jsonEvent, KB } from './support/payloads.js';
import { fixed, int, median, sleep, times, verdict } from './support/timing.js';

/**
 * `npm run bench throughput`: acknowledged Stripe-signed webhooks over HTTP on loopback, against
 * the local stack as `npm start` runs it (one process: engines, handlers, API Gateway stand-in,
 * and the SQS pollers whose flow worker runs each accepted event's flow; its tables on a data
 * directory, every write fsync'd before it is answered), and
 * against a bare `node:http` server that verifies the same signature by hand, parses the JSON and
 * answers 200. A further baseline, the "durable floor", is the bare server plus one SQS
 * `SendMessage` through the AWS SDK to an in-process local-aws-sqs: the least any receiver that
 * acknowledges only queued events must do. The target is the stack on disk against that floor.
 * End to end, the stack's completed events per second are set against its own acknowledgments and
 * against the stack as it was before #35 (`BEFORE_35`), run from that commit in the same run.
 *
 * Each server is a child process of its own and the load generator is this process, so on two
 * cores each server has a core and the generator the other; neither server shares its event loop
 * with the generator. Rounds rotate which server goes first, and after each stack's run its flow
 * queue is drained so that the flow worker's backlog does not steal the next server's core.
 */
const BODY_BYTES = KB;
/** 1,000 a run: six servers, three rounds and the drains fit in about four minutes, so `npm run bench` as a whole stays within ten. */
const REQUESTS = 1000;
const CONCURRENCY = 50;
/**
 * Requests before the measured runs, per server. The stacks take 2,000: their JIT keeps compiling
 * for about that long (300, as before, left a stack spending 2.1 ms of CPU per event on V8's
 * compiler threads, 1.4 ms after 6,000), and a server runs for longer than a bench's minute.
 */
const WARMUP_REQUESTS = { stack: 2000, bare: 300 };
/** Two rounds (three until session 11): `npm run bench` as a whole must stay within ten minutes. */
const ROUNDS = 2;
/** The issue's bar: the stack as `npm start` runs it, on disk, against the durable floor. */
const TARGET_RATIO = 0.5;
const DRAIN_TIMEOUT_MS = 120_000;
/** #35's bars: events completed per second at least this share of those acknowledged... */
const COMPLETION_TARGET = 0.8;
/** ...and at least this many times the completion of the stack as it ran when #35 was filed (`BEFORE_35`). */
const COMPLETION_GAIN_TARGET = 2;
/**
 * The last commit before #35's work: the stack with everything on the receiver's thread and one SDK
 * call per write. The bench runs it beside today's, from a `git archive` of that commit sharing
 * this checkout's node_modules, so "2x what it did" is measured in the same run on the same machine.
 */
const BEFORE_35 = '32264f4cb21cc24a1ff51d291d78b05b90b0c6fb';

/**
 * `THROUGHPUT_COMPARE=<commit> npm run bench throughput` also runs the stack as it was at that
 * commit, beside today's and through the same rounds: a change's effect measured in one run on one
 * machine (e.g. the commit before it).
 */
const COMPARE = process.env.THROUGHPUT_COMPARE;

/** The pre-#35 tree's bench stack child, extracted under `root`; undefined where git or the commit is not at hand. */
async function before35Child(root: string): Promise<string | undefined> {
  return stackChildAt(root, BEFORE_35, 'before-35');
}

/** The bench stack child of `commit`'s tree, extracted under `root` (sharing this checkout's node_modules). */
async function stackChildAt(root: string, commit: string, name: string): Promise<string | undefined> {
  const repo = resolve(import.meta.dirname, '..');
  const dir = join(root, name);
  try {
    await mkdir(dir);
    execFileSync('sh', ['-c', `git -C "${repo}" archive --format=tar ${commit} | tar -x -C "${dir}"`], { stdio: ['ignore', 'ignore', 'pipe'] });
    await symlink(join(repo, 'node_modules'), join(dir, 'node_modules'));
    return join(dir, 'bench/support/stack-child.ts');
  } catch (error) {
    console.log(`the stack at commit ${commit.slice(0, 7)} is not at hand: ${(error as Error).message.split('\n')[0]}`);
    return undefined;
  }
}

interface StackInfo {
  baseUrl: string;
  webhookBaseUrl: string;
  token: string;
  env: Record<string, string>;
  queueUrls: Record<string, string>;
}

export default async function throughputBench() {
  const secret = `whsec_${randomBytes(24).toString('base64url')}`;
  const dataRoot = await mkdtemp(join(tmpdir(), 'flowgate-bench-'));
  const before35 = await before35Child(dataRoot);
  if (!before35) throw new Error('the throughput bench needs the git history: it runs the stack as it was before #35 beside today\'s');
  const comparePath = COMPARE ? await stackChildAt(dataRoot, COMPARE, 'compare') : undefined;
  if (COMPARE && !comparePath) throw new Error(`THROUGHPUT_COMPARE=${COMPARE}: that commit's tree could not be extracted`);
  const [disk, inline, bare, floor, recorded, compare] = await Promise.all([
    startChild<StackInfo>('stack-child.ts', { BENCH_DATA_DIR: join(dataRoot, 'data') }),
    // The stack as it was before #35 (everything on the receiver's thread, a call per write), same run.
    startChild<StackInfo>(before35, { BENCH_DATA_DIR: join(dataRoot, 'data-before-35') }),
    startChild<{ url: string }>('bare-server-child.ts', { BENCH_STRIPE_SECRET: secret }),
    startChild<{ url: string }>('bare-server-child.ts', { BENCH_STRIPE_SECRET: secret, BENCH_DURABLE: '1' }),
    startChild<{ url: string }>('bare-server-child.ts', { BENCH_STRIPE_SECRET: secret, BENCH_RECORDED_DIR: join(dataRoot, 'recorded') }),
    comparePath ? startChild<StackInfo>(comparePath, { BENCH_DATA_DIR: join(dataRoot, 'data-compare') }) : undefined,
  ]);

  /** One stack's acknowledge-mode trigger, and how to wait until its flow worker has drained the queue. */
  const prepare = async (stack: BenchChild<StackInfo>) => {
    const created = await fetch(`${stack.info.baseUrl}/triggers`, {
      method: 'POST',
      headers: { authorization: `Bearer ${stack.info.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ flow: 'echo', response_mode: 'acknowledge', signature: { service: 'stripe', secret } }),
    });
    if (created.status !== 201) throw new Error(`creating the trigger failed: ${created.status} ${await created.text()}`);
    const { url, id: triggerId } = ((await created.json()) as { data: { url: string; id: string } }).data;
    const sqs = new SQSClient({ region: LOCAL_AWS_ENV.AWS_REGION, credentials: { accessKeyId: 'local', secretAccessKey: 'local' }, endpoint: stack.info.env.AWS_ENDPOINT_URL_SQS });
    const flowQueue = stack.info.queueUrls.flowEvents!;
    const queueDepth = async () => {
      const { Attributes = {} } = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: flowQueue, AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'] }));
      // local-aws-sqs counts a received message in both; AWS in one or the other. Either way 0 is empty.
      return { messages: Number(Attributes.ApproximateNumberOfMessages), inFlight: Number(Attributes.ApproximateNumberOfMessagesNotVisible) };
    };
    /**
     * Waits until the stack's flow worker has taken every accepted event off the queue, and
     * returns the stack's CPU time per event drained: the flow worker's cost, nearly alone.
     */
    const drain = async () => {
      const started = Date.now();
      const { messages } = await queueDepth();
      const cpuBefore = await stack.cpuUs();
      for (;;) {
        const depth = await queueDepth();
        if (depth.messages + depth.inFlight === 0) break;
        if (Date.now() - started > DRAIN_TIMEOUT_MS) throw new Error('the flow worker did not drain the queue in time');
        await sleep(100);
      }
      const cpuUs = (await stack.cpuUs()) - cpuBefore;
      await sleep(250);
      return { events: messages, ms: Date.now() - started, cpuUsPerEvent: messages > 0 ? cpuUs / messages : 0 };
    };
    /** Each delivery received since `sinceMs`: when it was acknowledged and when its flow had run (epoch ms). */
    const outcomes = async (sinceMs: number) => {
      const events: { received: number; finished: number }[] = [];
      let cursor: string | undefined;
      do {
        const page = await fetch(`${stack.info.baseUrl}/triggers/${triggerId}/executions?limit=500${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { headers: { authorization: `Bearer ${stack.info.token}` } });
        const { executions, next_cursor: next } = ((await page.json()) as { data: { executions: { received_at: string; timeline: { finished_at?: string }[] }[]; next_cursor?: string | null } }).data;
        for (const e of executions) {
          const received = Date.parse(e.received_at);
          const finished = e.timeline.at(-1)?.finished_at;
          if (received >= sinceMs && finished) events.push({ received, finished: Date.parse(finished) });
        }
        // Newest first: older pages are the warm-up's.
        cursor = executions.length > 0 && Date.parse(executions.at(-1)!.received_at) >= sinceMs ? next ?? undefined : undefined;
      } while (cursor);
      return events;
    };
    return { url, drain, outcomes, close: () => sqs.destroy() };
  };
  const [onDisk, onDiskInline, onDiskCompare] = await Promise.all([prepare(disk), prepare(inline), compare ? prepare(compare) : undefined]);

  // Each request its own event, as a sender sends them: the receiver refuses a signed delivery it
  // has already taken as a replay (`duplicate`), which would skip what a delivery costs.
  let sent = 0;
  const signedEvent = () => {
    const body = jsonEvent(BODY_BYTES, `evt_bench_${(sent++).toString(36).padStart(8, '0')}`);
    return { headers: { 'content-type': 'application/json', 'user-agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)', ...signStripe({ secret, body, timestamp: Math.floor(Date.now() / 1000) }) }, body: Buffer.from(body) };
  };
  const servers = {
    stack: { child: disk, url: onDisk.url, drain: onDisk.drain },
    inline: { child: inline, url: onDiskInline.url, drain: onDiskInline.drain },
    bare: { child: bare, url: bare.info.url, drain: undefined },
    floor: { child: floor, url: floor.info.url, drain: undefined },
    recorded: { child: recorded, url: recorded.info.url, drain: undefined },
    ...(compare && onDiskCompare && { compare: { child: compare, url: onDiskCompare.url, drain: onDiskCompare.drain } }),
  } as Record<'stack' | 'inline' | 'bare' | 'floor' | 'recorded' | 'compare', { child: BenchChild<unknown>; url: string; drain: (() => ReturnType<typeof onDisk.drain>) | undefined }>;
  type Name = keyof typeof servers;
  const load = async (name: Name, total: number) => {
    const { child, url } = servers[name];
    const cpuBefore = await child.cpuUs();
    const startedAt = Date.now();
    const result = await runLoad(url, { total, concurrency: CONCURRENCY, requests: signedEvent });
    const serverCpuUs = (await child.cpuUs()) - cpuBefore;
    if (result.statuses[200] !== total) throw new Error(`${name}: not every request was acknowledged: ${JSON.stringify(result.statuses)} ${result.sampleBody}`);
    if ((JSON.parse(result.sampleBody) as { status?: string }).status !== 'accepted') throw new Error(`${name} answered ${result.sampleBody}`);
    return { ...result, startedAt, endedAt: Date.now(), serverCpuUsPerRequest: serverCpuUs / total };
  };

  const order: Name[] = ['stack', 'inline', 'bare', 'floor', 'recorded', ...(compare ? ['compare' as const] : [])];
  // Warm-ups are not measured, so every server warms at once and each stack's flow worker drains
  // its backlog while the others still take requests: one after another they took about 40% of
  // the bench's time, two stacks' drains included. All are drained before the first measured run.
  await Promise.all(order.map(async (name) => {
    await load(name, servers[name].drain ? WARMUP_REQUESTS.stack : WARMUP_REQUESTS.bare);
    await servers[name].drain?.();
  }));
  const measuredFrom = Date.now();
  const runs: Record<Name, (LoadResult & { startedAt: number; endedAt: number; serverCpuUsPerRequest: number })[]> = { stack: [], inline: [], bare: [], floor: [], recorded: [], compare: [] };
  type Drained = Name & ('stack' | 'inline' | 'compare');
  const drains: Record<Drained, Awaited<ReturnType<typeof onDisk.drain>>[]> = { stack: [], inline: [], compare: [] };
  for (let round = 0; round < ROUNDS; round++) {
    // Each server goes first in turn.
    for (const name of [...order.slice(round % order.length), ...order.slice(0, round % order.length)]) {
      runs[name].push(await load(name, REQUESTS));
      // Always empty before the next run: the backlog would otherwise take the next server's core.
      const drained = await servers[name].drain?.();
      if (drained) drains[name as Drained].push(drained);
    }
  }
  const workerCpuUs = { stack: median(drains.stack.map((d) => d.cpuUsPerEvent)) };
  const drainSeconds = (name: Drained) => drains[name].reduce((sum, d) => sum + d.ms, 0) / 1000;
  /**
   * Events whose flow had run, per second: a run's events over the time from its first request
   * until the last of their flows had finished (the flows' own end times, as the executions record them).
   */
  const completion = (name: 'stack' | 'inline' | 'compare', events: { received: number; finished: number }[]) => median(runs[name].map((run) => {
    const mine = events.filter((e) => e.received >= run.startedAt && e.received <= run.endedAt);
    if (mine.length !== REQUESTS) throw new Error(`${name}: ${mine.length} of a run's ${REQUESTS} events have a finished flow`);
    return REQUESTS / ((Math.max(...mine.map((e) => e.finished)) - run.startedAt) / 1000);
  }));
  const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
  const [stackOutcomes, inlineOutcomes, compareOutcomes] = await Promise.all([onDisk.outcomes(measuredFrom), onDiskInline.outcomes(measuredFrom), onDiskCompare?.outcomes(measuredFrom)]);
  const waitsOf = (events: typeof stackOutcomes) => events.map((e) => e.finished - e.received).sort((a, b) => a - b);

  const summarise = (list: (typeof runs)[Name]) => ({
    requests_per_s: median(list.map((r) => r.requestsPerSecond)),
    p50_ms: median(list.map((r) => r.p50Ms)),
    p99_ms: median(list.map((r) => r.p99Ms)),
    server_cpu_us_per_request: median(list.map((r) => r.serverCpuUsPerRequest)),
    client_cpu_share: median(list.map((r) => r.clientCpuShare)),
    samples_rps: list.map((r) => r.requestsPerSecond),
  });
  const local = summarise(runs.stack);
  const localInline = summarise(runs.inline);
  const endToEnd = (name: 'stack' | 'inline' | 'compare', events: typeof stackOutcomes, acknowledged: number) => ({
    acknowledged_per_s: acknowledged,
    completed_per_s: completion(name, events),
    completed_to_acknowledged: completion(name, events) / acknowledged,
    wait_p50_ms: percentile(waitsOf(events), 50),
    wait_p99_ms: percentile(waitsOf(events), 99),
    waits_measured: events.length,
  });
  const threaded = endToEnd('stack', stackOutcomes, local.requests_per_s);
  const sameThread = endToEnd('inline', inlineOutcomes, localInline.requests_per_s);
  const completionGain = threaded.completed_per_s / sameThread.completed_per_s;
  const completionMet = threaded.completed_to_acknowledged >= COMPLETION_TARGET && completionGain >= COMPLETION_GAIN_TARGET;
  const baseline = summarise(runs.bare);
  const durableFloor = summarise(runs.floor);
  const recordedFloor = summarise(runs.recorded);
  const perRound = (a: Name, b: Name) => median(runs[a].map((r, i) => r.requestsPerSecond / runs[b][i]!.requestsPerSecond));
  const ratio = perRound('stack', 'bare');
  const floorRatio = perRound('floor', 'bare');
  const stackToFloor = perRound('stack', 'floor');
  const stackToRecorded = perRound('stack', 'recorded');
  const met = stackToFloor >= TARGET_RATIO;

  console.log(`${int(REQUESTS)} POSTs of a ${BODY_BYTES / KB} KB Stripe-signed body per run, ${CONCURRENCY} in flight over keep-alive, ${ROUNDS} rounds; medians`);
  console.log(`${''.padEnd(34)}${'req/s'.padStart(9)}${'p50 ms'.padStart(9)}${'p99 ms'.padStart(9)}${'server CPU µs/req'.padStart(19)}${'client CPU'.padStart(12)}`);
  const line = (label: string, s: ReturnType<typeof summarise>) =>
    console.log(`${label.padEnd(34)}${int(s.requests_per_s).padStart(9)}${fixed(s.p50_ms, 2).padStart(9)}${fixed(s.p99_ms, 2).padStart(9)}${int(s.server_cpu_us_per_request).padStart(19)}${`${Math.round(s.client_cpu_share * 100)}%`.padStart(12)}`);
  line('local stack, data directory', local);
  line('  before #35 (one thread, a call per write)', localInline);
  line('bare node:http verify + parse', baseline);
  line('durable floor: bare + SQS send', durableFloor);
  line('recorded floor: + 2 PutItems on disk', recordedFloor);
  console.log(`stack on disk/durable floor (per round): ${times(stackToFloor)}; target ≥ ${TARGET_RATIO}x: ${verdict(met)}`);
  console.log(`stack/bare: ${times(ratio)}; durable floor/bare: ${times(floorRatio)} (the ceiling for any receiver that queues each event through the AWS SDK here)`);
  console.log(`the stacks' CPU includes their flow worker running the accepted events' flows: alone (while draining the backlog after each run, ${fixed(drainSeconds('stack'))} s in all) it costs ${int(workerCpuUs.stack)} µs/event`);
  console.log(`stack on disk/recorded floor (per round): ${times(stackToRecorded)}: the floor with the two writes every acknowledged delivery needs (its record and its request, on disk), so the rest is the stack's own cost, its flow worker included`);
  console.log('"client CPU" is the load generator\'s share of one core: near 100% would mean the generator, not the server, set the pace');
  console.log(`end to end, on disk: acknowledged/s, completed/s (a run's events over the time from its first request until the last of their flows had finished), and each event's wait from acknowledgment to its flow's end`);
  const e2eLine = (label: string, e: typeof threaded) =>
    console.log(`${label.padEnd(44)}${int(e.acknowledged_per_s).padStart(7)} ack/s${int(e.completed_per_s).padStart(7)} done/s  ${times(e.completed_to_acknowledged)} of ack   wait p50 ${int(e.wait_p50_ms)} ms, p99 ${int(e.wait_p99_ms)} ms (${int(e.waits_measured)} events)`);
  e2eLine('flow worker on its own thread (npm start)', threaded);
  e2eLine('before #35 (everything on one thread)', sameThread);
  const compared = compare && compareOutcomes ? { commit: COMPARE!, local: summarise(runs.compare), end_to_end: endToEnd('compare', compareOutcomes, summarise(runs.compare).requests_per_s) } : undefined;
  if (compared) {
    line(`  at ${compared.commit.slice(0, 7)} (same run)`, compared.local);
    e2eLine(`at ${compared.commit.slice(0, 7)} (same run)`, compared.end_to_end);
    console.log(`today ÷ ${compared.commit.slice(0, 7)}: acknowledged ${times(local.requests_per_s / compared.local.requests_per_s)}, completed ${times(threaded.completed_per_s / compared.end_to_end.completed_per_s)}, server CPU per request ${times(local.server_cpu_us_per_request / compared.local.server_cpu_us_per_request)}`);
  }
  console.log(`targets: completed ≥ ${COMPLETION_TARGET}x acknowledged: ${times(threaded.completed_to_acknowledged)}; completed ≥ ${COMPLETION_GAIN_TARGET}x the stack's before #35: ${times(completionGain)}: ${verdict(completionMet)}`);

  onDisk.close();
  onDiskInline.close();
  onDiskCompare?.close();
  await Promise.all([disk.stop(), inline.stop(), bare.stop(), floor.stop(), recorded.stop(), compare?.stop()]);
  await rm(dataRoot, { recursive: true, force: true });
  const chart: ChartRow[] = [
    { label: 'stack on disk ÷ durable floor', group: 'requests/s over loopback HTTP', value: stackToFloor, target: TARGET_RATIO, better: 'higher', scale: 'log', text: `${times(stackToFloor)} (${int(local.requests_per_s)} vs ${int(durableFloor.requests_per_s)} req/s; p99 ${fixed(local.p99_ms, 1)} vs ${fixed(durableFloor.p99_ms, 1)} ms)` },
    { label: 'stack on disk ÷ bare', group: 'requests/s over loopback HTTP', value: ratio, better: 'higher', scale: 'log', text: `${times(ratio)} (bare: ${int(baseline.requests_per_s)} req/s)` },
    { label: 'stack on disk ÷ recorded floor', group: 'requests/s over loopback HTTP', value: stackToRecorded, better: 'higher', scale: 'log', text: `${times(stackToRecorded)} (recorded floor: ${int(recordedFloor.requests_per_s)} req/s, its two writes on disk)` },
    { label: 'completed ÷ acknowledged, on disk', group: 'events whose flow has run, per second', value: threaded.completed_to_acknowledged, target: COMPLETION_TARGET, better: 'higher', text: `${times(threaded.completed_to_acknowledged)} (${int(threaded.completed_per_s)} of ${int(threaded.acknowledged_per_s)}/s; wait p50 ${int(threaded.wait_p50_ms)} ms, p99 ${int(threaded.wait_p99_ms)} ms)` },
    { label: 'completed, today ÷ before #35', group: 'events whose flow has run, per second', value: completionGain, target: COMPLETION_GAIN_TARGET, better: 'higher', text: `${times(completionGain)} (${int(threaded.completed_per_s)} vs ${int(sameThread.completed_per_s)}/s)` },
    { label: 'durable floor ÷ bare', group: 'requests/s over loopback HTTP', value: floorRatio, better: 'higher', scale: 'log', text: `${times(floorRatio)}: bare + one SQS send` },
  ];
  return {
    body_bytes: BODY_BYTES, requests: REQUESTS, concurrency: CONCURRENCY, rounds: ROUNDS,
    local_stack: local, flow_worker_cpu_us_per_event: workerCpuUs.stack,
    baseline, durable_floor: durableFloor, recorded_floor: recordedFloor, stack_to_recorded_floor: stackToRecorded, ratio, durable_floor_ratio: floorRatio, stack_to_durable_floor: stackToFloor,
    end_to_end: threaded, end_to_end_same_thread: sameThread, completion_gain: completionGain, completion_target: COMPLETION_TARGET, completion_gain_target: COMPLETION_GAIN_TARGET, completion_met: completionMet,
    target_ratio: TARGET_RATIO, target_met: met && completionMet, ...(compared && { compared }), chart,
  };
}
