import { randomBytes } from 'node:crypto';
import { CreateQueueCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { beforeAll, describe, expect, it } from 'vitest';
import { DynamoKvStore } from '../../functions/adapters/aws/dynamo-kv-store.js';
import { SqsSweepQueue } from '../../functions/adapters/aws/sqs-sweep-queue.js';
import { KvService } from '../../functions/domain/kv/service.js';
import { decodeSweepTask, type SweepTask } from '../../functions/domain/kv/sweep-task.js';
import type { BucketRef } from '../../functions/domain/kv/types.js';
import { useEngines } from '../support/engines.js';
import { messagesToCome } from '../support/queue-depth.js';

const SETTLE_MS = 60_000;
const local = useEngines();
let store: DynamoKvStore;

beforeAll(() => {
  store = new DynamoKvStore(local.dynamo, local.engines.env.KV_TABLE!);
});

let counter = 0;
const newRef = (): BucketRef => ({ accountId: `acct-${++counter}`, name: `bucket-${counter}` });
const newQueue = async () => (await local.sqs.send(new CreateQueueCommand({ QueueName: `sweeps-${++counter}` }))).QueueUrl!;
const serviceFor = (queueUrl: string, kvStore = store) =>
  new KvService({ store: kvStore, sweeps: new SqsSweepQueue(local.sqs, queueUrl), now: Date.now, randomBytes, settleMs: SETTLE_MS });
const config = { description: null, ttlSeconds: null, maxValueBytes: 1024 };
const text = (value: string) => ({ bytes: Buffer.from(value), contentType: 'text/plain' });

/** Every task on the queue, waiting out the first sweep's short delay (until none is visible or delayed: two empty 1 s polls as the end cost 2 s a call). */
async function tasksOn(queueUrl: string): Promise<SweepTask[]> {
  const tasks: SweepTask[] = [];
  while (await messagesToCome(local.sqs, queueUrl)) {
    const { Messages = [] } = await local.sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1, VisibilityTimeout: 60 }));
    tasks.push(...Messages.map((m) => decodeSweepTask(m.Body!)));
  }
  return tasks;
}

describe('purge', () => {
  it('moves the bucket to a new generation and enqueues a sweep of the old one', async () => {
    const queueUrl = await newQueue();
    const service = serviceFor(queueUrl);
    const ref = newRef();
    const before = await service.createBucket(ref, config);
    await service.putValue(ref, 'k', text('v'));
    const started = Date.now();
    await service.purgeBucket(ref);
    const after = await service.getBucket(ref);
    expect(after.generation).not.toBe(before.generation);
    expect(after.config).toEqual(before.config);
    await expect(service.getValue(ref, 'k')).rejects.toMatchObject({ code: 'not_found' });
    const [task, ...rest] = await tasksOn(queueUrl);
    expect(rest).toEqual([]);
    expect(task).toMatchObject({ ...ref, generation: before.generation });
    expect(task!.settleUntil).toBeGreaterThanOrEqual(started + SETTLE_MS);
  });

  it('answers 503 and changes nothing when the queue does not take the sweep', async () => {
    const service = serviceFor(`${local.engines.queueUrls.kvSweep}-does-not-exist`);
    const ref = newRef();
    const before = await service.createBucket(ref, config);
    await service.putValue(ref, 'k', text('v'));
    await expect(service.purgeBucket(ref)).rejects.toMatchObject({ code: 'unavailable', status: 503 });
    expect((await service.getBucket(ref)).generation).toBe(before.generation);
    expect(Buffer.from((await service.getValue(ref, 'k')).bytes).toString()).toBe('v');
  });

  it('of a missing bucket is not_found and enqueues nothing', async () => {
    const queueUrl = await newQueue();
    await expect(serviceFor(queueUrl).purgeBucket(newRef())).rejects.toMatchObject({ code: 'not_found' });
    expect(await tasksOn(queueUrl)).toEqual([]);
  });

  it('two purges at once both succeed and the old generation is swept', async () => {
    const queueUrl = await newQueue();
    const service = serviceFor(queueUrl);
    const ref = newRef();
    const before = await service.createBucket(ref, config);
    await service.putValue(ref, 'k', text('v'));
    await Promise.all([service.purgeBucket(ref), service.purgeBucket(ref)]);
    await expect(service.getValue(ref, 'k')).rejects.toMatchObject({ code: 'not_found' });
    const generations = new Set((await tasksOn(queueUrl)).map((t) => t.generation));
    expect(generations.has(before.generation)).toBe(true);
    expect(generations.has((await service.getBucket(ref)).generation)).toBe(false);
  });

  it('a purge that loses its swap to a delete is not_found', async () => {
    const queueUrl = await newQueue();
    const ref = newRef();
    class DeletedMeanwhile extends DynamoKvStore {
      override async swapGeneration(r: BucketRef, expected: string, next: string) {
        await super.deleteBucket(r, expected);
        return super.swapGeneration(r, expected, next);
      }
    }
    const service = serviceFor(queueUrl, new DeletedMeanwhile(local.dynamo, local.engines.env.KV_TABLE!));
    await service.createBucket(ref, config);
    await expect(service.purgeBucket(ref)).rejects.toMatchObject({ code: 'not_found' });
  });

  it('a purge that loses its swap to another purge succeeds without a third generation', async () => {
    const queueUrl = await newQueue();
    const ref = newRef();
    const other = serviceFor(queueUrl);
    class PurgedMeanwhile extends DynamoKvStore {
      override async swapGeneration(r: BucketRef, expected: string, next: string) {
        await other.purgeBucket(r);
        return super.swapGeneration(r, expected, next);
      }
    }
    const service = serviceFor(queueUrl, new PurgedMeanwhile(local.dynamo, local.engines.env.KV_TABLE!));
    const before = await service.createBucket(ref, config);
    await service.purgeBucket(ref);
    const tasks = await tasksOn(queueUrl);
    expect(tasks.map((t) => t.generation)).toEqual([before.generation, before.generation]);
    expect((await service.getBucket(ref)).generation).not.toBe(before.generation);
  });
});

describe('delete bucket', () => {
  it('removes the bucket and enqueues a sweep of its data', async () => {
    const queueUrl = await newQueue();
    const service = serviceFor(queueUrl);
    const ref = newRef();
    const before = await service.createBucket(ref, config);
    await service.deleteBucket(ref);
    await expect(service.getBucket(ref)).rejects.toMatchObject({ code: 'not_found' });
    expect((await tasksOn(queueUrl)).map((t) => t.generation)).toEqual([before.generation]);
  });

  it('answers 503 and keeps the bucket when the queue does not take the sweep', async () => {
    const service = serviceFor(`${local.engines.queueUrls.kvSweep}-does-not-exist`);
    const ref = newRef();
    await service.createBucket(ref, config);
    await expect(service.deleteBucket(ref)).rejects.toMatchObject({ code: 'unavailable' });
    expect(await service.getBucket(ref)).toBeDefined();
  });

  it('tries again when a purge moves the bucket meanwhile, and sweeps both generations', async () => {
    const queueUrl = await newQueue();
    const ref = newRef();
    const other = serviceFor(queueUrl);
    let interleaved = false;
    class PurgedMeanwhile extends DynamoKvStore {
      override async deleteBucket(r: BucketRef, expected: string) {
        if (!interleaved) {
          interleaved = true;
          await other.purgeBucket(r);
        }
        return super.deleteBucket(r, expected);
      }
    }
    const service = serviceFor(queueUrl, new PurgedMeanwhile(local.dynamo, local.engines.env.KV_TABLE!));
    const first = await service.createBucket(ref, config);
    await service.deleteBucket(ref);
    await expect(service.getBucket(ref)).rejects.toMatchObject({ code: 'not_found' });
    const swept = (await tasksOn(queueUrl)).map((t) => t.generation);
    expect(swept).toContain(first.generation);
    expect(new Set(swept).size).toBe(2);
  });

  it('a re-created bucket starts empty, in a generation never used before', async () => {
    const queueUrl = await newQueue();
    const service = serviceFor(queueUrl);
    const ref = newRef();
    const first = await service.createBucket(ref, config);
    await service.putValue(ref, 'k', text('v'));
    await service.deleteBucket(ref);
    const again = await service.createBucket(ref, config);
    expect(again.generation).not.toBe(first.generation);
    await expect(service.getValue(ref, 'k')).rejects.toMatchObject({ code: 'not_found' });
  });
});
