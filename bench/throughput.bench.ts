import { randomBytes } from 'node:crypto';
import { GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { LOCAL_AWS_ENV } from '../local/engines.js';
import { signStripe } from '../test/support/signers.js';
import type { ChartRow } from './support/chart-row.js';
import { startChild } from './support/child.js';
import { runLoad, type LoadResult } from './support/load.js';
import { jsonEvent, KB } from './support/payloads.js';
import { fixed, int, median, sleep, times, verdict } from './support/timing.js';

/**
 * `npm run bench throughput`: acknowledged Stripe-signed webhooks over HTTP on loopback, against
 * the local stack as `npm start` runs it (one process: engines, handlers, API Gateway stand-in,
 * and the SQS pollers whose flow worker runs each accepted event's flow) and against a bare
 * `node:http` server that verifies the same signature by hand, parses the JSON and answers 200.
 * The target is against that bare server. A second baseline, the "durable floor", is the bare
 * server plus one SQS `SendMessage` through the AWS SDK to an in-process local-aws-sqs: the least
 * any receiver that acknowledges only queued events must do. Its own ratio to the bare server is
 * the ceiling for the stack on this machine, and the stack's ratio to it is the stack's overhead.
 *
 * Each server is a child process of its own and the load generator is this process, so on two
 * cores each server has a core and the generator the other; neither server shares its event loop
 * with the generator. Rounds alternate which server goes first, and before each run the stack's
 * flow queue is drained so that the flow worker's backlog does not steal the bare server's core.
 */
const BODY_BYTES = KB;
const REQUESTS = 2000;
const CONCURRENCY = 50;
const WARMUP_REQUESTS = 300;
const ROUNDS = 3;
const TARGET_RATIO = 0.5;
const DRAIN_TIMEOUT_MS = 120_000;

interface StackInfo {
  baseUrl: string;
  webhookBaseUrl: string;
  token: string;
  env: Record<string, string>;
  queueUrls: Record<string, string>;
}

export default async function throughputBench() {
  const secret = `whsec_${randomBytes(24).toString('base64url')}`;
  const [stack, bare, floor] = await Promise.all([
    startChild<StackInfo>('stack-child.ts'),
    startChild<{ url: string }>('bare-server-child.ts', { BENCH_STRIPE_SECRET: secret }),
    startChild<{ url: string }>('bare-server-child.ts', { BENCH_STRIPE_SECRET: secret, BENCH_DURABLE: '1' }),
  ]);

  const created = await fetch(`${stack.info.baseUrl}/triggers`, {
    method: 'POST',
    headers: { authorization: `Bearer ${stack.info.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ flow: 'echo', response_mode: 'acknowledge', signature: { service: 'stripe', secret } }),
  });
  if (created.status !== 201) throw new Error(`creating the trigger failed: ${created.status} ${await created.text()}`);
  const { url: stackUrl } = ((await created.json()) as { data: { url: string } }).data;

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

  const body = Buffer.from(jsonEvent(BODY_BYTES));
  const servers = { stack: { child: stack, url: stackUrl }, bare: { child: bare, url: bare.info.url }, floor: { child: floor, url: floor.info.url } };
  type Name = keyof typeof servers;
  const load = async (name: Name, total: number) => {
    const { child, url } = servers[name];
    const headers = { 'content-type': 'application/json', 'user-agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)', ...signStripe({ secret, body: body.toString('utf8'), timestamp: Math.floor(Date.now() / 1000) }) };
    const cpuBefore = await child.cpuUs();
    const result = await runLoad(url, { total, concurrency: CONCURRENCY, headers, body });
    const serverCpuUs = (await child.cpuUs()) - cpuBefore;
    if (result.statuses[200] !== total) throw new Error(`${name}: not every request was acknowledged: ${JSON.stringify(result.statuses)} ${result.sampleBody}`);
    if ((JSON.parse(result.sampleBody) as { status?: string }).status !== 'accepted') throw new Error(`${name} answered ${result.sampleBody}`);
    return { ...result, serverCpuUsPerRequest: serverCpuUs / total };
  };

  await load('stack', WARMUP_REQUESTS);
  await drain();
  await load('bare', WARMUP_REQUESTS);
  await load('floor', WARMUP_REQUESTS);
  const runs: Record<Name, (LoadResult & { serverCpuUsPerRequest: number })[]> = { stack: [], bare: [], floor: [] };
  const drains: Awaited<ReturnType<typeof drain>>[] = [];
  const order: Name[] = ['stack', 'bare', 'floor'];
  for (let round = 0; round < ROUNDS; round++) {
    // Each server goes first in turn.
    for (const name of [...order.slice(round % order.length), ...order.slice(0, round % order.length)]) {
      runs[name].push(await load(name, REQUESTS));
      // Always empty before the next run: the backlog would otherwise take the bare server's core.
      if (name === 'stack') drains.push(await drain());
    }
  }
  const workerCpuUs = median(drains.map((d) => d.cpuUsPerEvent));
  const drainSeconds = drains.reduce((sum, d) => sum + d.ms, 0) / 1000;

  const summarise = (list: (typeof runs)[Name]) => ({
    requests_per_s: median(list.map((r) => r.requestsPerSecond)),
    p50_ms: median(list.map((r) => r.p50Ms)),
    p99_ms: median(list.map((r) => r.p99Ms)),
    server_cpu_us_per_request: median(list.map((r) => r.serverCpuUsPerRequest)),
    client_cpu_share: median(list.map((r) => r.clientCpuShare)),
    samples_rps: list.map((r) => r.requestsPerSecond),
  });
  const local = summarise(runs.stack);
  const baseline = summarise(runs.bare);
  const durableFloor = summarise(runs.floor);
  const perRound = (a: Name, b: Name) => median(runs[a].map((r, i) => r.requestsPerSecond / runs[b][i]!.requestsPerSecond));
  const ratio = perRound('stack', 'bare');
  const floorRatio = perRound('floor', 'bare');
  const stackToFloor = perRound('stack', 'floor');
  const met = ratio >= TARGET_RATIO;

  console.log(`${int(REQUESTS)} POSTs of a ${BODY_BYTES / KB} KB Stripe-signed body per run, ${CONCURRENCY} in flight over keep-alive, ${ROUNDS} rounds; medians`);
  console.log(`${''.padEnd(34)}${'req/s'.padStart(9)}${'p50 ms'.padStart(9)}${'p99 ms'.padStart(9)}${'server CPU µs/req'.padStart(19)}${'client CPU'.padStart(12)}`);
  const line = (label: string, s: ReturnType<typeof summarise>) =>
    console.log(`${label.padEnd(34)}${int(s.requests_per_s).padStart(9)}${fixed(s.p50_ms, 2).padStart(9)}${fixed(s.p99_ms, 2).padStart(9)}${int(s.server_cpu_us_per_request).padStart(19)}${`${Math.round(s.client_cpu_share * 100)}%`.padStart(12)}`);
  line('local stack (one process)', local);
  line('bare node:http verify + parse', baseline);
  line('durable floor: bare + SQS send', durableFloor);
  console.log(`ratio (per round, stack/bare): ${times(ratio)}; target ≥ ${TARGET_RATIO}x: ${verdict(met)}`);
  console.log(`durable floor/bare: ${times(floorRatio)} (the ceiling for any receiver that queues each event through the AWS SDK here); stack/durable floor: ${times(stackToFloor)}`);
  console.log(`the stack process's CPU includes its flow worker running the accepted events' flows: alone (while draining the backlog after each run, ${fixed(drainSeconds)} s in all) it costs ${int(workerCpuUs)} µs/event`);
  console.log('"client CPU" is the load generator\'s share of one core: near 100% would mean the generator, not the server, set the pace');

  sqs.destroy();
  await Promise.all([stack.stop(), bare.stop(), floor.stop()]);
  const chart: ChartRow[] = [
    { label: 'stack ÷ bare', group: 'requests/s over loopback HTTP', value: ratio, target: TARGET_RATIO, better: 'higher', scale: 'log', text: `${times(ratio)} (${int(local.requests_per_s)} vs ${int(baseline.requests_per_s)} req/s; p99 ${fixed(local.p99_ms, 1)} vs ${fixed(baseline.p99_ms, 1)} ms)` },
    { label: 'durable floor ÷ bare', group: 'requests/s over loopback HTTP', value: floorRatio, better: 'higher', scale: 'log', text: `${times(floorRatio)} (${int(durableFloor.requests_per_s)} req/s): bare + one SQS send` },
    { label: 'stack ÷ durable floor', group: 'requests/s over loopback HTTP', value: stackToFloor, better: 'higher', scale: 'log', text: `${times(stackToFloor)}` },
  ];
  return { body_bytes: BODY_BYTES, requests: REQUESTS, concurrency: CONCURRENCY, rounds: ROUNDS, local_stack: local, flow_worker_cpu_us_per_event: workerCpuUs, baseline, durable_floor: durableFloor, ratio, durable_floor_ratio: floorRatio, stack_to_durable_floor: stackToFloor, target_ratio: TARGET_RATIO, target_met: met, chart };
}
