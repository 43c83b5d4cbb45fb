import { randomBytes } from 'node:crypto';
import { ReceiveMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { GetCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { BatchedPuts } from '../../functions/adapters/aws/batched-puts.js';
import { Coalescer } from '../../functions/adapters/aws/coalescer.js';
import { DynamoExecutionStore } from '../../functions/adapters/aws/dynamo-execution-store.js';
import { SqsEventQueue } from '../../functions/adapters/aws/sqs-event-queue.js';
import { newExecutionId } from '../../functions/domain/flows/execution-id.js';
import { AppError } from '../../functions/shared/errors.js';
import { FUNCTIONS } from '../../functions/manifest.js';
import { useEngines } from '../support/engines.js';

/**
 * Writes made at about the same time share one batch call (`coalescer.ts`): the receiver's two
 * records per delivery and the flow queue's sends. Each caller must still be answered for its own
 * items only: written, or refused without taking anyone else's write with it.
 */
const local = useEngines();

/** Counts the calls a client sends, by command name. */
function countCalls(client: DynamoDBDocumentClient | SQSClient): Map<string, number> {
  const calls = new Map<string, number>();
  (client.middlewareStack as DynamoDBDocumentClient['middlewareStack']).add((next, context) => async (args) => {
    calls.set(context.commandName!, (calls.get(context.commandName!) ?? 0) + 1);
    return next(args);
  }, { step: 'initialize', name: `countCalls${randomBytes(4).toString('hex')}` });
  return calls;
}

describe('Coalescer', () => {
  /** A coalescer whose calls are recorded; `refuse` decides each item's outcome. */
  const recording = (options: { maxItems: number; maxWeight?: number; refuse?: (item: string) => Error | undefined; fail?: (items: string[]) => boolean }) => {
    const calls: string[][] = [];
    const coalescer = new Coalescer<string>({
      maxItems: options.maxItems,
      maxWeight: options.maxWeight,
      weigh: (item) => item.length,
      keyOf: (item) => item.split(':')[0]!,
      send: async (items) => {
        calls.push(items);
        if (options.fail?.(items)) throw new Error('call failed');
        return items.map((item) => options.refuse?.(item));
      },
    });
    return { coalescer, calls };
  };

  it('sends what is added in one turn of the event loop as one call, each group in one piece', async () => {
    const { coalescer, calls } = recording({ maxItems: 25 });
    await Promise.all([coalescer.add(['a', 'b']), coalescer.add(['c']), coalescer.add(['d', 'e'])]);
    expect(calls).toEqual([['a', 'b', 'c', 'd', 'e']]);
    await coalescer.add(['f']);
    expect(calls).toEqual([['a', 'b', 'c', 'd', 'e'], ['f']]);
  });

  it('starts a new call at the item limit, the weight limit, or a key already in the call, and keeps a group that fits together', async () => {
    const { coalescer, calls } = recording({ maxItems: 3, maxWeight: 10 });
    await Promise.all([coalescer.add(['a', 'b']), coalescer.add(['c', 'd'])]);
    expect(calls).toEqual([['a', 'b'], ['c', 'd']]);
    calls.length = 0;
    await Promise.all([coalescer.add(['12345678']), coalescer.add(['abc']), coalescer.add(['x:1']), coalescer.add(['x:2'])]);
    expect(calls).toEqual([['12345678'], ['abc', 'x:1'], ['x:2']]);
    calls.length = 0;
    // A group larger than a call is split, and answered once all of it is written.
    await coalescer.add(['p', 'q', 'r', 's']);
    expect(calls).toEqual([['p', 'q', 'r'], ['s']]);
  });

  it('refuses only the group whose item was refused, and every group of a call that failed whole', async () => {
    const { coalescer } = recording({ maxItems: 25, refuse: (item) => (item === 'bad' ? new Error('refused') : undefined) });
    const outcomes = await Promise.allSettled([coalescer.add(['ok1']), coalescer.add(['ok2', 'bad']), coalescer.add(['ok3'])]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);

    const failing = recording({ maxItems: 2, fail: (items) => items.includes('b') });
    const split = await Promise.allSettled([failing.coalescer.add(['a']), failing.coalescer.add(['b']), failing.coalescer.add(['c'])]);
    expect(split.map((o) => o.status)).toEqual(['rejected', 'rejected', 'fulfilled']);
  });
});

describe('BatchedPuts and the execution store against DynamoDB', () => {
  const table = () => local.engines.env.EXECUTIONS_TABLE!;

  it('stores 60 deliveries recorded at once (status and request each) in a few BatchWriteItem calls, every item readable', async () => {
    const calls = countCalls(local.dynamo);
    const store = new DynamoExecutionStore(local.dynamo, table(), Date.now);
    const triggerId = `trg_${randomBytes(6).toString('hex')}`;
    const refs = Array.from({ length: 60 }, (_, n) => ({ triggerId, executionId: newExecutionId(Date.now(), randomBytes(16).toString('hex')), eventId: `evt_${n}` }));
    calls.clear();
    await Promise.all(refs.map((ref) => store.record(ref, { event_id: ref.eventId, received_at: new Date().toISOString(), status: 'queued', attempts: 0 }, {
      method: 'POST', headers: {}, query: {}, body: `{"n":"${ref.eventId}"}`, body_encoding: 'utf8', body_bytes: 10,
    })));
    // 120 items, 25 a call: five calls rather than 120 PutItems.
    expect(calls.get('BatchWriteItemCommand')).toBe(5);
    expect(calls.get('PutItemCommand')).toBeUndefined();
    for (const ref of refs) {
      const detail = await store.get(ref);
      expect(detail?.status).toBe('queued');
      expect(detail?.request?.body).toBe(`{"n":"${ref.eventId}"}`);
    }
  });

  it('refuses only the caller whose item DynamoDB refuses (over 400 KB); the others sharing its call are written, with BatchWriteItem alone', async () => {
    const calls = countCalls(local.dynamo);
    const puts = new BatchedPuts(local.dynamo, table());
    const pk = `coalesce-${randomBytes(6).toString('hex')}`;
    const outcomes = await Promise.allSettled([
      puts.put({ pk, sk: '1', v: 'small' }),
      puts.put({ pk, sk: '2', v: 'x'.repeat(410_000) }),
      puts.put({ pk, sk: '3', v: 'small' }, { pk, sk: '4', v: 'small' }),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    const sent = [...calls.keys()].map((command) => command.replace(/Command$/, ''));
    const stored = async (sk: string) => (await local.dynamo.send(new GetCommand({ TableName: table(), Key: { pk, sk } }))).Item?.v;
    expect(await Promise.all(['1', '2', '3', '4'].map(stored))).toEqual(['small', undefined, 'small', 'small']);
    // The fallback sends only what every function writing through BatchedPuts is granted: the flow
    // worker has BatchWriteItem and no PutItem (its outputs go through here), so a PutItem would be denied deployed.
    expect(sent).toEqual(['BatchWriteItem']);
    expect(FUNCTIONS.flowWorker.tables.executions).toContain('BatchWriteItem');
    expect(FUNCTIONS.flowWorker.tables.executions).not.toContain('PutItem');
  });

  it('writes the same key twice in flight in separate calls, the later put last', async () => {
    const puts = new BatchedPuts(local.dynamo, table());
    const pk = `coalesce-${randomBytes(6).toString('hex')}`;
    await Promise.all([puts.put({ pk, sk: 'same', v: 'first' }), puts.put({ pk, sk: 'same', v: 'second' })]);
    expect((await local.dynamo.send(new GetCommand({ TableName: table(), Key: { pk, sk: 'same' } }))).Item?.v).toBe('second');
  });
});

describe('SqsEventQueue', () => {
  it('sends 25 events queued at once in three SendMessageBatch calls, each event once', async () => {
    const calls = countCalls(local.sqs);
    const queueUrl = local.engines.queueUrls.flowEvents!;
    const queue = new SqsEventQueue(local.sqs, queueUrl);
    const tag = randomBytes(6).toString('hex');
    await Promise.all(Array.from({ length: 25 }, (_, n) => queue.send(JSON.stringify({ tag, n }))));
    expect(calls.get('SendMessageBatchCommand')).toBe(3);
    const received: number[] = [];
    while (received.length < 25) {
      const { Messages = [] } = await local.sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }));
      for (const message of Messages) {
        const body = JSON.parse(message.Body!) as { tag: string; n: number };
        if (body.tag === tag) received.push(body.n);
      }
    }
    expect(received.sort((a, b) => a - b)).toEqual(Array.from({ length: 25 }, (_, n) => n));
  });

  it('answers unavailable to the sender whose message SQS refuses, and sends the others', async () => {
    const queue = new SqsEventQueue(local.sqs, local.engines.queueUrls.flowEvents!);
    const outcomes = await Promise.allSettled([queue.send('{"ok":1}'), queue.send('x'.repeat(1_100_000)), queue.send('{"ok":2}')]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    const refusal = (outcomes[1] as PromiseRejectedResult).reason as AppError;
    expect(refusal).toBeInstanceOf(AppError);
    expect(refusal.code).toBe('unavailable');
  });
});
