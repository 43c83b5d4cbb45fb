import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { StateMachine } from 'aws-local-stepfunctions';
import { describe, expect, it } from 'vitest';
import { batchDefinitionOf, readBatchDeclaration } from '../../lib/flow-batch.js';
import { checkFlowDefinition } from '../../lib/flow-definition.js';
import { listFlowNames } from '../../lib/flow-files.js';

/** A flow's batch state machine: the flow's own states, once per event of a batch, each event's failure its own. */
const FLOWS = resolve(import.meta.dirname, '../../flows');
const FIXTURES = resolve(import.meta.dirname, '../fixtures/flows');
const read = (dir: string, name: string) => readFileSync(resolve(dir, `${name}.asl.json`), 'utf8');

describe('batchDefinitionOf', () => {
  it.each(listFlowNames([FLOWS]).filter((name) => name !== 'notify'))('%s: its batch definition is valid Amazon States Language for an express state machine', (name) => {
    const batch = batchDefinitionOf(read(FLOWS, name), readBatchDeclaration(FLOWS, name));
    expect(batch).toBeDefined();
    expect(() => checkFlowDefinition(`${name} (batch)`, batch!)).not.toThrow();
  });

  it('gives notify, whose function posts to a URL, no batch definition: running an event of it again would post again', () => {
    expect(readBatchDeclaration(FLOWS, 'notify')).toEqual({});
    expect(batchDefinitionOf(read(FLOWS, 'notify'))).toBeUndefined();
  });

  it('gives a flow with a Task state, nested ones too, a batch definition only when declared safe to run again', () => {
    const task = { StartAt: 'Put', States: { Put: { Type: 'Task', Resource: 'arn:aws:states:::dynamodb:putItem', Parameters: { TableName: 't', 'Item.$': '$.item' }, End: true } } };
    const nested = { StartAt: 'M', States: { M: { Type: 'Map', ItemProcessor: task, End: true } } };
    for (const flow of [task, nested]) {
      expect(batchDefinitionOf(JSON.stringify(flow))).toBeUndefined();
      expect(batchDefinitionOf(JSON.stringify(flow), { safeToRunAgain: false })).toBeUndefined();
      expect(batchDefinitionOf(JSON.stringify(flow), { safeToRunAgain: true })).toBeDefined();
    }
  });

  it('runs each event alone and answers a failure for that event only', async () => {
    const batch = JSON.parse(batchDefinitionOf(read(FIXTURES, 'fails-on-type'))!);
    const items = ['ok', 'poison', 'ok'].map((type, i) => ({ trigger: { type, event_id: `evt_${i}` } }));
    const result = await new StateMachine(batch).run({ items }).result;
    expect(result).toEqual([
      { output: { event_id: 'evt_0' } },
      { failure: { Error: 'Fixture.Poison', Cause: 'poison event' } },
      { output: { event_id: 'evt_2' } },
    ]);
  });

  it('passes a caught error on whole, so one without a Cause (a Fail state may omit it) does not fail the batch', async () => {
    const states = JSON.parse(batchDefinitionOf(read(FIXTURES, 'fails-on-type'))!).States.FlowgateBatch.ItemProcessor.States;
    const failurePath = { StartAt: 'Failed', States: { Failed: states.FlowgateBatchRunFailed } };
    const caught = { trigger: { type: 'poison' }, failure: { Error: 'Fixture.NoCause' } };
    expect(await new StateMachine(failurePath).run(caught).result).toEqual({ failure: { Error: 'Fixture.NoCause' } });
  });

  it('cannot hold a States.Runtime error in one event: the batch fails as a whole (AWS: States.ALL does not match it), which the worker answers', async () => {
    const flow = { StartAt: 'C', States: {
      C: { Type: 'Choice', Choices: [{ Variable: '$.trigger.type', StringEquals: 'runtime', Next: 'Bad' }], Default: 'Ok' },
      Bad: { Type: 'Pass', Parameters: { 'x.$': '$.trigger.nowhere' }, End: true },
      Ok: { Type: 'Pass', End: true },
    } };
    const batch = JSON.parse(batchDefinitionOf(JSON.stringify(flow))!);
    await expect(new StateMachine(batch).run({ items: [{ trigger: { type: 'ok' } }, { trigger: { type: 'runtime' } }] }).result).rejects.toThrow(/does not point to a value/);
  });

  it('gives no batch definition to a flow that reads its execution, sets a top-level query language, or uses the wrapper\'s state names', () => {
    const flow = (extra: object, states: object = { Done: { Type: 'Pass', End: true } }) => JSON.stringify({ StartAt: Object.keys(states)[0], States: states, ...extra });
    expect(batchDefinitionOf(flow({}))).toBeDefined();
    expect(batchDefinitionOf(flow({}, { Done: { Type: 'Pass', Parameters: { 'id.$': '$$.Execution.Id' }, End: true } }))).toBeUndefined();
    expect(batchDefinitionOf(flow({ QueryLanguage: 'JSONata' }))).toBeUndefined();
    expect(batchDefinitionOf(flow({}, { FlowgateBatchRun: { Type: 'Pass', End: true } }))).toBeUndefined();
    const nested = { P: { Type: 'Parallel', Branches: [{ StartAt: 'FlowgateBatch', States: { FlowgateBatch: { Type: 'Pass', End: true } } }], End: true } };
    expect(batchDefinitionOf(flow({}, nested))).toBeUndefined();
  });

  it('keeps the flow\'s time limit for the whole batch', () => {
    const batch = JSON.parse(batchDefinitionOf(JSON.stringify({ StartAt: 'Done', TimeoutSeconds: 30, States: { Done: { Type: 'Pass', End: true } } }))!);
    expect(batch.TimeoutSeconds).toBe(30);
    expect(batch.States.FlowgateBatch.ItemProcessor.States.FlowgateBatchRun.Branches[0]).toEqual({ StartAt: 'Done', States: { Done: { Type: 'Pass', End: true } } });
  });
});
