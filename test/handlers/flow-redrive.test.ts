import { ChangeMessageVisibilityCommand, DeleteMessageCommand, ReceiveMessageCommand, SendMessageCommand, type Message } from '@aws-sdk/client-sqs';
import type { Context, SQSEvent, SQSRecord } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { DynamoExecutionStore } from '../../functions/adapters/aws/dynamo-execution-store.js';
import { SqsRedelivery, SqsRetryQueue } from '../../functions/adapters/aws/sqs-redelivery.js';
import { newExecutionId } from '../../functions/domain/flows/execution-id.js';
import type { ExecutionRef, FlowResult } from '../../functions/domain/flows/ports.js';
import { createFlowWorkerHandler } from '../../functions/handlers/flow-worker.js';
import { QUEUES } from '../../functions/manifest.js';
import { MemoryDeliveryStats } from '../support/memory-delivery-stats.js';
import { useEngines } from '../support/engines.js';

/*
 * A flow event dead-lettered after its last attempt, then redriven: the flow worker over the flow
 * queue, its dead-letter queue and the executions table of the embedded engines. A redrive
 * (`aws sqs start-message-move-task`) makes a new message of the same body, its receive count
 * starting again at 1 ("All redriven messages are considered new messages", SQS Developer Guide,
 * "Configure a dead-letter queue redrive"); local-aws-sqs has no move task, so the test moves the
 * message as the task does: received from the dead-letter queue, sent to the flow queue, deleted.
 */
const engines = useEngines();
const MAX_ATTEMPTS = QUEUES.flowEvents.maxReceiveCount;
const context = { getRemainingTimeInMillis: () => 60_000 } as Context;
const flowQueue = () => engines.engines.env[QUEUES.flowEvents.env]!;
const deadLetterQueue = () => engines.engines.env.FLOW_QUEUE_DLQ_URL!;

function worker(outcome: () => FlowResult) {
  const executions = new DynamoExecutionStore(engines.dynamo, engines.engines.env.EXECUTIONS_TABLE!, Date.now);
  const handler = createFlowWorkerHandler({
    executions,
    stats: new MemoryDeliveryStats(),
    flows: { run: async () => outcome() },
    redelivery: new SqsRedelivery(engines.sqs, flowQueue()),
    retries: new SqsRetryQueue(engines.sqs, flowQueue()),
    deadLetters: new SqsRetryQueue(engines.sqs, deadLetterQueue()),
    maxReceiveCount: MAX_ATTEMPTS,
    // No backoff: each failed message is visible again at once.
    retryBaseSeconds: 0,
    now: Date.now,
  });
  return { executions, handler };
}

/** Receives the message of `ref` from `queueUrl` (waiting for it), leaving others alone. */
async function receiveOf(queueUrl: string, ref: ExecutionRef, visibilityTimeout = 30): Promise<Message> {
  for (let i = 0; i < 30; i++) {
    const { Messages = [] } = await engines.sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1, VisibilityTimeout: visibilityTimeout, AttributeNames: ['All'] }));
    const mine = Messages.find((m) => m.Body!.includes(ref.executionId));
    for (const other of Messages.filter((m) => m !== mine)) {
      await engines.sqs.send(new ChangeMessageVisibilityCommand({ QueueUrl: queueUrl, ReceiptHandle: other.ReceiptHandle!, VisibilityTimeout: 0 }));
    }
    if (mine) return mine;
  }
  throw new Error(`no message of ${ref.executionId} on ${queueUrl}`);
}

/** One receive of the message run by the worker as Lambda's event source does: a record not reported failed is deleted. */
async function runOnce(handler: ReturnType<typeof worker>['handler'], ref: ExecutionRef): Promise<{ failed: boolean; receiveCount: number }> {
  const message = await receiveOf(flowQueue(), ref);
  const record = {
    messageId: message.MessageId!, receiptHandle: message.ReceiptHandle!, body: message.Body!,
    attributes: { ApproximateReceiveCount: message.Attributes!.ApproximateReceiveCount!, SentTimestamp: '0', SenderId: 'test', ApproximateFirstReceiveTimestamp: '0' },
    messageAttributes: {}, md5OfBody: '', eventSource: 'aws:sqs', eventSourceARN: 'arn:aws:sqs:us-east-1:000000000000:local-flowEvents', awsRegion: 'us-east-1',
  } as SQSRecord;
  const response = await handler({ Records: [record] } as SQSEvent, context);
  const failed = response.batchItemFailures.some((f) => f.itemIdentifier === record.messageId);
  if (!failed) await engines.sqs.send(new DeleteMessageCommand({ QueueUrl: flowQueue(), ReceiptHandle: record.receiptHandle }));
  return { failed, receiveCount: Number(record.attributes.ApproximateReceiveCount) };
}

/** An event that failed its every attempt: recorded `failed`, its message on the dead-letter queue. */
async function deadLettered(suffix: string) {
  const failing = worker(() => ({ status: 'failed', error: 'Fixture.Broken' }));
  const ref = { triggerId: `redrive-${suffix}`, executionId: newExecutionId(Date.now(), suffix) };
  await failing.executions.record(ref, { event_id: `evt_${suffix}`, received_at: new Date().toISOString(), status: 'queued', attempts: 0 });
  await engines.sqs.send(new SendMessageCommand({ QueueUrl: flowQueue(), MessageBody: JSON.stringify({ v: 1, trigger_id: ref.triggerId, flow: 'echo', ref, input: { trigger: { event: { id: `evt_${suffix}` } } } }) }));
  const runs = [];
  for (let i = 0; i < MAX_ATTEMPTS; i++) runs.push(await runOnce(failing.handler, ref));
  return { ref, runs, executions: failing.executions };
}

/** What `start-message-move-task` does with the event's dead-lettered message: a new message of the same body on the flow queue. */
async function redrive(ref: ExecutionRef): Promise<string> {
  const dead = await receiveOf(deadLetterQueue(), ref);
  await engines.sqs.send(new SendMessageCommand({ QueueUrl: flowQueue(), MessageBody: dead.Body! }));
  await engines.sqs.send(new DeleteMessageCommand({ QueueUrl: deadLetterQueue(), ReceiptHandle: dead.ReceiptHandle! }));
  return dead.Body!;
}

describe('a flow event dead-lettered and redriven', () => {
  it(`after the ${MAX_ATTEMPTS}th failed attempt, the worker puts the message on the dead-letter queue with its attempts counted, and the original leaves the flow queue`, async () => {
    const { ref, runs, executions } = await deadLettered('last');
    expect(runs).toEqual([
      ...Array.from({ length: MAX_ATTEMPTS - 1 }, (_, i) => ({ failed: true, receiveCount: i + 1 })),
      // Reported done, so the event source deletes it: not left on the flow queue for SQS to move a second copy.
      { failed: false, receiveCount: MAX_ATTEMPTS },
    ]);
    expect(await executions.get(ref)).toMatchObject({ status: 'failed', attempts: MAX_ATTEMPTS, error: 'Fixture.Broken' });
    const dead = await receiveOf(deadLetterQueue(), ref, 0);
    expect(JSON.parse(dead.Body!)).toMatchObject({ flow: 'echo', ref, attempts_before: MAX_ATTEMPTS });
    const left = await engines.sqs.send(new ReceiveMessageCommand({ QueueUrl: flowQueue(), MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }));
    expect((left.Messages ?? []).filter((m) => m.Body!.includes(ref.executionId))).toEqual([]);
  }, 60_000);

  it('a redriven event that succeeds is recorded as attempt 6, succeeded, though its receive count started again at 1', async () => {
    const { ref, executions } = await deadLettered('ok');
    await redrive(ref);
    const succeeding = worker(() => ({ status: 'succeeded', output: { ok: true } }));
    expect(await runOnce(succeeding.handler, ref)).toEqual({ failed: false, receiveCount: 1 });
    const record = await executions.get(ref);
    expect(record).toMatchObject({ status: 'succeeded', attempts: MAX_ATTEMPTS + 1, output: { ok: true } });
    expect(record!.timeline.map((a) => [a.attempt, a.status])).toContainEqual([MAX_ATTEMPTS + 1, 'succeeded']);
  }, 60_000);

  it(`a redriven event has ${MAX_ATTEMPTS} attempts again, numbered on, each recorded, and is dead-lettered again after them`, async () => {
    const { ref } = await deadLettered('again');
    await redrive(ref);
    const failing = worker(() => ({ status: 'failed', error: 'Fixture.StillBroken' }));
    const seen: [number | undefined, string | undefined][] = [];
    const runs = [];
    for (let i = 0; i < MAX_ATTEMPTS; i++) {
      runs.push(await runOnce(failing.handler, ref));
      const record = await failing.executions.get(ref);
      seen.push([record?.attempts, record?.status]);
    }
    expect(runs.map((r) => r.failed)).toEqual([...Array(MAX_ATTEMPTS - 1).fill(true), false]);
    expect(seen).toEqual([
      ...Array.from({ length: MAX_ATTEMPTS - 1 }, (_, i) => [MAX_ATTEMPTS + i + 1, 'queued']),
      [2 * MAX_ATTEMPTS, 'failed'],
    ]);
    expect(JSON.parse((await receiveOf(deadLetterQueue(), ref, 0)).Body!)).toMatchObject({ attempts_before: 2 * MAX_ATTEMPTS });
  }, 90_000);

  it('a message that made direct attempts is dead-lettered without them counted against the next round', async () => {
    const ref = { triggerId: 'redrive-direct', executionId: newExecutionId(Date.now(), 'direct') };
    const { executions, handler } = worker(() => ({ status: 'failed', error: 'Fixture.Broken' }));
    await executions.record(ref, { event_id: 'evt_direct', received_at: new Date().toISOString(), status: 'queued', attempts: 1 });
    // The retry of a failed direct attempt: one attempt made outside the queue.
    await engines.sqs.send(new SendMessageCommand({ QueueUrl: flowQueue(), MessageBody: JSON.stringify({ v: 1, trigger_id: ref.triggerId, flow: 'echo', ref, input: { trigger: { event: {} } }, attempts_before: 1, direct_attempts: 1 }) }));
    const runs = [];
    for (let i = 0; i < MAX_ATTEMPTS - 1; i++) runs.push((await runOnce(handler, ref)).failed);
    expect(runs).toEqual([...Array(MAX_ATTEMPTS - 2).fill(true), false]);
    const body = JSON.parse(await redrive(ref));
    expect(body).toMatchObject({ attempts_before: MAX_ATTEMPTS });
    expect(body).not.toHaveProperty('direct_attempts');
    expect(await executions.get(ref)).toMatchObject({ status: 'failed', attempts: MAX_ATTEMPTS });
  }, 60_000);
});
