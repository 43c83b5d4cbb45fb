import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { afterAll, describe, expect, it } from 'vitest';
import { buildServiceApp } from '../../lib/app.js';
import { listFlowNames } from '../../lib/flow-files.js';
import { functionReferences, listFlowFunctions } from '../../lib/flow-functions.js';
import { checkFlowPermissions } from '../../lib/flow-permissions.js';
import { testApp } from '../support/synth.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const FLOWS = resolve(ROOT, 'flows');

interface Resource { Type: string; Properties: Record<string, any> }

const folders: string[] = [];
afterAll(() => {
  for (const dir of folders.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A flows folder holding `echo` plus the given files (path → content), as a deployment would. */
function flowsFolder(files: Record<string, unknown>): string {
  const dir = mkdtempSync(join(tmpdir(), 'flowgate-flow-tasks-'));
  folders.push(dir);
  copyFileSync(join(FLOWS, 'echo.asl.json'), join(dir, 'echo.asl.json'));
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), typeof content === 'string' ? content : JSON.stringify(content));
  }
  return dir;
}

/** The app as `cdk synth` builds it (bundling skipped), over a folder of flows. */
function synth(flowsDir?: string, context: Record<string, unknown> = {}) {
  return synthApp(flowsDir, context).resources;
}
function synthApp(flowsDir?: string, context: Record<string, unknown> = {}) {
  const app = testApp(context);
  const stack = buildServiceApp(app, { flowsDir });
  return { app, resources: Template.fromStack(stack).toJSON().Resources as Record<string, Resource> };
}

const ofType = (resources: Record<string, Resource>, type: string) => Object.entries(resources).filter(([, r]) => r.Type === type);

/** Logical id of each flow function by name, from its description `Flowgate flow function <name> (...)`. */
function flowFunctionIds(resources: Record<string, Resource>): Record<string, string[]> {
  const ids: Record<string, string[]> = {};
  for (const [id, r] of ofType(resources, 'AWS::Lambda::Function')) {
    const name = /^Flowgate flow function (\S+) /.exec(String(r.Properties.Description))?.[1];
    if (name) (ids[name] ??= []).push(id);
  }
  return ids;
}

/** What a flow's state machine role may do, as "action resource" pairs, leaving out the logging and tracing CDK adds. */
function flowRoleGrants(resources: Record<string, Resource>, flow: string): { machine: Resource; grants: string[] } {
  const [, machine] = ofType(resources, 'AWS::StepFunctions::StateMachine').find(([, r]) => String(r.Properties.StateMachineName).endsWith(`-flow-${flow}`))!;
  const roleId = machine.Properties.RoleArn['Fn::GetAtt'][0] as string;
  const grants: string[] = [];
  for (const [, policy] of ofType(resources, 'AWS::IAM::Policy')) {
    if (!policy.Properties.Roles.some((role: any) => role.Ref === roleId)) continue;
    for (const statement of policy.Properties.PolicyDocument.Statement) {
      for (const action of [statement.Action].flat() as string[]) {
        if (action.startsWith('logs:') || action.startsWith('xray:')) continue;
        for (const resource of [statement.Resource].flat()) grants.push(`${action} ${typeof resource === 'string' ? resource : JSON.stringify(resource)}`);
      }
    }
  }
  return { machine, grants: grants.sort() };
}

const invokeGrant = (logicalId: string) => `lambda:InvokeFunction ${JSON.stringify({ 'Fn::GetAtt': [logicalId, 'Arn'] })}`;

describe('the shipped flows and their functions', () => {
  const resources = synth();
  const ids = flowFunctionIds(resources);

  it('each project function (flows/functions/*.ts) is deployed once, Node.js 22 on arm64', () => {
    const names = listFlowFunctions(FLOWS).map((f) => f.name);
    expect(names).toEqual(['notify', 'summarize', 'twilio-reply']);
    for (const name of names) {
      expect(ids[name], name).toHaveLength(1);
      const fn = resources[ids[name]![0]!]!;
      expect(fn.Properties).toMatchObject({ Runtime: 'nodejs22.x', Architectures: ['arm64'], Handler: 'index.handler' });
    }
  });

  it('each flow\'s role may invoke exactly the functions its definition names, through the substitution it declares', () => {
    for (const flow of listFlowNames(FLOWS)) {
      const named = functionReferences(readFileSync(join(FLOWS, `${flow}.asl.json`), 'utf8'));
      const { machine, grants } = flowRoleGrants(resources, flow);
      expect(grants, flow).toEqual(named.map((name) => invokeGrant(ids[name]![0]!)).sort());
      const substitutions = machine.Properties.DefinitionSubstitutions;
      expect(substitutions, flow).toEqual(named.length === 0 ? undefined : Object.fromEntries(named.map((name) => [`Function.${name}`, { 'Fn::GetAtt': [ids[name]![0], 'Arn'] }])));
    }
    expect(functionReferences(readFileSync(join(FLOWS, 'summarize.asl.json'), 'utf8'))).toEqual(['summarize']);
  });

  it('notify gets NOTIFY_URL from context notifyUrl, and only notify', () => {
    const withUrl = synth(undefined, { notifyUrl: 'https://hooks.slack.com/services/T0/B0/x' });
    const withIds = flowFunctionIds(withUrl);
    expect(withUrl[withIds.notify![0]!]!.Properties.Environment.Variables.NOTIFY_URL).toBe('https://hooks.slack.com/services/T0/B0/x');
    expect(withUrl[withIds.summarize![0]!]!.Properties.Environment?.Variables.NOTIFY_URL).toBeUndefined();
  });
});

describe('permissions files', () => {
  const TABLE = 'arn:aws:dynamodb:us-east-1:111111111111:table/orders';
  const QUEUE = 'arn:aws:sqs:us-east-1:111111111111:orders';
  const TASK = { StartAt: 'Put', States: { Put: { Type: 'Task', Resource: 'arn:aws:states:::dynamodb:putItem', Parameters: { TableName: 'orders', 'Item.$': '$.item' }, End: true } } };

  it('a flow\'s role holds exactly what its file declares; other flows hold none of it', () => {
    const dir = flowsFolder({
      'store.asl.json': TASK,
      'store.permissions.json': [
        { actions: ['dynamodb:PutItem'], resources: [TABLE] },
        { actions: ['sqs:SendMessage'], resources: [QUEUE] },
        { actions: ['events:PutEvents'], resources: ['*'], allowWildcardResource: true, reason: 'test: the default bus' },
        { actions: ['sqs:SendMessage'], resources: [`${QUEUE}-*`], allowWildcardResource: true, reason: 'test: one queue per tenant, created later' },
      ],
    });
    const { app, resources } = synthApp(dir);
    expect(flowRoleGrants(resources, 'store').grants).toEqual([`dynamodb:PutItem ${TABLE}`, 'events:PutEvents *', `sqs:SendMessage ${QUEUE}`, `sqs:SendMessage ${QUEUE}-*`]);
    expect(flowRoleGrants(resources, 'echo').grants).toEqual([]);
    // A wildcard the file allows, with its reason, is acknowledged to cdk-nag, which otherwise fails the synth.
    expect(new AwsSolutionsChecks(undefined).validateScope(app).violations).toEqual([]);
  });

  it('a permissions file with a "*" action fails synth, naming the file', () => {
    const dir = flowsFolder({ 'store.asl.json': TASK, 'store.permissions.json': [{ actions: ['dynamodb:*'], resources: [TABLE] }] });
    expect(() => synth(dir)).toThrow(`flow permissions ${join(dir, 'store.permissions.json')}, entry 1: action "dynamodb:*" has a "*"`);
  });

  it('a "*" resource without allowWildcardResource and a reason fails synth, naming the file', () => {
    const dir = flowsFolder({ 'store.asl.json': TASK, 'store.permissions.json': [{ actions: ['dynamodb:PutItem'], resources: ['*'], allowWildcardResource: true }] });
    expect(() => synth(dir)).toThrow(`flow permissions ${join(dir, 'store.permissions.json')}, entry 1: resource "*" has a "*"`);
  });

  it.each([
    ['not a list', { actions: ['sqs:SendMessage'], resources: [QUEUE] }, /must be a JSON list/],
    ['no resources', [{ actions: ['sqs:SendMessage'] }], /"resources" must be a non-empty list/],
    ['a bare "*" action', [{ actions: ['*'], resources: [QUEUE] }], /action "\*" has a "\*"/],
    ['an unknown field', [{ actions: ['sqs:SendMessage'], resources: [QUEUE], effect: 'Deny' }], /unknown field\(s\) effect/],
  ])('refuses %s', (_, list, message) => {
    expect(() => checkFlowPermissions('x.permissions.json', list)).toThrow(message);
  });
});

describe('function names in definitions', () => {
  it('a flow naming an unknown function fails synth, naming the file and the function', () => {
    const dir = flowsFolder({
      'calls.asl.json': { StartAt: 'Call', States: { Call: { Type: 'Task', Resource: 'arn:aws:states:::lambda:invoke', Parameters: { FunctionName: '${Function.missing}', 'Payload.$': '$' }, End: true } } },
    });
    expect(() => synth(dir)).toThrow(`flow definition ${join(dir, 'calls.asl.json')} names function "missing"`);
  });

  it('a function no flow names is deployed, and no flow may invoke it', () => {
    const dir = flowsFolder({ 'functions/idle.ts': 'export const handler = async () => null;\n' });
    const resources = synth(dir);
    expect(flowFunctionIds(resources).idle).toHaveLength(1);
    expect(flowRoleGrants(resources, 'echo').grants).toEqual([]);
  });
});
