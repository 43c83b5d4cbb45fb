// Each sender's own event type and delivery id over HTTP on the local stack, read by its catalog
// row: one delivery per row, shaped as the sender's docs show it (test/support/sender-deliveries.ts,
// the table the domain test reads too), signed as the sender signs (test/support/sender-http.ts).
// For every row with a type: the delivery is recorded with it, a filter on it runs the flow, and
// another type is ignored. For every row with an id: the same delivery twice on a deduplicating
// trigger runs once, and `event_id` is the sender's id. For GitHub, every example payload
// @octokit/webhooks-examples ships, with its event name. Triggers and deliveries run side by side;
// the count that keeps every row here is in test/domain/senders/event-types.test.ts.
import { createRequire } from 'node:module';
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { RequestValue } from '../../functions/domain/webhooks/senders/catalog-types.js';
import { senderRow } from '../../functions/domain/webhooks/senders/catalog.js';
import { useLocalStack } from '../support/local-stack.js';
import { DELIVERIES, type SenderDelivery } from '../support/sender-deliveries.js';
import { HTTP_SENDERS, ROWS_NOT_SENT, SENDER_KEYS } from '../support/sender-http.js';
import { createTrigger, deliver, TEST_FLOWS_DIR, waitForExecutions } from '../support/webhooks.js';

const stack = useLocalStack({ flowsDir: TEST_FLOWS_DIR, senderKeys: SENDER_KEYS });

const nowSeconds = () => Math.floor(Date.now() / 1000);
const settled = (count: number) => (list: { status: string }[]) => list.length === count && list.every((e) => e.status !== 'queued' && e.status !== 'running');
const overHttp = ([service]: [string, SenderDelivery]) => !(service in ROWS_NOT_SENT);
const TYPED = Object.entries(DELIVERIES).filter(([, delivery]) => delivery.type).filter(overHttp);
const WITH_ID = Object.entries(DELIVERIES).filter(([, delivery]) => delivery.id).filter(overHttp);

/** Sends `delivery` as `service` sends it, signed at `now`; the same `nonce` is the same request, retried. */
async function send(service: string, url: string, delivery: SenderDelivery, nonce: string, now = nowSeconds()) {
  const sender = HTTP_SENDERS[service];
  if (!sender) throw new Error(`${service}: say how it signs in test/support/sender-http.ts`);
  const sent = await sender.sign({ url, headers: delivery.headers ?? {}, body: JSON.stringify(delivery.body), now, nonce });
  return deliver(sent.url, sent.body, sent.headers);
}

/** The delivery with another type and id, written where its row reads them first: another event of the same sender. */
function another(service: string, delivery: SenderDelivery, type: string): SenderDelivery {
  const row = senderRow(service)!;
  const headers = { ...delivery.headers };
  const body = structuredClone(delivery.body);
  const write = (source: RequestValue, value: string) => {
    if (source.from === 'header') headers[source.name] = value;
    else source.path.slice(0, -1).reduce((parent: any, key) => parent[key], body)[source.path.at(-1)!] = value;
  };
  if (row.event_type.sources[0]) write(row.event_type.sources[0], type);
  if (row.delivery_id && delivery.id) write(row.delivery_id, `${delivery.id}-2`);
  return { headers, body, type, ...(delivery.id && { id: `${delivery.id}-2` }) };
}

describe.concurrent('a filter on the sender\'s own event type, over HTTP', () => {
  for (const [service, delivery] of TYPED) {
    it(`${service}: a delivery as its docs show it is recorded as '${delivery.type}'; a filter on it runs the flow, and another type is ignored`, async () => {
      const token = await stack.token(`types-${service}`);
      const trigger = await createTrigger(stack, token, { flow: 'echo', event_filter: [delivery.type], ...HTTP_SENDERS[service]?.trigger });
      const other = another(service, delivery, `${delivery.type}.other`);
      const answers = await Promise.all([send(service, trigger.url, delivery, 'genuine'), send(service, trigger.url, other, 'other')]);
      for (const answer of answers) expect(answer.status, answer.text).toBe(200);
      const executions = await waitForExecutions(stack, token, trigger.id, settled(2));
      expect(executions.map((e) => [e.status, e.type]).sort()).toEqual([['ignored', other.type], ['succeeded', delivery.type]]);
      if (delivery.id) expect(executions.find((e) => e.status === 'succeeded').event_id).toBe(delivery.id);
    });
  }
});

describe.concurrent('deduplication on the sender\'s own delivery id, over HTTP', () => {
  for (const [service, delivery] of WITH_ID) {
    it(`${service}: the same delivery twice (signed anew where the sender signs a time) runs the flow once, with event_id '${delivery.id}'`, async () => {
      const token = await stack.token(`ids-${service}`);
      const trigger = await createTrigger(stack, token, { flow: 'echo', deduplicate: true, ...HTTP_SENDERS[service]?.trigger });
      const t = nowSeconds();
      const first = await send(service, trigger.url, delivery, 'retried', t - 1);
      expect(first.status, first.text).toBe(200);
      const again = await send(service, trigger.url, delivery, 'retried', HTTP_SENDERS[service]?.retry === 'same bytes' ? t - 1 : t);
      expect(again.status, again.text).toBe(200);
      const executions = await waitForExecutions(stack, token, trigger.id, settled(2));
      expect(executions.map((e) => e.status).sort()).toEqual(['duplicate', 'succeeded']);
      expect(executions.map((e) => e.event_id)).toEqual([delivery.id, delivery.id]);
      expect(executions.map((e) => e.type ?? '')).toEqual([delivery.type, delivery.type]);
    });
  }
});

/** The examples @octokit/webhooks-examples ships, by event name (its main is JSON). */
const GITHUB_EXAMPLES = createRequire(import.meta.url)('@octokit/webhooks-examples') as { name: string; examples: unknown[] }[];
/** Deliveries in flight at once: enough to keep the stack busy, few enough not to queue up behind each other. */
const IN_FLIGHT = 24;

/** Runs `task` over `items`, `IN_FLIGHT` at a time. */
async function inParallel<T>(items: readonly T[], task: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await task(items[next++]!);
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
}

describe('github: every example payload @octokit/webhooks-examples ships, sent with its event name', () => {
  it('each is recorded with its event name and X-GitHub-Delivery; a trigger filtering on half the names runs their examples and ignores the other half\'s', async () => {
    const halves = [0, 1].map((half) => GITHUB_EXAMPLES.filter((_, i) => i % 2 === half).map((definition) => definition.name));
    const token = await stack.token('github-examples');
    const triggers = await Promise.all(halves.map((filter) => createTrigger(stack, token, { flow: 'echo', event_filter: filter, ...HTTP_SENDERS.github!.trigger })));
    // Every example to the trigger filtering on its name; one example of each name to the other trigger.
    const sends = GITHUB_EXAMPLES.flatMap(({ name, examples }, i) => [
      ...examples.map((body) => ({ trigger: triggers[i % 2]!, name, body })),
      { trigger: triggers[(i + 1) % 2]!, name, body: examples[0] },
    ]);
    expect(sends.length).toBeGreaterThan(300);
    const typeOf = new Map<string, string>();
    await inParallel(sends, async ({ trigger, name, body }) => {
      const id = randomUUID();
      typeOf.set(id, name);
      const answer = await send('github', trigger.url, { headers: { 'x-github-event': name, 'x-github-delivery': id }, body, type: name, id }, id);
      expect(answer.status, `${name}: ${answer.text}`).toBe(200);
    });
    for (const [i, trigger] of triggers.entries()) {
      const executions = await waitForExecutions(stack, token, trigger.id, settled(sends.filter((sent) => sent.trigger === trigger).length), 60_000);
      for (const execution of executions) {
        expect(execution.type, execution.event_id).toBe(typeOf.get(execution.event_id));
        expect([execution.type, execution.status]).toEqual([execution.type, halves[i]!.includes(execution.type) ? 'succeeded' : 'ignored']);
      }
      expect(new Set(executions.filter((e) => e.status === 'ignored').map((e) => e.type))).toEqual(new Set(halves[1 - i]));
    }
  }, 120_000);
});
