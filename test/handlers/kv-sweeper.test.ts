import { BatchWriteCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { CreateQueueCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import type { SQSEvent } from 'aws-lambda';
import { beforeAll, describe, expect, it } from 'vitest';
import { DynamoKvStore, generationPk } from '../../functions/adapters/aws/dynamo-kv-store.js';
import { SqsSweepQueue } from '../../functions/adapters/aws/sqs-sweep-queue.js';
import { decodeSweepTask, encodeSweepTask, type SweepTask } from '../../functions/domain/kv/sweep-task.js';
import { Sweeper } from '../../functions/domain/kv/sweeper.js';
import { createSweepHandler } from '../../functions/handlers/kv-sweeper.js';
import type { GenerationRef } from '../../functions/domain/kv/types.js';
import { lambdaContext } from '../../local/lambda-context.js';
import { useEngines } from '../support/engines.js';
import { messagesToCome } from '../support/queue-depth.js';

const local = useEngines();
let store: DynamoKvStore;

beforeAll(async () => {
  store = new DynamoKvStore(local.dynamo, local.engines.env.KV_TABLE!);
});

let counter = 0;
const gen = (n: number) => n.toString(16).padStart(32, '0');
const newQueue = async () => (await local.sqs.send(new CreateQueueCommand({ QueueName: `sweeps-${++counter}` }))).QueueUrl!;

/** A bucket now at generation 1, with `old` items left in generation 0 and `current` in generation 1. */
async function purgedBucket(old: number, current: number, accountId = `acct-${++counter}`) {
  const name = 'cache';
  await store.createBucket({ accountId, name, config: { description: null, ttlSeconds: null, maxValueBytes: 1024 }, createdAt: new Date().toISOString(), generation: gen(1) });
  const oldGen: GenerationRef = { accountId, name, generation: gen(0) };
  const currentGen: GenerationRef = { accountId, name, generation: gen(1) };
  await fill(oldGen, old);
  await fill(currentGen, current);
  return { oldGen, currentGen };
}

async function fill(at: GenerationRef, count: number) {
  for (let i = 0; i < count; i += 25) {
    const items = Array.from({ length: Math.min(25, count - i) }, (_, j) => ({ PutRequest: { Item: { pk: generationPk(at), sk: `key-${String(i + j).padStart(6, '0')}`, value: Buffer.from('v'), revision: 1 } } }));
    await local.dynamo.send(new BatchWriteCommand({ RequestItems: { [local.engines.env.KV_TABLE!]: items } }));
  }
}

async function countOf(at: GenerationRef): Promise<number> {
  const { Count } = await local.dynamo.send(new QueryCommand({ TableName: local.engines.env.KV_TABLE, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': generationPk(at) }, Select: 'COUNT' }));
  return Count ?? 0;
}

function sweeperOn(queueUrl: string, options: { pageSize?: number } = {}) {
  return createSweepHandler(new Sweeper({ store, queue: new SqsSweepQueue(local.sqs, queueUrl), now: Date.now, ...options }));
}

const eventOf = (...bodies: string[]): SQSEvent => ({
  Records: bodies.map((body, i) => ({
    messageId: `m-${i}`, receiptHandle: `r-${i}`, body, messageAttributes: {}, md5OfBody: '', eventSource: 'aws:sqs',
    eventSourceARN: 'arn:aws:sqs:us-east-1:000000000000:local-kvSweep', awsRegion: 'us-east-1',
    attributes: { ApproximateReceiveCount: '1', SentTimestamp: '0', SenderId: 'local', ApproximateFirstReceiveTimestamp: '0' },
  })),
});

/** The next messages on the queue, waiting up to `seconds` for delayed ones; [] at once when none is visible or delayed. */
async function receive(queueUrl: string, seconds = 3): Promise<string[]> {
  if (!await messagesToCome(local.sqs, queueUrl)) return [];
  const { Messages = [] } = await local.sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: seconds, VisibilityTimeout: 60 }));
  return Messages.map((m) => m.Body!);
}

const task = (at: GenerationRef, settleUntil: number): SweepTask => ({ ...at, settleUntil });
const settled = () => Date.now() - 1;

describe('kv sweeper', () => {
  it('deletes every item of a generation that is no longer current, and nothing else', async () => {
    const queueUrl = await newQueue();
    const { oldGen, currentGen } = await purgedBucket(260, 5);
    const neighbour = await purgedBucket(7, 0, `${oldGen.accountId}-neighbour`);
    const result = await sweeperOn(queueUrl)(eventOf(encodeSweepTask(task(oldGen, settled()))), lambdaContext('kvSweeper', 300));
    expect(result).toEqual({ batchItemFailures: [] });
    expect(await countOf(oldGen)).toBe(0);
    expect(await countOf(currentGen)).toBe(5);
    expect(await countOf(neighbour.oldGen)).toBe(7);
    expect(await receive(queueUrl, 1)).toEqual([]);
  });

  it('follows a pass that started before the task settled with a final pass, which removes late writes', async () => {
    const queueUrl = await newQueue();
    const { oldGen } = await purgedBucket(30, 0);
    const sweep = sweeperOn(queueUrl);
    await sweep(eventOf(encodeSweepTask(task(oldGen, Date.now() + 1500))), lambdaContext('kvSweeper', 300));
    expect(await countOf(oldGen)).toBe(0);
    await fill(oldGen, 3); // writes that read the old generation before the purge, landing late
    const [finalPass, ...others] = await receive(queueUrl);
    expect(others).toEqual([]);
    expect(decodeSweepTask(finalPass!).pass).toBeUndefined();
    await sweep(eventOf(finalPass!), lambdaContext('kvSweeper', 300));
    expect(await countOf(oldGen)).toBe(0);
    expect(await receive(queueUrl, 1)).toEqual([]);
  });

  it('never sweeps the current generation: looks again while the purge may still commit, then drops the task', async () => {
    const queueUrl = await newQueue();
    const { currentGen } = await purgedBucket(0, 4);
    const sweep = sweeperOn(queueUrl);
    await sweep(eventOf(encodeSweepTask(task(currentGen, Date.now() + 1000))), lambdaContext('kvSweeper', 300));
    expect(await countOf(currentGen)).toBe(4);
    const [again, ...others] = await receive(queueUrl);
    expect(others).toEqual([]);
    expect(decodeSweepTask(again!).generation).toBe(currentGen.generation);
    await new Promise((done) => setTimeout(done, 1000));
    expect(await sweep(eventOf(again!), lambdaContext('kvSweeper', 300))).toEqual({ batchItemFailures: [] });
    expect(await countOf(currentGen)).toBe(4);
    expect(await receive(queueUrl, 1)).toEqual([]);
  });

  it('sweeps the generation of a deleted bucket', async () => {
    const queueUrl = await newQueue();
    const { currentGen } = await purgedBucket(0, 40);
    await store.deleteBucket(currentGen, currentGen.generation);
    await sweeperOn(queueUrl)(eventOf(encodeSweepTask(task(currentGen, settled()))), lambdaContext('kvSweeper', 300));
    expect(await countOf(currentGen)).toBe(0);
  });

  it('hands over to a new message carrying its position when time runs short, and finishes from there', async () => {
    const queueUrl = await newQueue();
    const { oldGen } = await purgedBucket(250, 0);
    const sweep = sweeperOn(queueUrl, { pageSize: 100 });
    const shortOnTime = () => lambdaContext('kvSweeper', 1);
    await sweep(eventOf(encodeSweepTask(task(oldGen, settled()))), shortOnTime());
    expect(await countOf(oldGen)).toBe(150);
    let [next] = await receive(queueUrl, 1);
    expect(decodeSweepTask(next!).pass?.after).toBe('key-000099');
    let invocations = 1;
    while (next) {
      await sweep(eventOf(next), shortOnTime());
      invocations++;
      [next] = await receive(queueUrl, 1);
    }
    expect(invocations).toBe(3);
    expect(await countOf(oldGen)).toBe(0);
  });

  it('fails the record, to be delivered again, when it cannot hand over', async () => {
    const { oldGen } = await purgedBucket(150, 0);
    const sweep = sweeperOn(`${local.engines.queueUrls.kvSweep}-does-not-exist`, { pageSize: 100 });
    const result = await sweep(eventOf(encodeSweepTask(task(oldGen, settled()))), lambdaContext('kvSweeper', 1));
    expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: 'm-0' }] });
    expect(await countOf(oldGen)).toBe(50);
  });

  it('reports a malformed message as a batch item failure and sweeps the others', async () => {
    const queueUrl = await newQueue();
    const { oldGen } = await purgedBucket(10, 0);
    const result = await sweeperOn(queueUrl)(eventOf('{"v":1}', encodeSweepTask(task(oldGen, settled()))), lambdaContext('kvSweeper', 300));
    expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: 'm-0' }] });
    expect(await countOf(oldGen)).toBe(0);
  });
});
