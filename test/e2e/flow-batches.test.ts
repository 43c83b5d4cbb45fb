import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { SQSRecord } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { dynamoClient } from '../../functions/adapters/aws/clients/dynamo.js';
import { sfnClient } from '../../functions/adapters/aws/clients/sfn.js';
import { DynamoExecutionStore } from '../../functions/adapters/aws/dynamo-execution-store.js';
import { newExecutionId, receivedAtOf } from '../../functions/domain/flows/execution-id.js';
import { FUNCTIONS, TABLES } from '../../functions/manifest.js';
import { lambdaContext } from '../../local/lambda-context.js';
import { call, useLocalStack } from '../support/local-stack.js';
import { createTrigger, deliver, TEST_FLOWS_DIR, waitForExecutions } from '../support/webhooks.js';

/**
 * The flow worker runs a batch's events of one flow in one execution of the flow's batch state
 * machine, each event's outcome its own; a flow without one (it reads `$$.Execution`) runs an
 * execution per event, as before. A batch that fails as a whole (an error no Catch holds) reruns
 * nothing: its events come back through the queue and run alone.
 */
const extraFlows = mkdtempSync(join(tmpdir(), 'flowgate-batch-flows-'));
writeFileSync(join(extraFlows, 'reads-execution.asl.json'), JSON.stringify({
  StartAt: 'Own', States: { Own: { Type: 'Pass', Parameters: { 'input.$': '$$.Execution.Input' }, End: true } },
}));
// A path that does not resolve is States.Runtime, which no Catch holds: it fails its whole batch.
writeFileSync(join(extraFlows, 'fails-at-runtime.asl.json'), JSON.stringify({
  StartAt: 'Check',
  States: {
    Check: { Type: 'Choice', Choices: [{ Variable: '$.trigger.type', StringEquals: 'runtime', Next: 'Unresolved' }], Default: 'Ok' },
    Unresolved: { Type: 'Pass', Parameters: { 'missing.$': '$.trigger.nowhere' }, End: true },
    Ok: { Type: 'Pass', Parameters: { 'event_id.$': '$.trigger.event_id' }, End: true },
  },
}));
// Its time limit is the whole batch's: one slow event times the batch out.
writeFileSync(join(extraFlows, 'slow-on-type.asl.json'), JSON.stringify({
  TimeoutSeconds: 1,
  StartAt: 'Check',
  States: {
    Check: { Type: 'Choice', Choices: [{ Variable: '$.trigger.type', StringEquals: 'slow', Next: 'Wait' }], Default: 'Done' },
    Wait: { Type: 'Wait', Seconds: 3, Next: 'Done' },
    Done: { Type: 'Pass', End: true },
  },
}));
writeFileSync(join(extraFlows, 'waits-a-little.asl.json'), JSON.stringify({
  StartAt: 'Wait', States: { Wait: { Type: 'Wait', Seconds: 3, Next: 'Done' }, Done: { Type: 'Pass', End: true } },
}));
const stack = useLocalStack({ flowsDir: [TEST_FLOWS_DIR, extraFlows].join(delimiter) });

type Ref = { triggerId: string; executionId: string };

async function runBatch(flow: string, types: string[], again?: { refs: Ref[]; receiveCount: number }) {
  const executions = new DynamoExecutionStore(dynamoClient(stack.aws), stack.engines.env[TABLES.executions.env]!, Date.now);
  const triggerId = again?.refs[0]!.triggerId ?? `t-batch-${randomBytes(4).toString('hex')}`;
  const refs = again?.refs ?? types.map(() => ({ triggerId, executionId: newExecutionId(Date.now(), randomBytes(16).toString('hex')) }));
  if (!again) await Promise.all(refs.map((ref, i) => executions.record(ref, { event_id: `evt_${i}`, received_at: receivedAtOf(ref.executionId), status: 'queued', attempts: 0 })));
  const records = refs.map((ref, i) => ({
    messageId: `m${i}`, receiptHandle: `r${i}`, body: JSON.stringify({ v: 1, trigger_id: triggerId, flow, ref, input: { trigger: { type: types[i], event_id: `evt_${i}` } } }),
    attributes: { ApproximateReceiveCount: String(again?.receiveCount ?? 1) },
  }) as unknown as SQSRecord);
  const started: string[] = [];
  const client = sfnClient(stack.aws);
  const name = `countStarts${randomBytes(4).toString('hex')}`;
  client.middlewareStack.add((next) => async (args) => {
    started.push((args.input as { stateMachineArn: string }).stateMachineArn);
    return next(args);
  }, { step: 'initialize', name });
  try {
    const response = await stack.handlers.flowWorker({ Records: records }, lambdaContext('flowWorker', FUNCTIONS.flowWorker.timeoutSeconds));
    const outcomes = await Promise.all(refs.map(async (ref) => (await executions.get(ref))!));
    return { response, outcomes, started, refs };
  } finally {
    client.middlewareStack.remove(name);
  }
}

describe('flow worker batches', () => {
  it('runs ten events of one flow in one execution, each with its own outcome: a poison event fails alone and is retried alone', async () => {
    const types = ['ok', 'ok', 'poison', 'ok', 'ok', 'ok', 'poison', 'ok', 'ok', 'ok'];
    const { response, outcomes, started } = await runBatch('fails-on-type', types);
    expect(started).toHaveLength(1);
    expect(started[0]).toMatch(/:stateMachine:batch-fails-on-type$/);
    expect(outcomes.map((o) => o.status)).toEqual(types.map((t) => (t === 'poison' ? 'queued' : 'succeeded')));
    expect(outcomes.filter((o) => o.status === 'succeeded').map((o) => o.output)).toEqual(types.flatMap((t, i) => (t === 'ok' ? [{ event_id: `evt_${i}` }] : [])));
    expect(outcomes.filter((o) => o.status === 'queued').map((o) => o.error)).toEqual(['Fixture.Poison', 'Fixture.Poison']);
    expect(response.batchItemFailures.map((f) => f.itemIdentifier)).toEqual(['m2', 'm6']);
  });

  it('reruns nothing of a batch that failed as a whole: every event comes back through the queue, its attempt counted, and then runs alone', async () => {
    const types = ['ok', 'runtime', 'ok'];
    const first = await runBatch('fails-at-runtime', types);
    // Today's worker ran each event again at once, in an execution of its own: the ones that had
    // already run, twice. None may run again before it comes back through the queue.
    expect(first.started).toEqual([expect.stringMatching(/:stateMachine:batch-fails-at-runtime$/)]);
    expect(first.outcomes.map((o) => [o.status, o.attempts, o.error])).toEqual(Array(3).fill(['queued', 1, 'batch_failed']));
    expect(first.response.batchItemFailures.map((f) => f.itemIdentifier)).toEqual(['m0', 'm1', 'm2']);

    const second = await runBatch('fails-at-runtime', types, { refs: first.refs, receiveCount: 2 });
    expect(second.started).toEqual(Array(3).fill(expect.stringMatching(/:stateMachine:flow-fails-at-runtime$/)));
    expect(second.outcomes.map((o) => [o.status, o.attempts, o.error])).toEqual([['succeeded', 2, undefined], ['queued', 2, 'States.Runtime'], ['succeeded', 2, undefined]]);
    expect(second.response.batchItemFailures.map((f) => f.itemIdentifier)).toEqual(['m1']);
  });

  it('reruns nothing of a batch that timed out: its events come back through the queue, and then run alone, so only the slow one times out again', async () => {
    const first = await runBatch('slow-on-type', ['ok', 'slow']);
    expect(first.started).toEqual([expect.stringMatching(/:stateMachine:batch-slow-on-type$/)]);
    expect(first.outcomes.map((o) => [o.status, o.attempts, o.error])).toEqual(Array(2).fill(['queued', 1, 'flow_timeout']));
    const second = await runBatch('slow-on-type', ['ok', 'slow'], { refs: first.refs, receiveCount: 2 });
    expect(second.started).toEqual(Array(2).fill(expect.stringMatching(/:stateMachine:flow-slow-on-type$/)));
    expect(second.outcomes.map((o) => [o.status, o.attempts, o.error])).toEqual([['succeeded', 2, undefined], ['queued', 2, 'flow_timeout']]);
  });

  it('never calls a batch state machine the stack does not have: a flow that reads its execution runs one execution per event', async () => {
    const first = await runBatch('reads-execution', ['a', 'b', 'c']);
    // The worker is told which flows have one (FLOW_BATCH_NAMES): no call is denied and paid for.
    expect(first.started.filter((arn) => arn.includes(':stateMachine:batch-'))).toHaveLength(0);
    expect(first.started.filter((arn) => arn.endsWith(':stateMachine:flow-reads-execution'))).toHaveLength(3);
    expect(first.outcomes.map((o) => [o.status, o.error])).toEqual([["succeeded", undefined], ["succeeded", undefined], ["succeeded", undefined]]);
    // Each ran in an execution of its own: its execution's input is its own event, not the batch.
    expect(first.outcomes.map((o) => (o.output as { input: { trigger: { type: string } } }).input.trigger.type)).toEqual(['a', 'b', 'c']);
    const second = await runBatch('reads-execution', ['a', 'b']);
    expect(second.started.every((arn) => arn.endsWith(':stateMachine:flow-reads-execution'))).toBe(true);
  });
});

describe('the backlog in GET /health', () => {
  /** Polls /health until its backlog satisfies `done`; returns it. */
  async function backlogWhen(done: (backlog: { waiting: number; oldest_age_seconds: number | null }) => boolean) {
    const deadline = Date.now() + 20_000;
    let backlog;
    while (Date.now() < deadline) {
      backlog = (await call(stack, 'GET', '/health')).json.backlog;
      if (done(backlog)) return backlog;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`backlog never settled: ${JSON.stringify(backlog)}`);
  }

  it('shows how many acknowledged events wait for their flow and how long the oldest has waited, until each has run', async () => {
    const token = await stack.token('backlog-owner');
    const trigger = await createTrigger(stack, token, { flow: 'waits-a-little' });
    for (let i = 0; i < 3; i++) expect((await deliver(trigger.url, JSON.stringify({ id: `evt_wait_${i}` }))).json).toEqual({ status: 'accepted', event_id: `evt_wait_${i}` });
    // Each flow waits 3 s: the events are still waiting when their oldest has waited a second.
    expect(await backlogWhen((b) => b.oldest_age_seconds !== null && b.oldest_age_seconds >= 1)).toEqual({ waiting: 3, oldest_age_seconds: expect.any(Number) });
    await waitForExecutions(stack, token, trigger.id, (e) => e.length === 3 && e.every((x) => x.status === 'succeeded'));
    expect(await backlogWhen((b) => b.waiting === 0)).toEqual({ waiting: 0, oldest_age_seconds: null });
  });
});
