import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { listFlowNames } from '../../lib/flow-files.js';
import { synth, type Synthesized } from '../support/synth.js';

/**
 * The flows' batch state machines in the template: only flows whose events may run again get one
 * (a batch that fails as a whole sends its events back through the queue), the failure path reads
 * nothing an error may lack, and the flow worker is told exactly which flows have one.
 */
const FLOWS = resolve(import.meta.dirname, '../../flows');
const folders: string[] = [];
afterAll(() => {
  for (const dir of folders.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function flowsFolder(files: Record<string, unknown>): string {
  const dir = mkdtempSync(join(tmpdir(), 'flowgate-flow-batches-'));
  folders.push(dir);
  copyFileSync(join(FLOWS, 'echo.asl.json'), join(dir, 'echo.asl.json'));
  for (const [path, content] of Object.entries(files)) writeFileSync(join(dir, path), JSON.stringify(content));
  return dir;
}

type Resource = { Type: string; Properties: Record<string, any> };
const stateMachineNames = (s: Synthesized) =>
  Object.values(s.template.findResources('AWS::StepFunctions::StateMachine') as Record<string, Resource>).map((r) => String(r.Properties.StateMachineName)).sort();
const workerEnvironment = (s: Synthesized): Record<string, unknown> => {
  const fn = s.template.toJSON().Resources[s.stack.getLogicalId(s.stack.functions.flowWorker.function.node.defaultChild as never)] as Resource;
  return fn.Properties.Environment.Variables;
};
const batchDefinition = (s: Synthesized, flow: string) => {
  const machine = Object.values(s.template.findResources('AWS::StepFunctions::StateMachine') as Record<string, Resource>)
    .find((r) => r.Properties.StateMachineName === `${s.stack.stackName}-batch-${flow}`)!;
  return JSON.parse(machine.Properties.DefinitionString) as { States: { FlowgateBatch: { ItemProcessor: { States: Record<string, any> } } } };
};

describe('the shipped flows', () => {
  const s = synth();
  // notify posts to a URL: a batch that failed as a whole would post again for events that had posted.
  const BATCHED = listFlowNames(FLOWS).filter((flow) => flow !== 'notify');

  it('every flow but notify has a batch state machine: the others have no Task, or declare in <name>.batch.json that running again is harmless', () => {
    expect(Object.keys(s.stack.flows.batchStateMachines).sort()).toEqual(BATCHED);
    expect(stateMachineNames(s).filter((name) => name.includes('-batch-'))).toEqual(BATCHED.map((flow) => `Flowgate-batch-${flow}`));
  });

  it('the flow worker is told exactly the flows that have one (FLOW_BATCH_NAMES), so it never calls a batch state machine that is not there', () => {
    expect(String(workerEnvironment(s).FLOW_BATCH_NAMES).split(',').sort()).toEqual(BATCHED);
  });

  it.each(BATCHED)('%s: a caught error goes on whole (a Fail state may give no Cause, and reading one would fail the batch)', (flow) => {
    const states = batchDefinition(s, flow).States.FlowgateBatch.ItemProcessor.States;
    expect(states.FlowgateBatchRun.Catch).toEqual([{ ErrorEquals: ['States.ALL'], ResultPath: '$.failure', Next: 'FlowgateBatchRunFailed' }]);
    expect(states.FlowgateBatchRunFailed).toEqual({ Type: 'Pass', Parameters: { 'failure.$': '$.failure' }, End: true });
  });
});

describe('a project\'s flows', () => {
  const TASK = { StartAt: 'Put', States: { Put: { Type: 'Task', Resource: 'arn:aws:states:::dynamodb:putItem', Parameters: { TableName: 'orders', 'Item.$': '$.item' }, End: true } } };
  const PASS = { StartAt: 'Done', States: { Done: { Type: 'Pass', End: true } } };
  // A 10-character stack name: `<stack>-flow-<64 characters>` is 80, its batch state machine's name 81.
  const LONG = 'l'.repeat(64);
  const dir = flowsFolder({
    'store.asl.json': TASK,
    'store-keyed.asl.json': TASK,
    'store-keyed.batch.json': { safeToRunAgain: true, reason: 'test: the item is keyed by the event id' },
    'nested.asl.json': { StartAt: 'P', States: { P: { Type: 'Parallel', Branches: [TASK], End: true } } },
    [`${LONG}.asl.json`]: PASS,
  });
  const s = synth({ stackName: 'Flowgate10' }, { flowsDir: dir });

  it('a flow with a Task (nested ones too) gets a batch state machine only when its batch.json says it is safe to run again; one whose batch name would pass 80 characters gets none', () => {
    expect(Object.keys(s.stack.flows.batchStateMachines).sort()).toEqual(['echo', 'store-keyed']);
    expect(stateMachineNames(s)).toContain(`Flowgate10-flow-${LONG}`);
  });

  it('the flow worker is told only those, and none of the others', () => {
    expect(workerEnvironment(s).FLOW_BATCH_NAMES).toBe('echo,store-keyed');
  });

  it.each([
    [{ safeToRunAgain: true }, 'no reason'],
    [{ safeToRunAgain: 'yes', reason: 'r' }, 'not a boolean'],
    [{ safeToRunAgain: true, reason: 'r', idempotent: true }, 'an unknown field'],
  ])('a batch.json of %j (%s) fails synth, naming the file', (declaration, _why) => {
    const bad = flowsFolder({ 'store.asl.json': TASK, 'store.batch.json': declaration });
    expect(() => synth({}, { flowsDir: bad })).toThrow(`flow batch declaration ${join(bad, 'store.batch.json')} must be {"safeToRunAgain": true or false`);
  });
});
