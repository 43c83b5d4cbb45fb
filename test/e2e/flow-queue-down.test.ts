import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { dynamoClient } from '../../functions/adapters/aws/clients/dynamo.js';
import { call, useLocalStack } from '../support/local-stack.js';
import { createTrigger, deliver } from '../support/webhooks.js';

// The flow queue points at a port nothing listens on: SQS is unreachable for the receiver. And the
// flow worker it would invoke directly for a quiet trigger does not exist: nothing can hold the event.
const stack = useLocalStack({ env: { FLOW_QUEUE_URL: 'http://127.0.0.1:9/000000000000/unreachable', AWS_MAX_ATTEMPTS: '1', FLOW_WORKER_FUNCTION: 'arn:aws:lambda:us-east-1:000000000000:function:missing' } });

describe('queue unreachable', () => {
  it('answers 503 unavailable and records no execution as accepted', async () => {
    const token = await stack.token('outage-owner');
    const trigger = await createTrigger(stack, token, { flow: 'echo', deduplicate: true });
    const res = await deliver(trigger.url, JSON.stringify({ id: 'evt_outage' }));
    expect(res.status).toBe(503);
    expect(res.json).toEqual({ error: 'unavailable' });
    const executions = await call(stack, 'GET', `/triggers/${trigger.id}/executions`, { token });
    expect(executions.json.data.executions).toEqual([]);
  });

  it('leaves nothing of the delivery in the executions table: neither its record nor its stored request', async () => {
    const token = await stack.token('outage-owner');
    const trigger = await createTrigger(stack, token, { flow: 'echo', deduplicate: true });
    const res = await deliver(trigger.url, JSON.stringify({ id: 'evt_left', blob: 'x'.repeat(10_000) }));
    expect(res.status).toBe(503);
    const { Items } = await dynamoClient(stack.aws).send(new ScanCommand({ TableName: stack.engines.env.EXECUTIONS_TABLE!, ConsistentRead: true }));
    expect((Items ?? []).map((item) => item.pk as string).filter((pk) => pk.includes(trigger.id))).toEqual([]);
  });

  it("keeps the sender's retry runnable: the event id is not left claimed", async () => {
    const token = await stack.token('outage-owner');
    const trigger = await createTrigger(stack, token, { flow: 'echo', deduplicate: true });
    await deliver(trigger.url, JSON.stringify({ id: 'evt_retry' }));
    const retry = await deliver(trigger.url, JSON.stringify({ id: 'evt_retry' }));
    expect(retry.json).toEqual({ error: 'unavailable' });
  });
});
