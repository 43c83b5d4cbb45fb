import { describe, expect, it } from 'vitest';
import { signStripe } from '../support/signers.js';
import { useLocalStack } from '../support/local-stack.js';
import { createTrigger, deliver, waitForExecutions } from '../support/webhooks.js';

const stack = useLocalStack();

/**
 * Three rounds of 50 senders, who overlap all the way through: what is tested is 50 deliveries in
 * flight at once, not volume, which `npm run bench throughput` carries.
 */
const EVENTS = 150;
const SENDERS = 50;
/** Every tenth event is delivered a second time, as senders retry. */
const REDELIVER_EVERY = 10;
const SECRET = 'whsec_load_test_secret';

/** Runs `work` over `items` with at most `limit` in flight. */
async function pool<T>(items: T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: limit }, async () => {
    while (next < items.length) await work(items[next++]!);
  }));
}

async function sendAll(url: string): Promise<{ accepted: Set<string>; answers: Map<number, number> }> {
  const ids = Array.from({ length: EVENTS }, (_, i) => `evt_load_${i}`);
  const deliveries = [...ids, ...ids.filter((_, i) => i % REDELIVER_EVERY === 0)];
  const accepted = new Set<string>();
  const answers = new Map<number, number>();
  const signedAt = new Map<string, number>();
  await pool(deliveries, SENDERS, async (id) => {
    const body = JSON.stringify({ id, type: 'charge.succeeded', data: { object: { amount: 100 } } });
    // A retry is signed anew, as Stripe signs it: never the same bytes as the first delivery,
    // which the receiver would refuse as a replay.
    const now = Math.floor(Date.now() / 1000);
    const timestamp = signedAt.get(id) === now ? now - 1 : now;
    signedAt.set(id, timestamp);
    const res = await deliver(url, body, signStripe({ secret: SECRET, body, timestamp }));
    answers.set(res.status, (answers.get(res.status) ?? 0) + 1);
    if (res.status === 200 && res.json.status === 'accepted') accepted.add(id);
  });
  return { accepted, answers };
}

describe(`load: ${EVENTS} signed events from ${SENDERS} concurrent senders`, () => {
  it('with deduplicate, every accepted event has exactly one succeeded execution', async () => {
    const token = await stack.token('load-owner');
    const trigger = await createTrigger(stack, token, { flow: 'echo', deduplicate: true, signature: { service: 'stripe', secret: SECRET } });
    const { accepted, answers } = await sendAll(trigger.url);
    expect(Object.fromEntries(answers)).toEqual({ 200: EVENTS + EVENTS / REDELIVER_EVERY });
    const executions = await waitForExecutions(stack, token, trigger.id, (e) => e.filter((x) => x.status === 'succeeded').length >= accepted.size, 240_000);
    const succeeded = new Map<string, number>();
    for (const e of executions) if (e.status === 'succeeded') succeeded.set(e.event_id, (succeeded.get(e.event_id) ?? 0) + 1);
    const lost = [...accepted].filter((id) => !succeeded.has(id));
    console.log(`load (deduplicate): ${accepted.size} accepted, ${executions.filter((e) => e.status === 'duplicate').length} duplicates answered, lost events: ${lost.length}`);
    expect(accepted.size).toBe(EVENTS);
    expect(lost).toEqual([]);
    expect([...succeeded.values()].every((n) => n === 1)).toBe(true);
  }, 300_000);

  it('without deduplicate, every accepted delivery runs: at least one succeeded execution per event', async () => {
    const token = await stack.token('load-owner-2');
    const trigger = await createTrigger(stack, token, { flow: 'echo', signature: { service: 'stripe', secret: SECRET } });
    const { accepted } = await sendAll(trigger.url);
    const deliveries = EVENTS + EVENTS / REDELIVER_EVERY;
    const executions = await waitForExecutions(stack, token, trigger.id, (e) => e.filter((x) => x.status === 'succeeded').length >= deliveries, 240_000);
    const succeeded = new Set(executions.filter((e) => e.status === 'succeeded').map((e) => e.event_id));
    const lost = [...accepted].filter((id) => !succeeded.has(id));
    console.log(`load (every delivery): ${executions.length} executions for ${deliveries} deliveries, lost events: ${lost.length}`);
    expect(lost).toEqual([]);
  }, 300_000);
});
