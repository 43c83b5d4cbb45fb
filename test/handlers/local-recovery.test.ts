import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DeleteMessageCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoDeliveryStats } from '../../functions/adapters/aws/dynamo-delivery-stats.js';
import { DynamoExecutionStore } from '../../functions/adapters/aws/dynamo-execution-store.js';
import { CountingExecutionStore } from '../../functions/adapters/counting-execution-store.js';
import { DynamoKvStore, generationPk } from '../../functions/adapters/aws/dynamo-kv-store.js';
import { DynamoTriggerStore } from '../../functions/adapters/aws/dynamo-trigger-store.js';
import { SqsSweepQueue } from '../../functions/adapters/aws/sqs-sweep-queue.js';
import { newExecutionId } from '../../functions/domain/flows/execution-id.js';
import { parseFlowMessage } from '../../functions/domain/flows/message.js';
import type { ExecutionRef, StoredRequest } from '../../functions/domain/flows/ports.js';
import { runQueuedFlow } from '../../functions/domain/flows/run-queued-flow.js';
import { decodeSweepTask } from '../../functions/domain/kv/sweep-task.js';
import { countAtOnce } from '../../functions/domain/stats/tally.js';
import { Sweeper } from '../../functions/domain/kv/sweeper.js';
import type { TriggerRecord } from '../../functions/domain/triggers/trigger.js';
import { LOCAL_AWS_ENV, startEngines, type Engines } from '../../local/engines.js';
import { recover, type RecoveryDeps } from '../../local/recovery.js';
import { DEFAULT_TRIGGER_SETTINGS } from '../support/webhooks.js';

/**
 * `recover` against the engines as a data directory runs them (on disk, with the recovery
 * indexes): what a restart finds unfinished is put back in motion, and nothing else is touched.
 */
let dir: string;
let engines: Engines;
let dynamo: DynamoDBDocumentClient;
let sqs: SQSClient;
let deps: RecoveryDeps;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'flowgate-recovery-'));
  engines = await startEngines({ flowsDirs: [resolve(import.meta.dirname, '../../flows')], visibilityTimeoutSeconds: 30, dynamodbPath: join(dir, 'dynamodb'), dataDir: dir });
  const config = { region: LOCAL_AWS_ENV.AWS_REGION, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } };
  dynamo = DynamoDBDocumentClient.from(new DynamoDBClient({ ...config, endpoint: engines.env.AWS_ENDPOINT_URL_DYNAMODB }), { marshallOptions: { removeUndefinedValues: true } });
  sqs = new SQSClient({ ...config, endpoint: engines.env.AWS_ENDPOINT_URL_SQS });
  deps = {
    dynamo,
    sqs,
    tables: { executions: engines.env.EXECUTIONS_TABLE!, triggers: engines.env.TRIGGERS_TABLE!, kv: engines.env.KV_TABLE! },
    queues: { flowEvents: engines.queueUrls.flowEvents, kvSweep: engines.queueUrls.kvSweep },
    now: Date.now,
  };
});
afterAll(async () => {
  dynamo?.destroy();
  sqs?.destroy();
  await engines?.stop();
  await rm(dir, { recursive: true, force: true });
});

/** Every message on a queue, taken off it. */
async function drain(queueUrl: string): Promise<string[]> {
  const bodies: string[] = [];
  for (;;) {
    const { Messages = [] } = await sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }));
    if (Messages.length === 0) return bodies;
    for (const message of Messages) {
      bodies.push(message.Body!);
      await sqs.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: message.ReceiptHandle! }));
    }
  }
}

const trigger: TriggerRecord = {
  id: 'a'.repeat(32),
  account_id: 'acct-recovery',
  webhook_id: `wh${'0'.repeat(30)}`,
  ...DEFAULT_TRIGGER_SETTINGS,
  created_at: '2024-01-01T00:00:00.000Z',
  updated_at: '2024-01-01T00:00:00.000Z',
  version: 1,
};
const request = (eventId: string): StoredRequest => {
  const body = JSON.stringify({ id: eventId, type: 'order.created' });
  return { method: 'POST', headers: { 'content-type': 'application/json', authorization: '[redacted]' }, query: {}, body, body_encoding: 'utf8', body_bytes: body.length };
};
let sequence = 0;
const ref = (triggerId = trigger.id): ExecutionRef => ({ triggerId, executionId: newExecutionId(Date.now(), `r${++sequence}`) });

describe('recover', () => {
  it('queues every queued or running execution again under its own id, records a run under way as interrupted, and leaves finished ones alone', async () => {
    const executions = new DynamoExecutionStore(dynamo, deps.tables.executions, Date.now);
    await new DynamoTriggerStore(dynamo, deps.tables.triggers, Date.now).create(trigger);
    const receivedAt = new Date().toISOString();
    const queued = ref();
    await executions.record(queued, { event_id: 'evt_queued', received_at: receivedAt, type: 'order.created', status: 'queued', attempts: 0 }, request('evt_queued'));
    // Attempt 1 failed, attempt 2 was running when the stack stopped.
    const running = ref();
    await executions.record(running, { event_id: 'evt_running', received_at: receivedAt, status: 'queued', attempts: 0 }, request('evt_running'));
    await executions.update(running, { status: 'queued', attempts: 1, error: 'boom', attempt: { attempt: 1, started_at: receivedAt, finished_at: receivedAt, status: 'failed', error: 'boom' } });
    await executions.update(running, { status: 'running', attempts: 2, attempt: { attempt: 2, started_at: receivedAt, status: 'running' } });
    const done = ref();
    await executions.record(done, { event_id: 'evt_done', received_at: receivedAt, status: 'queued', attempts: 0 }, request('evt_done'));
    await executions.update(done, { status: 'succeeded', attempts: 1, output: {}, attempt: { attempt: 1, started_at: receivedAt, finished_at: receivedAt, status: 'succeeded' } });
    // Killed between its record and its request: never answered 200, so forgotten.
    const unanswered = ref();
    await executions.record(unanswered, { event_id: 'evt_unanswered', received_at: receivedAt, status: 'queued', attempts: 0 });
    // Its trigger was deleted while it waited.
    const orphan = ref('f'.repeat(32));
    await executions.record(orphan, { event_id: 'evt_orphan', received_at: receivedAt, status: 'queued', attempts: 0 }, request('evt_orphan'));

    expect(await recover(deps)).toEqual({ requeued: 2, interrupted: 1, unacknowledged: 1, failed: 1, sweeps: 0 });
    expect(await executions.get(unanswered)).toBeUndefined();

    const messages = (await drain(deps.queues.flowEvents)).map(parseFlowMessage).sort((a, b) => (a.ref.executionId < b.ref.executionId ? -1 : 1));
    expect(messages.map((m) => [m.ref, m.flow, m.attempts_before])).toEqual([[queued, 'echo', undefined], [running, 'echo', 2]]);
    // The flow input a replay would give: the stored request, redacted headers left out, the same event id.
    expect(messages[0]!.input!.trigger).toMatchObject({ event_id: 'evt_queued', webhook_id: trigger.webhook_id, received_at: receivedAt, event: { id: 'evt_queued', type: 'order.created' }, type: 'order.created' });
    expect(messages[0]!.input!.trigger.headers).toEqual({ 'content-type': 'application/json' });

    const interrupted = (await executions.get(running))!;
    expect(interrupted).toMatchObject({ status: 'queued', attempts: 2, error: 'interrupted' });
    expect(interrupted.timeline.map((a) => [a.attempt, a.status, a.error])).toEqual([[1, 'failed', 'boom'], [2, 'failed', 'interrupted']]);
    expect((await executions.get(done))!.status).toBe('succeeded');
    expect(await executions.get(orphan)).toMatchObject({ status: 'failed', error: 'interrupted: its trigger was deleted' });

    // The worker's first receive of the message runs attempt 3, which the record then shows.
    await runQueuedFlow({
      executions,
      flows: { run: async () => ({ status: 'succeeded', output: { ok: true } }) },
      redelivery: { delay: async () => undefined },
      maxReceiveCount: 5,
      retryBaseSeconds: 1,
      now: Date.now,
    }, { body: JSON.stringify(messages[1]), receiptHandle: 'r', receiveCount: 1, timeoutMs: 1000 });
    const after = (await executions.get(running))!;
    expect(after).toMatchObject({ status: 'succeeded', attempts: 3 });
    expect(after.timeline.map((a) => [a.attempt, a.status])).toEqual([[1, 'failed'], [2, 'failed'], [3, 'succeeded']]);

    // Nothing is left unfinished: a second restart finds nothing.
    expect(await recover(deps)).toEqual({ requeued: 1, interrupted: 0, unacknowledged: 0, failed: 0, sweeps: 0 });
    expect((await drain(deps.queues.flowEvents)).map((body) => parseFlowMessage(body).ref)).toEqual([queued]);
  });

  it('gives back the replay claim an unacknowledged delivery of a signed trigger took (its signed id or content digest, not its event id), so the sender\'s retry runs', async () => {
    const signed = { ...trigger, id: 'c'.repeat(32), webhook_id: `wh${'2'.repeat(30)}`, deduplicate: true };
    await new DynamoTriggerStore(dynamo, deps.tables.triggers, Date.now).create(signed);
    const executions = new DynamoExecutionStore(dynamo, deps.tables.executions, Date.now);
    const receivedAt = new Date().toISOString();
    // As the receiver leaves them when killed between the record and the request: the claim taken, the record naming it.
    const claims = [{ key: 'id:evt_signed', eventId: 'evt_signed' }, { key: `sha256:${'9'.repeat(64)}`, eventId: 'evt_digest' }];
    for (const { key, eventId } of claims) {
      expect(await executions.claimEvent(signed.id, key, 3600)).toBe(true);
      await executions.record(ref(signed.id), { event_id: eventId, received_at: receivedAt, status: 'queued', attempts: 0, claim_key: key });
    }
    expect(await recover(deps)).toMatchObject({ unacknowledged: 2 });
    // Free again: the sender's retry is taken, not refused as a duplicate of an event that never ran.
    for (const { key } of claims) expect(await executions.claimEvent(signed.id, key, 3600)).toBe(true);
    // The claim is kept for this alone: an execution's detail and listing do not show it.
    const acknowledged = ref(signed.id);
    await executions.record(acknowledged, { event_id: 'evt_kept', received_at: receivedAt, status: 'succeeded', attempts: 1, claim_key: 'id:evt_kept' }, request('evt_kept'));
    expect(await executions.get(acknowledged)).not.toHaveProperty('claim_key');
    expect((await executions.list(signed.id, {}, { limit: 10 })).items.map((e) => Object.keys(e))).toEqual([expect.not.arrayContaining(['claim_key'])]);
  });

  it('keeps the delivery counts right: an interrupted first run counts queued once, and the runs after the restart move it on', async () => {
    const other = { ...trigger, id: 'b'.repeat(32), webhook_id: `wh${'1'.repeat(30)}` };
    await new DynamoTriggerStore(dynamo, deps.tables.triggers, Date.now).create(other);
    const stats = new DynamoDeliveryStats(dynamo, deps.tables.executions, Date.now);
    const counted = new CountingExecutionStore(new DynamoExecutionStore(dynamo, deps.tables.executions, Date.now), countAtOnce(stats, Date.now));
    const receivedAt = new Date().toISOString();
    // One was in its first run, the other in its second (its first failed) when the stack stopped.
    const first = ref(other.id);
    const second = ref(other.id);
    for (const [r, eventId] of [[first, 'evt_first'], [second, 'evt_second']] as const) {
      await counted.record(r, { event_id: eventId, received_at: receivedAt, status: 'queued', attempts: 0 }, request(eventId));
    }
    await counted.update(first, { status: 'running', attempts: 1, attempt: { attempt: 1, started_at: receivedAt, status: 'running' } });
    await counted.update(second, { status: 'queued', attempts: 1, error: 'boom', attempt: { attempt: 1, started_at: receivedAt, finished_at: receivedAt, status: 'failed', error: 'boom' } });
    await counted.update(second, { status: 'running', attempts: 2, attempt: { attempt: 2, started_at: receivedAt, status: 'running' } });
    const totals = async () => [...(await stats.minutes(other.id, Math.floor(Date.now() / 60_000) - 10, Math.floor(Date.now() / 60_000) + 10)).values()]
      .reduce((sum, counts) => ({ queued: sum.queued + counts.queued, succeeded: sum.succeeded + counts.succeeded }), { queued: 0, succeeded: 0 });
    expect(await totals()).toEqual({ queued: 1, succeeded: 0 });

    await recover(deps);
    expect(await totals()).toEqual({ queued: 2, succeeded: 0 });
    const messages = (await drain(deps.queues.flowEvents)).map(parseFlowMessage).filter((m) => m.trigger_id === other.id);
    expect(messages).toHaveLength(2);
    for (const message of messages) {
      await runQueuedFlow({
        executions: counted, flows: { run: async () => ({ status: 'succeeded', output: {} }) }, redelivery: { delay: async () => undefined }, maxReceiveCount: 5, retryBaseSeconds: 1, now: Date.now,
      }, { body: JSON.stringify(message), receiptHandle: 'r', receiveCount: 1, timeoutMs: 1000 });
    }
    expect(await totals()).toEqual({ queued: 0, succeeded: 2 });
  });

  it('hands every old generation that still holds items to the sweeper, which empties it and leaves the current one', async () => {
    const kv = new DynamoKvStore(dynamo, deps.tables.kv);
    const accountId = 'acct#with#hashes';
    const generations = ['0'.repeat(32), '1'.repeat(32), '2'.repeat(32)].map((generation) => ({ accountId, name: 'cache', generation }));
    const [purged, current, deleted] = generations as [typeof generations[0], typeof generations[0], typeof generations[0]];
    await kv.createBucket({ accountId, name: 'cache', config: { description: null, ttlSeconds: null, maxValueBytes: 1024 }, createdAt: new Date().toISOString(), generation: purged.generation });
    for (const key of ['a', 'b', 'c']) await kv.putValue(purged, key, { bytes: Buffer.from('old'), contentType: 'text/plain' });
    // A purge whose sweep was lost with the queue: the bucket moved on, its old items stayed.
    expect(await kv.swapGeneration(purged, purged.generation, current.generation)).toBe(true);
    await kv.putValue(current, 'kept', { bytes: Buffer.from('new'), contentType: 'text/plain' });
    // A deleted bucket's generation.
    const gone = { ...deleted, name: 'gone' };
    await kv.putValue(gone, 'x', { bytes: Buffer.from('old'), contentType: 'text/plain' });

    expect((await recover(deps)).sweeps).toBe(2);
    const tasks = (await drain(deps.queues.kvSweep)).map(decodeSweepTask);
    expect(tasks.map((t) => generationPk(t)).sort()).toEqual([generationPk(purged), generationPk(gone)].sort());
    const sweeper = new Sweeper({ store: kv, queue: new SqsSweepQueue(sqs, deps.queues.kvSweep), now: Date.now });
    for (const task of tasks) expect((await sweeper.run(task, { remainingMs: () => 60_000 })).status).toBe('done');
    expect((await kv.scanGeneration(purged, { limit: 10 })).keys).toEqual([]);
    expect((await kv.scanGeneration(gone, { limit: 10 })).keys).toEqual([]);
    expect((await kv.scanGeneration(current, { limit: 10 })).keys).toEqual(['kept']);
    expect((await recover(deps)).sweeps).toBe(0);
  });
});
