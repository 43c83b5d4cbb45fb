import { createServer, type Server } from 'node:http';
import { delimiter, resolve } from 'node:path';
import { StartSyncExecutionCommand } from '@aws-sdk/client-sfn';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sfnClient } from '../../functions/adapters/aws/clients/sfn.js';
import { QUEUES } from '../../functions/manifest.js';
import { useLocalStack } from '../support/local-stack.js';
import { signStripe } from '../support/signers.js';
import { createTrigger, deliver, waitForExecutions } from '../support/webhooks.js';

/** A stand-in for a Slack incoming webhook: records every POST; answers 500 to a message naming `always.fails`. */
const received: { text: string }[] = [];
const receiver: Server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const message = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { text: string };
    received.push(message);
    res.writeHead(message.text.includes('always.fails') ? 500 : 200, { 'content-type': 'text/plain' }).end('ok');
  });
});
let notifyUrl = '';
beforeAll(async () => {
  await new Promise<void>((done) => receiver.listen(0, '127.0.0.1', done));
  notifyUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`;
});
afterAll(() => new Promise<void>((done) => receiver.close(() => done())));

const FLOWS_DIR = [resolve(import.meta.dirname, '../../flows'), resolve(import.meta.dirname, '../fixtures/flow-tasks')].join(delimiter);
// NOTIFY_URL is read when the stack starts, after the receiver above has its port.
const env: Record<string, string> = { WAIT_TIMEOUT_MS: '8000', TRIGGER_CACHE_TTL_MS: '0' };
Object.defineProperty(env, 'NOTIFY_URL', { enumerable: true, get: () => notifyUrl });
const stack = useLocalStack({ flowsDir: FLOWS_DIR, env });

const postsNaming = (eventId: string) => received.filter((message) => message.text.includes(eventId));

describe('summarize: a Task that calls a project function, in wait mode', () => {
  it('answers the function\'s summary of a Stripe-signed event', async () => {
    const token = await stack.token('tasks-owner');
    const secret = 'whsec_flow_tasks';
    const trigger = await createTrigger(stack, token, { flow: 'summarize', response_mode: 'wait', signature: { service: 'stripe', secret } });
    const body = JSON.stringify({ id: 'evt_summarize_1', type: 'payment_intent.succeeded', object: 'event', data: { object: { amount: 2000 } }, created: 1_700_000_000 });
    const res = await deliver(trigger.url, body, signStripe({ secret, body, timestamp: Math.floor(Date.now() / 1000) }));
    expect(res.status).toBe(200);
    expect(res.json).toEqual({
      type: 'payment_intent.succeeded',
      event_id: 'evt_summarize_1',
      keys: ['created', 'data', 'id', 'object', 'type'],
      bytes: Buffer.byteLength(body),
    });
  });

  it('a Task with the optimized integration gets Lambda\'s output shape (Payload, StatusCode, ExecutedVersion)', async () => {
    const token = await stack.token('tasks-owner');
    const trigger = await createTrigger(stack, token, { flow: 'lambda-output', response_mode: 'wait' });
    const res = await deliver(trigger.url, JSON.stringify({ id: 'evt_shape', type: 'ping' }));
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ StatusCode: 200, ExecutedVersion: '$LATEST', Payload: { type: 'ping', event_id: 'evt_shape', keys: ['id', 'type'] } });
  });

  it('a function that throws fails its Task with the error\'s name, which Catch matches', async () => {
    const token = await stack.token('tasks-owner');
    const trigger = await createTrigger(stack, token, { flow: 'catches-refusal', response_mode: 'wait' });
    const res = await deliver(trigger.url, JSON.stringify({ id: 'evt_refused' }));
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ error: 'Fixture.Refused', cause: { errorType: 'Fixture.Refused', errorMessage: 'this fixture refuses every event', trace: [] } });
  });

  it('DynamoDB and SQS integrations (optimized and AWS SDK) run against the local engines', async () => {
    const token = await stack.token('tasks-owner');
    const trigger = await createTrigger(stack, token, { flow: 'stores-event', response_mode: 'wait' });
    const res = await deliver(trigger.url, JSON.stringify({ id: 'evt_stored', type: 'order.created' }));
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ stored_type: 'order.created', send_error: 'SQS.QueueDoesNotExistException' });
  });

  it('an integration without a local engine fails the flow at once, naming the resource', async () => {
    const token = await stack.token('tasks-owner');
    const trigger = await createTrigger(stack, token, { flow: 'publishes-to-sns' });
    const started = Date.now();
    await deliver(trigger.url, JSON.stringify({ id: 'evt_sns' }));
    const [execution] = await waitForExecutions(stack, token, trigger.id, (e) => e[0]?.status === 'queued' && e[0]?.error !== undefined);
    expect(execution).toMatchObject({ status: 'queued', error: 'Local.UnsupportedIntegration' });
    expect(Date.now() - started).toBeLessThan(10_000);
    // The cause names the state and the resource.
    const run = await sfnClient(stack.aws).send(new StartSyncExecutionCommand({ stateMachineArn: `${stack.engines.env.FLOW_STATE_MACHINE_ARN_PREFIX}publishes-to-sns`, input: JSON.stringify({ trigger: { event_id: 'evt_sns_direct' } }) }));
    expect(run).toMatchObject({ status: 'FAILED', error: 'Local.UnsupportedIntegration', cause: 'state "Publish": arn:aws:states:::sns:publish has no local engine; it runs only when deployed' });
  });
});

describe.concurrent('notify: a Task that POSTs to NOTIFY_URL, in acknowledge mode', () => {
  it('makes exactly one POST per event, naming its type and id', async () => {
    const token = await stack.token('notify-owner');
    const trigger = await createTrigger(stack, token, { flow: 'notify' });
    for (const id of ['evt_notify_1', 'evt_notify_2']) {
      expect((await deliver(trigger.url, JSON.stringify({ id, type: 'invoice.paid' }))).json).toEqual({ status: 'accepted', event_id: id });
    }
    const executions = await waitForExecutions(stack, token, trigger.id, (e) => e.length === 2 && e.every((x) => x.status === 'succeeded'));
    expect(executions.map((e) => e.output)).toEqual([{ notified: true, status: 200 }, { notified: true, status: 200 }]);
    await new Promise((done) => setTimeout(done, 1_500));
    for (const id of ['evt_notify_1', 'evt_notify_2']) {
      expect(postsNaming(id)).toEqual([{ text: `Flowgate received invoice.paid (event ${id})` }]);
    }
  });

  it(`a receiver that answers 500 fails the flow, which is retried like any failed flow (${QUEUES.flowEvents.maxReceiveCount} runs)`, async () => {
    const token = await stack.token('notify-owner');
    const trigger = await createTrigger(stack, token, { flow: 'notify' });
    await deliver(trigger.url, JSON.stringify({ id: 'evt_notify_500', type: 'always.fails' }));
    const [retrying] = await waitForExecutions(stack, token, trigger.id, (e) => e[0]?.status === 'queued' && e[0]?.error !== undefined);
    expect(retrying).toMatchObject({ status: 'queued', error: 'NotifyFailed', attempts: 1 });
    const [failed] = await waitForExecutions(stack, token, trigger.id, (e) => e[0]?.status === 'failed', 80_000);
    expect(failed).toMatchObject({ status: 'failed', error: 'NotifyFailed', attempts: QUEUES.flowEvents.maxReceiveCount });
    // Each run: the first POST and the one retry of the flow's own Retry on NotifyFailed.
    expect(postsNaming('evt_notify_500')).toHaveLength(2 * QUEUES.flowEvents.maxReceiveCount);
  }, 90_000);
});
