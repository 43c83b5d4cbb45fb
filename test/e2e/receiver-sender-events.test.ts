// Each sender's own event type and delivery id over HTTP on the local stack, read by its catalog
// row: one delivery per row, shaped as the sender's docs show it (test/support/sender-deliveries.ts,
// the table the domain test reads too), signed as the sender signs (test/support/sender-http.ts).
// For every row with a type: the delivery is recorded with it, a filter on it runs the flow, and
// another type is ignored. For every row with an id: the same delivery twice on a deduplicating
// trigger runs once, and `event_id` is the sender's id. For GitHub, every example payload
// @octokit/webhooks-examples ships, with its event name; and Discord's two kinds of webhook told
// apart. Every delivery is sent before the tests look, all rows side by side (the stack works on
// them together); each test then waits for its own trigger's executions and checks them. The
// count that keeps every row here is in test/domain/senders/event-types.test.ts.
import { createRequire } from 'node:module';
import { generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import type { RequestValue } from '../../functions/domain/webhooks/senders/catalog-types.js';
import { senderRow } from '../../functions/domain/webhooks/senders/catalog.js';
import { useLocalStack } from '../support/local-stack.js';
import { DELIVERIES, type SenderDelivery } from '../support/sender-deliveries.js';
import { HTTP_SENDERS, ROWS_NOT_SENT, SENDER_KEYS, type SentDelivery } from '../support/sender-http.js';
import { createTrigger, deliver, TEST_FLOWS_DIR, waitForExecutions } from '../support/webhooks.js';

const stack = useLocalStack({ flowsDir: TEST_FLOWS_DIR, senderKeys: SENDER_KEYS });

const nowSeconds = () => Math.floor(Date.now() / 1000);
const settled = (count: number) => (list: { status: string }[]) => list.length === count && list.every((e) => e.status !== 'queued' && e.status !== 'running');
const overHttp = ([service]: [string, SenderDelivery]) => !(service in ROWS_NOT_SENT);
const TYPED = Object.entries(DELIVERIES).filter(([, delivery]) => delivery.type).filter(overHttp);
const WITH_ID = Object.entries(DELIVERIES).filter(([, delivery]) => delivery.id).filter(overHttp);

/** `delivery` signed as `service` signs it, `ageSeconds` ago; the same `nonce` is the same request, retried. */
async function signed(service: string, url: string, delivery: SenderDelivery, nonce: string, ageSeconds = 0): Promise<SentDelivery> {
  const sender = HTTP_SENDERS[service];
  if (!sender) throw new Error(`${service}: say how it signs in test/support/sender-http.ts`);
  return sender.sign({ url, headers: delivery.headers ?? {}, body: JSON.stringify(delivery.body), now: nowSeconds() - ageSeconds, nonce });
}

/** Sends a signed delivery once no more than `IN_FLIGHT` others are on their way; `sign` is called then, so its time is the sending time. */
const send = (sign: () => Promise<SentDelivery>) => limited(async () => {
  const sent = await sign();
  return deliver(sent.url, sent.body, sent.headers);
});

/**
 * The delivery with another type and id, written where its row reads them first: another event of
 * the same sender. Where the type is a name the body holds (Telegram), the member is renamed to the
 * next name the row knows, which is then the other type.
 */
function another(service: string, delivery: SenderDelivery, otherType: string): SenderDelivery {
  const row = senderRow(service)!;
  const headers = { ...delivery.headers };
  const body = structuredClone(delivery.body) as Record<string, unknown>;
  let type = otherType;
  const write = (source: RequestValue, value: string) => {
    if (source.from === 'header') headers[source.name] = value;
    else source.path.slice(0, -1).reduce((parent: any, key) => parent[key], body)[source.path.at(-1)!] = value;
  };
  const typeSource = row.event_type.sources[0];
  if (typeSource?.from === 'json_key') {
    type = typeSource.among.find((name) => name !== delivery.type)!;
    body[type] = body[delivery.type];
    delete body[delivery.type];
  } else if (typeSource) write(typeSource, type);
  if (row.delivery_id && delivery.id) write(row.delivery_id, `${delivery.id}-2`);
  return { headers, body, type, ...(delivery.id && { id: `${delivery.id}-2` }) };
}

/**
 * Requests in flight at once: enough to keep the stack busy, few enough that none waits long
 * behind the others (Paddle's signature is good for 5 s, and is signed as its request goes out).
 */
const IN_FLIGHT = 8;
let inFlight = 0;
const waiting: (() => void)[] = [];

/** Runs `request` once fewer than `IN_FLIGHT` others are running. */
async function limited<T>(request: () => Promise<T>): Promise<T> {
  if (inFlight < IN_FLIGHT) inFlight++;
  else await new Promise<void>((resolve) => waiting.push(resolve)); // a finishing request hands over its place
  try {
    return await request();
  } finally {
    const next = waiting.shift();
    if (next) next();
    else inFlight--;
  }
}

/** The trigger a row's deliveries went to. */
interface Sent {
  token: string;
  triggerId: string;
}

/** A filtered trigger, sent the row's delivery and another of another type. */
async function sendTypes(service: string, delivery: SenderDelivery): Promise<Sent & { other: SenderDelivery; answers: unknown[] }> {
  const token = await stack.token(`types-${service}`);
  const trigger = await limited(() => createTrigger(stack, token, { flow: 'echo', event_filter: [delivery.type], ...HTTP_SENDERS[service]?.trigger }));
  const other = another(service, delivery, `${delivery.type}.other`);
  const answers = await Promise.all([send(() => signed(service, trigger.url, delivery, 'genuine')), send(() => signed(service, trigger.url, other, 'other'))]);
  for (const answer of answers) expect(answer.status, answer.text).toBe(200);
  return { token, triggerId: trigger.id, other, answers: answers.map((answer) => answer.json) };
}

/** A deduplicating trigger, sent the row's delivery, then the same delivery again (signed anew where the sender signs a time). */
async function sendTwice(service: string, delivery: SenderDelivery): Promise<Sent & { answers: unknown[] }> {
  const token = await stack.token(`ids-${service}`);
  const trigger = await limited(() => createTrigger(stack, token, { flow: 'echo', deduplicate: true, ...HTTP_SENDERS[service]?.trigger }));
  let first: Promise<SentDelivery> | undefined;
  const signFirst = () => (first ??= signed(service, trigger.url, delivery, 'retried', 1));
  const answer = await send(signFirst);
  expect(answer.status, answer.text).toBe(200);
  const again = await send(() => (HTTP_SENDERS[service]?.retry === 'same bytes' ? signFirst() : signed(service, trigger.url, delivery, 'retried')));
  expect(again.status, again.text).toBe(200);
  return { token, triggerId: trigger.id, answers: [answer.json, again.json] };
}

/** The examples @octokit/webhooks-examples ships, by event name (its main is JSON). */
const GITHUB_EXAMPLES = createRequire(import.meta.url)('@octokit/webhooks-examples') as { name: string; examples: unknown[] }[];
/** The event names in two halves, each a trigger's filter. */
const GITHUB_HALVES = [0, 1].map((half) => GITHUB_EXAMPLES.filter((_, i) => i % 2 === half).map((definition) => definition.name));

/**
 * Each name's first example to the trigger filtering on its half of the names (its flow runs), and
 * its other examples to the other trigger (each recorded with its type, and ignored): every example
 * is sent once, and a flow runs once per name. Returns each trigger with how many it was sent, and
 * each delivery id's name.
 */
async function sendGithubExamples(): Promise<{ token: string; triggers: { id: string; sent: number }[]; nameOf: Map<string, string> }> {
  const token = await stack.token('github-examples');
  const triggers = await Promise.all(GITHUB_HALVES.map((filter) => limited(() => createTrigger(stack, token, { flow: 'echo', event_filter: filter, ...HTTP_SENDERS.github!.trigger }))));
  const sends = GITHUB_EXAMPLES.flatMap(({ name, examples }, i) => examples.map((body, n) => ({ half: n === 0 ? i % 2 : (i + 1) % 2, name, body })));
  const nameOf = new Map<string, string>();
  await Promise.all(sends.map(({ half, name, body }) => {
    const id = randomUUID();
    nameOf.set(id, name);
    return send(() => signed('github', triggers[half]!.url, { headers: { 'x-github-event': name, 'x-github-delivery': id }, body, type: name, id }, id)).then((answer) => {
      expect(answer.status, `${name}: ${answer.text}`).toBe(200);
    });
  }));
  return { token, triggers: triggers.map((trigger, half) => ({ id: trigger.id, sent: sends.filter((sent) => sent.half === half).length })), nameOf };
}

const typesSent = new Map<string, ReturnType<typeof sendTypes>>();
const twiceSent = new Map<string, ReturnType<typeof sendTwice>>();
let githubSent: ReturnType<typeof sendGithubExamples>;

beforeAll(async () => {
  for (const [service, delivery] of TYPED) typesSent.set(service, sendTypes(service, delivery));
  for (const [service, delivery] of WITH_ID) twiceSent.set(service, sendTwice(service, delivery));
  githubSent = sendGithubExamples();
  // Each test rethrows its own row's failure; none fails the others.
  await Promise.allSettled([...typesSent.values(), ...twiceSent.values(), githubSent]);
});

describe('a filter on the sender\'s own event type, over HTTP', () => {
  for (const [service, delivery] of TYPED) {
    it(`${service}: a delivery as its docs show it is recorded as '${delivery.type}'; a filter on it runs the flow, and another type is ignored`, async () => {
      const { token, triggerId, other, answers } = await typesSent.get(service)!;
      expect(answers).toEqual([{ status: 'accepted', event_id: delivery.id ?? expect.any(String) }, { status: 'ignored', event_id: expect.any(String), reason: expect.any(String) }]);
      const executions = await waitForExecutions(stack, token, triggerId, settled(2));
      expect(executions.map((e) => [e.status, e.type]).sort()).toEqual([['ignored', other.type], ['succeeded', delivery.type]]);
      if (delivery.id) expect(executions.find((e) => e.status === 'succeeded').event_id).toBe(delivery.id);
    });
  }
});

describe('deduplication on the sender\'s own delivery id, over HTTP', () => {
  for (const [service, delivery] of WITH_ID) {
    it(`${service}: the same delivery twice (signed anew where the sender signs a time) runs the flow once, with event_id '${delivery.id}'`, async () => {
      const { token, triggerId, answers } = await twiceSent.get(service)!;
      expect(answers).toEqual([{ status: 'accepted', event_id: delivery.id }, { status: 'duplicate' }]);
      const executions = await waitForExecutions(stack, token, triggerId, settled(2));
      expect(executions.map((e) => e.status).sort()).toEqual(['duplicate', 'succeeded']);
      expect(executions.map((e) => e.event_id)).toEqual([delivery.id, delivery.id]);
      expect(executions.map((e) => e.type ?? '')).toEqual([delivery.type, delivery.type]);
    });
  }
});

describe('github: every example payload @octokit/webhooks-examples ships, sent with its event name', () => {
  it('each is recorded with its event name and X-GitHub-Delivery; a filter on a name runs its flow, and every other name is ignored', async () => {
    const { token, triggers, nameOf } = await githubSent;
    expect(nameOf.size).toBe(GITHUB_EXAMPLES.reduce((count, definition) => count + definition.examples.length, 0));
    for (const [half, trigger] of triggers.entries()) {
      const executions = await waitForExecutions(stack, token, trigger.id, settled(trigger.sent), 60_000);
      for (const execution of executions) {
        expect(execution.type, execution.event_id).toBe(nameOf.get(execution.event_id));
        expect([execution.type, execution.status]).toEqual([execution.type, GITHUB_HALVES[half]!.includes(execution.type) ? 'succeeded' : 'ignored']);
      }
      const ran = executions.filter((e) => e.status === 'succeeded').map((e) => e.type);
      expect(ran.sort()).toEqual([...GITHUB_HALVES[half]!].sort());
      const otherHalfWithMore = GITHUB_EXAMPLES.filter((definition) => GITHUB_HALVES[1 - half]!.includes(definition.name) && definition.examples.length > 1);
      expect(new Set(executions.filter((e) => e.status === 'ignored').map((e) => e.type))).toEqual(new Set(otherHalfWithMore.map((definition) => definition.name)));
    }
  });
});

describe('discord: Webhook Events run the flow; Interactions\' PING is still answered PONG', () => {
  it('a signed Webhook Event ({"type": 1, "event": …}) runs the flow with its event.type, filtered; an Interactions PING gets PONG and runs nothing', async () => {
    const { publicKey, privateKey } = generateKeyPairSync('ed25519');
    const hexKey = (publicKey.export({ format: 'der', type: 'spki' }) as Buffer).subarray(-32).toString('hex');
    const signedHeaders = (body: string) => {
      const timestamp = String(nowSeconds());
      return { 'x-signature-timestamp': timestamp, 'x-signature-ed25519': sign(null, Buffer.from(timestamp + body), privateKey).toString('hex') };
    };
    const event = (type: string) => JSON.stringify({
      version: 1, application_id: '1234567765431', type: 1,
      event: { type, timestamp: new Date().toISOString(), data: { integration_type: 0, scopes: ['applications.commands'], user: { id: '53908232999183680', username: 'mason' } } },
    });
    const ping = JSON.stringify({ type: 1, id: '786008729715212338', application_id: '1234567765431', token: 'A_UNIQUE_TOKEN', version: 1 });
    const token = await stack.token('events-discord');
    const trigger = await createTrigger(stack, token, { flow: 'echo', event_filter: ['APPLICATION_AUTHORIZED'], signature: { service: 'discord', secret: hexKey } });
    // One body, signed as sent: each call of event() stamps its own time, to the millisecond.
    const authorizedBody = event('APPLICATION_AUTHORIZED');
    const authorized = await deliver(trigger.url, authorizedBody, signedHeaders(authorizedBody));
    expect(authorized.json).toMatchObject({ status: 'accepted' });
    const other = event('ENTITLEMENT_CREATE');
    expect((await deliver(trigger.url, other, signedHeaders(other))).json).toEqual({ status: 'ignored', event_id: expect.any(String), reason: expect.any(String) });
    const pong = await deliver(trigger.url, ping, signedHeaders(ping));
    expect(pong.json).toEqual({ type: 1 });
    const executions = await waitForExecutions(stack, token, trigger.id, (list) => list.length === 3 && list.every((e) => e.status !== 'queued' && e.status !== 'running'));
    expect(executions.map((e) => [e.status, e.type]).sort()).toEqual([['handshake', 'discord_ping'], ['ignored', 'ENTITLEMENT_CREATE'], ['succeeded', 'APPLICATION_AUTHORIZED']]);
  });
});
