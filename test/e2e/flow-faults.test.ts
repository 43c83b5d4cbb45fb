import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import type { Context, SQSEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { sqsClient } from '../../functions/adapters/aws/clients/sqs.js';
import { QUEUES } from '../../functions/manifest.js';
import { call, useLocalStack } from '../support/local-stack.js';
import { createTrigger, deliver, TEST_FLOWS_DIR, waitForExecutions } from '../support/webhooks.js';

const stack = useLocalStack({ flowsDir: TEST_FLOWS_DIR, env: { TRIGGER_CACHE_TTL_MS: '0' } });

const MAX_ATTEMPTS = QUEUES.flowEvents.maxReceiveCount;
const context = { getRemainingTimeInMillis: () => 60_000 } as Context;
const record = (messageId: string, body: string, receiveCount = 1) => ({
  messageId,
  receiptHandle: messageId,
  body,
  attributes: { ApproximateReceiveCount: String(receiveCount), SentTimestamp: '0', SenderId: 'test', ApproximateFirstReceiveTimestamp: '0' },
  messageAttributes: {},
  md5OfBody: '',
  eventSource: 'aws:sqs',
  eventSourceARN: 'arn:aws:sqs:us-east-1:000000000000:local-flowEvents',
  awsRegion: 'us-east-1',
});
const message = (flow: string, key: string) =>
  JSON.stringify({ v: 1, trigger_id: 'no-such-trigger', flow, ref: { triggerId: 'no-such-trigger', executionId: `000000000${key}` }, input: { trigger: { headers: {}, event: {}, event_id: key, webhook_id: 'w', received_at: '2026-01-01T00:00:00.000Z' } } });

describe.concurrent('flow worker', () => {
  it('reports only the failing records of a batch, so the others are not redelivered', async () => {
    const handler = stack.handlers.flowWorker;
    const event = { Records: [record('ok-1', message('echo', 'a')), record('bad-body', 'not json'), record('fails', message('always-fails', 'b')), record('ok-2', message('echo', 'c'))] } as SQSEvent;
    const response = await handler(event, context);
    expect(response.batchItemFailures.map((f) => f.itemIdentifier).sort()).toEqual(['bad-body', 'fails']);
  });

  it('over the queue, one poison event is retried while its batch-mates run once', async () => {
    const token = await stack.token('batch-owner');
    const trigger = await createTrigger(stack, token, { flow: 'fails-on-type' });
    const types = ['ok', 'ok', 'poison', 'ok', 'ok'];
    await Promise.all(types.map((type, i) => deliver(trigger.url, JSON.stringify({ id: `evt_${i}`, type }))));
    const executions = await waitForExecutions(stack, token, trigger.id, (e) => e.length === 5 && e.every((x) => x.status === 'succeeded' || x.status === 'failed'), 170_000);
    const poison = executions.filter((e) => e.type === 'poison');
    const healthy = executions.filter((e) => e.type === 'ok');
    expect(poison).toEqual([expect.objectContaining({ status: 'failed', attempts: MAX_ATTEMPTS, error: 'Fixture.Poison' })]);
    expect(healthy.map((e) => [e.status, e.attempts])).toEqual(Array(4).fill(['succeeded', 1]));
    // Five attempts with backoff take about 20 s alone; the whole suite on two busy cores took 90 s once.
  }, 180_000);

  it(`a flow that always fails ends in the dead-letter queue after ${QUEUES.flowEvents.maxReceiveCount} attempts`, async () => {
    const token = await stack.token('dlq-owner');
    const trigger = await createTrigger(stack, token, { flow: 'always-fails' });
    await deliver(trigger.url, JSON.stringify({ id: 'evt_dead' }));
    await waitForExecutions(stack, token, trigger.id, (e) => e[0]?.status === 'failed', 170_000);
    const sqs = sqsClient(stack.aws);
    let body: string | undefined;
    for (let i = 0; i < 20 && !body; i++) {
      const received = await sqs.send(new ReceiveMessageCommand({ QueueUrl: stack.engines.env.FLOW_QUEUE_DLQ_URL, WaitTimeSeconds: 1, MaxNumberOfMessages: 10 }));
      body = received.Messages?.map((m) => m.Body!).find((b) => b.includes('evt_dead'));
    }
    expect(JSON.parse(body!)).toMatchObject({ flow: 'always-fails', input: { trigger: { event_id: 'evt_dead' } } });
  }, 180_000);
});

describe.concurrent('duplicates', () => {
  it('with deduplicate, a redelivered event answers duplicate and runs the flow once', async () => {
    const token = await stack.token('dedup-owner');
    const trigger = await createTrigger(stack, token, { flow: 'echo', deduplicate: true });
    const first = await deliver(trigger.url, JSON.stringify({ id: 'evt_same', type: 'a' }));
    const again = await deliver(trigger.url, JSON.stringify({ id: 'evt_same', type: 'a' }));
    expect(first.json).toEqual({ status: 'accepted', event_id: 'evt_same' });
    expect(again.status).toBe(200);
    expect(again.json).toEqual({ status: 'duplicate' });
    const executions = await waitForExecutions(stack, token, trigger.id, (e) => e.some((x) => x.status === 'succeeded'));
    expect(executions.map((e) => e.status).sort()).toEqual(['duplicate', 'succeeded']);
  });

  it('without deduplicate, every delivery runs the flow and the flow sees the event id', async () => {
    const token = await stack.token('dedup-owner');
    const trigger = await createTrigger(stack, token, { flow: 'echo' });
    await deliver(trigger.url, JSON.stringify({ id: 'evt_twice' }));
    await deliver(trigger.url, JSON.stringify({ id: 'evt_twice' }));
    const executions = await waitForExecutions(stack, token, trigger.id, (e) => e.length === 2 && e.every((x) => x.status === 'succeeded'));
    expect(executions.map((e) => e.output.event_id)).toEqual(['evt_twice', 'evt_twice']);
  });
});

describe.concurrent('executions', () => {
  it('lists newest first and pages with limit and cursor', async () => {
    const token = await stack.token('exec-owner');
    const trigger = await createTrigger(stack, token, { flow: 'echo', event_filter: ['wanted'] });
    for (let i = 0; i < 5; i++) await deliver(trigger.url, JSON.stringify({ id: `evt_${i}`, type: 'unwanted' }));
    const first = await call(stack, 'GET', `/triggers/${trigger.id}/executions?limit=2`, { token });
    expect(first.json.data.executions.map((e: any) => e.event_id)).toEqual(['evt_4', 'evt_3']);
    expect(first.json.data.executions[0]).toMatchObject({ status: 'ignored', type: 'unwanted', attempts: 0 });
    const rest = await call(stack, 'GET', `/triggers/${trigger.id}/executions?limit=500&cursor=${first.json.data.next_cursor}`, { token });
    expect(rest.json.data.executions.map((e: any) => e.event_id)).toEqual(['evt_2', 'evt_1', 'evt_0']);
    expect(rest.json.data.next_cursor).toBeNull();
  });

  it('refuses a limit over 500 and a forged cursor with 400', async () => {
    const token = await stack.token('exec-owner');
    const trigger = await createTrigger(stack, token, { flow: 'echo' });
    expect((await call(stack, 'GET', `/triggers/${trigger.id}/executions?limit=501`, { token })).json).toEqual({ error: 'validation_error', message: 'limit must be an integer from 1 to 500' });
    expect((await call(stack, 'GET', `/triggers/${trigger.id}/executions?cursor=%%%`, { token })).status).toBe(400);
  });

  it("another account cannot read a trigger's executions", async () => {
    const trigger = await createTrigger(stack, await stack.token('exec-owner'), { flow: 'echo' });
    const res = await call(stack, 'GET', `/triggers/${trigger.id}/executions`, { token: await stack.token('intruder') });
    expect(res.status).toBe(404);
  });
});

describe.concurrent('large events', () => {
  it('an event too large for a queue message is stored aside and the flow gets all of it', async () => {
    const token = await stack.token('big-owner');
    const trigger = await createTrigger(stack, token, { flow: 'echo' });
    const blob = 'x'.repeat(110 * 1024); // copied under event and at the top level: over 200 KiB of input
    const res = await deliver(trigger.url, JSON.stringify({ id: 'evt_big', blob }));
    expect(res.json).toEqual({ status: 'accepted', event_id: 'evt_big' });
    const [execution] = await waitForExecutions(stack, token, trigger.id, (e) => e[0]?.status === 'succeeded');
    expect(execution.output.received.blob).toHaveLength(blob.length);
  });

  it('an event whose flow input would pass 256 KiB is refused with 413 in both modes, before anything is queued (recorded as refused)', async () => {
    const token = await stack.token('big-owner');
    const huge = JSON.stringify({ id: 'evt_huge', blob: 'y'.repeat(900 * 1024) });
    for (const response_mode of ['acknowledge', 'wait']) {
      const trigger = await createTrigger(stack, token, { flow: 'echo', response_mode });
      const res = await deliver(trigger.url, huge);
      expect(res.status).toBe(413);
      expect(res.json).toEqual({ error: 'payload_too_large', message: expect.any(String) });
      const listed = await call(stack, 'GET', `/triggers/${trigger.id}/executions`, { token });
      expect(listed.json.data.executions).toEqual([expect.objectContaining({ status: 'refused', error: 'payload_too_large', attempts: 0, timeline: [] })]);
    }
  });

  it('the limit is on the flow input: a 150 KiB JSON body, copied under event and at the top level, is refused', async () => {
    const token = await stack.token('big-owner');
    const trigger = await createTrigger(stack, token, { flow: 'echo' });
    const res = await deliver(trigger.url, JSON.stringify({ id: 'evt_doubled', blob: 'z'.repeat(150 * 1024) }));
    expect(res.status).toBe(413);
  });
});

describe.concurrent('retries', () => {
  it('a failed run comes back after a backoff of seconds, and the execution shows when', async () => {
    const token = await stack.token('retry-owner');
    const trigger = await createTrigger(stack, token, { flow: 'always-fails' });
    await deliver(trigger.url, JSON.stringify({ id: 'evt_retry' }));
    const [queued] = await waitForExecutions(stack, token, trigger.id, (e) => e[0]?.status === 'queued' && e[0]?.next_attempt_at !== undefined);
    expect(queued.error).toBe('Fixture.AlwaysFails');
    // FLOW_RETRY_BASE_SECONDS is 1 here, doubling per attempt: the retry is due seconds after the
    // failure, not after the queue's visibility timeout (six times the worker's timeout deployed).
    const backoffMs = 1000 * 2 ** (queued.attempts - 1);
    expect(Date.parse(queued.next_attempt_at) - Date.now()).toBeLessThanOrEqual(backoffMs);
    const started = Date.now();
    await waitForExecutions(stack, token, trigger.id, (e) => e[0]?.attempts > queued.attempts);
    expect(Date.now() - started).toBeLessThan(backoffMs + 6_000);
    const [done] = await waitForExecutions(stack, token, trigger.id, (e) => e[0]?.status === 'failed', 170_000);
    expect(done.attempts).toBe(MAX_ATTEMPTS);
    expect(done.next_attempt_at).toBeUndefined();
  }, 180_000);
});
