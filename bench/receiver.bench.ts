import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { ChartRow } from './support/chart-row.js';
import { startChild } from './support/child.js';
import type { PerEventSummary, ReceiverMeasurement } from './support/receiver-child.js';
import { KB } from './support/payloads.js';
import { fixed, int, times } from './support/timing.js';

/**
 * `npm run bench receiver`: the whole webhook handler in process, one event at a time as Lambda
 * runs it: an API Gateway payload 2.0 event with a Stripe-signed 1 KB body in, trigger lookup from
 * the receiver's cache, signature check, parse, an execution record put to DynamoDB and the flow
 * message sent to SQS, `200 accepted` out; at the end the flow queue must hold every message.
 *
 * The handler runs in a fresh process (support/receiver-child.ts) and the engines, started by the
 * same `startEngines` the local stack uses, in another, so the handler process's CPU time is the
 * handler's own (AWS SDK clients and HTTP included) and the engines' is read from theirs.
 * Two references are measured in the same, rotating rounds:
 * - the bare baseline: the Stripe HMAC checked by hand and the body JSON.parsed, nothing else;
 * - the SDK floor: the same PutItem and SendMessage made directly with the handler's own clients,
 *   the part of the handler's cost that is the two AWS calls rather than our code.
 */
/** The receiver's CPU per event before it stored each delivery's request (#14), from the results file, to print beside today's. */
async function figureBeforeRequestStorage(): Promise<{ cpu_us_per_event: number; measured_at: string } | undefined> {
  const results = await readFile(resolve(import.meta.dirname, 'results.json'), 'utf8').then((text) => JSON.parse(text).results, () => ({}));
  const previous = results.receiver as { before_request_storage?: { cpu_us_per_event: number; measured_at: string }; handler_cpu_us_per_event?: number; measured_at?: string } | undefined;
  if (previous?.before_request_storage) return previous.before_request_storage;
  return previous?.handler_cpu_us_per_event === undefined ? undefined : { cpu_us_per_event: previous.handler_cpu_us_per_event, measured_at: previous.measured_at ?? '' };
}

export default async function receiverBench() {
  const before = await figureBeforeRequestStorage();
  const child = await startChild<ReceiverMeasurement>('receiver-child.ts');
  const result = child.info;
  await child.stop();
  const { handler, sdk_floor: floor, baseline } = result;

  const line = (name: string, s: PerEventSummary) =>
    console.log(`${name.padEnd(40)}${fixed(s.wall_us_per_event).padStart(10)}${fixed(s.cpu_us_per_event).padStart(10)}${fixed(s.engines_cpu_us_per_event).padStart(12)}`);
  console.log(`per event, medians of ${result.rounds} rotating rounds (${result.events_per_round.handler} handler events, ${int(result.events_per_round.baseline)} baseline events each), ${result.body_bytes / KB} KB Stripe-signed body`);
  console.log(`${''.padEnd(40)}${'wall µs'.padStart(10)}${'CPU µs'.padStart(10)}${'engines µs'.padStart(12)}`);
  line('webhook handler (engines in a child)', handler);
  line('  the 3 AWS calls alone (SDK floor)', floor);
  line('bare: verify HMAC + JSON.parse', baseline);
  console.log(`ratio (bare ÷ handler, wall time per round): ${times(result.ratio)}; CPU ${times(result.cpu_ratio)}`);
  console.log(`handler's own CPU: ${fixed(handler.cpu_us_per_event)} µs/event; the two DynamoDB puts + SQS send through the SDK alone take ${fixed(floor.cpu_us_per_event)} µs, leaving ${fixed(handler.cpu_us_per_event - floor.cpu_us_per_event)} µs for routing, cache, verification, parse and input building`);
  console.log(`engines' CPU (dynalite + local SQS, their own process): ${fixed(handler.engines_cpu_us_per_event)} µs/event, which in-process engines (startLocalStack) would add to the handler's figure`);
  if (before) {
    console.log(`handler's CPU per acknowledged event: ${fixed(handler.cpu_us_per_event)} µs now (the replay claim, then the status record and the request in one BatchWriteItem, then the SQS send), ${fixed(before.cpu_us_per_event)} µs before requests were stored (measured ${before.measured_at.slice(0, 10)}): ${handler.cpu_us_per_event >= before.cpu_us_per_event ? '+' : ''}${fixed(handler.cpu_us_per_event - before.cpu_us_per_event)} µs`);
  }
  console.log(`flow queue: ${int(result.flow_queue_messages)} messages for ${int(result.expected_messages)} sends (handler and SDK floor)`);
  if (result.flow_queue_messages !== result.expected_messages) throw new Error('the flow queue does not hold one message per send');

  const group = 'bare verify + parse ÷ whole handler, per event (no target)';
  const chart: ChartRow[] = [
    { label: 'wall time', group, value: result.ratio, better: 'higher', scale: 'log', text: `${times(result.ratio)} (${fixed(baseline.wall_us_per_event)} vs ${fixed(handler.wall_us_per_event)} µs/event)` },
    { label: 'CPU time', group, value: result.cpu_ratio, better: 'higher', scale: 'log', text: `${times(result.cpu_ratio)} (${fixed(baseline.cpu_us_per_event)} vs ${fixed(handler.cpu_us_per_event)} CPU µs/event)` },
  ];
  return { ...result, handler_cpu_us_per_event: handler.cpu_us_per_event, ...(before && { before_request_storage: before }), chart };
}
