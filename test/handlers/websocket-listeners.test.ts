import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { ANSWER_TTL_SECONDS, DynamoListenConnections, WebSocketListeners } from '../../functions/adapters/aws/websocket-listeners.js';
import type { ExecutionDetail, ExecutionRef } from '../../functions/domain/flows/ports.js';
import type { ListenerAnswer } from '../../functions/domain/listen/ports.js';
import { LOCAL_AWS_ENV } from '../../local/engines.js';
import { resetConnectionsTable } from '../../local/listen-server.js';
import { useEngines } from '../support/engines.js';

/*
 * The receiver's side of the listen endpoint against the embedded DynamoDB: pushes, and the wait
 * for a listener's answer (answer_from_listener) that the listen function keeps in the connections
 * table. Time is a fake clock that the wait's own sleeps move, so a 10-minute wait takes none.
 */

const local = useEngines();
const TABLE = 'test-listen-connections';
const NOW = Date.parse('2026-11-28T02:00:00Z');

beforeAll(async () => {
  const dynamo = new DynamoDBClient({ region: LOCAL_AWS_ENV.AWS_REGION, credentials: { accessKeyId: 'local', secretAccessKey: 'local' }, endpoint: local.engines.env.AWS_ENDPOINT_URL_DYNAMODB });
  await resetConnectionsTable(dynamo, TABLE);
  dynamo.destroy();
});

let sequence = 0;
const detail = (executionId: string): ExecutionDetail => ({
  execution_id: executionId, event_id: `evt_${executionId}`, received_at: new Date(NOW).toISOString(), type: 'payment_intent.succeeded', status: 'running', attempts: 1, timeline: [],
  request: { method: 'POST', headers: {}, query: {}, body: '{}', body_encoding: 'utf8', body_bytes: 2 },
});
const ANSWER: ListenerAnswer = { status: 201, headers: { 'content-type': 'application/json' }, body: '{"answered_by":"laptop"}', isBase64Encoded: false };

/** A receiver's listeners over a fresh trigger, with a fake clock its sleeps move, and a record of its posts. */
function setup(options: { onSleep?: (count: number) => Promise<void> | void; post?: (connectionId: string) => boolean } = {}) {
  sequence++;
  const clock = { ms: NOW };
  const connections = new DynamoListenConnections(local.dynamo, TABLE, () => Math.floor(clock.ms / 1000));
  const sleeps: number[] = [];
  const posted: string[] = [];
  const listeners = new WebSocketListeners(connections, { get: async (ref) => detail(ref.executionId) }, async (connectionId) => {
    posted.push(connectionId);
    return options.post?.(connectionId) ?? true;
  }, {
    apiBaseUrl: 'https://api.example.com',
    now: () => clock.ms,
    sleep: async (ms) => {
      sleeps.push(ms);
      clock.ms += ms;
      await options.onSleep?.(sleeps.length);
    },
  });
  const triggerId = `t${sequence}`;
  const ref: ExecutionRef = { triggerId, executionId: `e${sequence}` };
  const connect = (connectionId: string) => connections.add({ connectionId, accountId: 'acct', triggers: [{ id: triggerId, sender: 'stripe' }] });
  return { clock, connections, listeners, sleeps, posted, ref, connect };
}

describe('WebSocketListeners (the receiver) over DynamoListenConnections', () => {
  it('answer() is undefined at once when the delivery reached no listener: not one read of an answer, no wait', async () => {
    const { listeners, sleeps, ref } = setup();
    await listeners.recorded(ref);
    expect(await listeners.answer(ref, 600_000)).toBeUndefined();
    expect(sleeps).toEqual([]);
    expect((await local.dynamo.send(new GetCommand({ TableName: TABLE, Key: { pk: `ANSWER#${ref.triggerId}#${ref.executionId}`, sk: 'ANSWER' } }))).Item).toBeUndefined();
  });

  it("answer() gives the answer a listener's function kept while it waited, read within 50-250 ms steps", async () => {
    const { listeners, connections, sleeps, posted, ref, connect } = setup({ onSleep: async (count) => {
      if (count === 3) expect(await connections.keep(ref, ANSWER)).toBe(true);
    } });
    await connect('c1');
    await listeners.recorded(ref);
    expect(posted).toEqual(['c1']);
    expect(await listeners.answer(ref, 25_000)).toEqual(ANSWER);
    expect(sleeps).toEqual([50, 100, 150]);
  });

  it('answer() is undefined once the wait is over (the listener is late), and a later answer is not kept for the sender', async () => {
    const { listeners, connections, clock, ref, connect, sleeps } = setup();
    await connect('c1');
    await listeners.recorded(ref);
    const started = clock.ms;
    expect(await listeners.answer(ref, 3_000)).toBeUndefined();
    expect(clock.ms - started).toBe(3_000);
    expect(Math.max(...sleeps)).toBe(250);
    expect(await connections.keep(ref, ANSWER)).toBe(false);
  });

  it('answer() is undefined as soon as every listener it reached could not reach its local server', async () => {
    const { listeners, connections, clock, ref, connect } = setup({ onSleep: async (count) => {
      if (count === 1) await connections.keep(ref, undefined);
      if (count === 2) await connections.keep(ref, undefined);
    } });
    await connect('c1');
    await connect('c2');
    await listeners.recorded(ref);
    const started = clock.ms;
    expect(await listeners.answer(ref, 25_000)).toBeUndefined();
    expect(clock.ms - started).toBeLessThan(1_000);
  });

  it('answer() is undefined once no listener of the trigger is connected any more (checked each second)', async () => {
    const { listeners, connections, clock, ref, connect } = setup({ onSleep: async (count) => {
      if (count === 1) await connections.remove('c1');
    } });
    await connect('c1');
    await listeners.recorded(ref);
    const started = clock.ms;
    expect(await listeners.answer(ref, 25_000)).toBeUndefined();
    expect(clock.ms - started).toBeLessThanOrEqual(1_250);
  });

  it('a push to a connection API Gateway no longer has (410) forgets it, and the wait does not count it', async () => {
    const { listeners, connections, sleeps, ref, connect } = setup({ post: (id) => id !== 'gone' });
    await connect('gone');
    await listeners.recorded(ref);
    expect(await connections.listeners(ref.triggerId)).toEqual([]);
    expect(await listeners.answer(ref, 25_000)).toBeUndefined();
    expect(sleeps).toEqual([]);
  });

  it('keeps the first answer only; an answer item past its expires_at is not read (dynalite has no TTL: https://github.com/architect/dynalite/issues/103)', async () => {
    const { connections, clock, ref } = setup();
    expect(await connections.keep(ref, ANSWER)).toBe(true);
    expect(await connections.keep(ref, { ...ANSWER, status: 500 })).toBe(false);
    expect((await connections.kept(ref))?.answer).toEqual(ANSWER);
    clock.ms += (ANSWER_TTL_SECONDS + 1) * 1000;
    expect(await connections.kept(ref)).toBeUndefined();
  });

  it('the replay budget (ReplayBudget): concurrent takes of one account and hour never grant more than the most between them, a give-back frees reads, another hour or account is its own', async () => {
    const { connections } = setup();
    const account = `acct-budget-${sequence}`;
    const granted = await Promise.all(Array.from({ length: 8 }, () => connections.take(account, 100, 300, 1000)));
    expect(granted.reduce((a, b) => a + b, 0)).toBe(1000);
    expect(await connections.take(account, 100, 50, 1000)).toBe(0);
    await connections.giveBack(account, 100, 40);
    expect(await connections.take(account, 100, 50, 1000)).toBe(40);
    expect(await connections.take(account, 101, 50, 1000)).toBe(50);
    expect(await connections.take(`${account}-other`, 100, 50, 1000)).toBe(50);
  });

  it('firstHello() is true once a connection, so a second hello is refused; a new connection has its own', async () => {
    const { connections } = setup();
    expect(await connections.firstHello(`h${sequence}`)).toBe(true);
    expect(await connections.firstHello(`h${sequence}`)).toBe(false);
    expect(await connections.firstHello(`h${sequence}b`)).toBe(true);
  });
});
