import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {  type CfnElement, type Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import type { IConstruct } from 'constructs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { totpSecretContext } from '../../functions/domain/accounts/index.js';
import { signingSecretContext } from '../../functions/domain/webhooks/trigger-lookup.js';
import { FUNCTIONS, ROUTES, TAGS, type FunctionName, type FunctionSpec } from '../../functions/manifest.js';
import { listFlowNames } from '../../lib/flow-files.js';
import { synth, type Synthesized } from '../support/synth.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

type Resource = { Type: string; Properties: Record<string, any> };
type Statement = { Effect: string; Action: string | string[]; Resource: unknown; Condition?: Record<string, Record<string, unknown>> };

const functionEntries = Object.entries(FUNCTIONS) as [FunctionName, FunctionSpec][];
const asArray = <T>(value: T | T[]): T[] => (Array.isArray(value) ? value : [value]);
const idOf = (stack: Stack, construct: IConstruct) => stack.getLogicalId(construct.node.defaultChild as CfnElement);
const resourcesOfType = (template: Template, type: string) => template.findResources(type) as Record<string, Resource>;

/** Whether a CloudFormation value points at a logical id through `Ref` or `Fn::GetAtt`. */
function references(value: unknown, id: string): boolean {
  if (Array.isArray(value)) return value.some((v) => references(v, id));
  if (!value || typeof value !== 'object') return false;
  return Object.entries(value).some(([key, inner]) =>
    (key === 'Ref' && inner === id) || (key === 'Fn::GetAtt' && (inner as string[])[0] === id) || references(inner, id));
}

/** Every statement of the inline policies attached to a role. */
function roleStatements(s: Synthesized, roleId: string): Statement[] {
  return Object.values(resourcesOfType(s.template, 'AWS::IAM::Policy'))
    .filter((policy) => references(policy.Properties.Roles, roleId))
    .flatMap((policy) => policy.Properties.PolicyDocument.Statement as Statement[]);
}

const environmentOf = (s: Synthesized, name: FunctionName): Record<string, unknown> =>
  resourcesOfType(s.template, 'AWS::Lambda::Function')[idOf(s.stack, s.stack.functions[name].function)]!.Properties.Environment.Variables;

describe('least privilege: each role may send only what the handlers send', () => {
  let s: Synthesized;
  beforeAll(() => {
    s = synth();
  });

  it('no function may Scan, read streams, describe tables; only the functions that keep executions, the sweeper and the streams function write in batches, and only the triggers and streams functions read in batches', () => {
    const dynamoActions = new Map<FunctionName, string[]>(functionEntries.map(([name]) => [name,
      roleStatements(s, idOf(s.stack, s.stack.functions[name].role)).flatMap((st) => asArray(st.Action)).filter((a) => a.startsWith('dynamodb:'))]));
    const all = [...dynamoActions.values()].flat();
    expect(all.length).toBeGreaterThan(0);
    for (const action of ['dynamodb:Scan', 'dynamodb:DescribeTable', 'dynamodb:ConditionCheckItem', 'dynamodb:GetRecords', 'dynamodb:GetShardIterator', 'dynamodb:DescribeStream', 'dynamodb:ListStreams']) {
      expect(all, action).not.toContain(action);
    }
    // A publish writes its messages (sequences it alone owns) in batches, and retention deletes what it dropped; the
    // execution records, requests and outputs are unconditional puts, coalesced into batches (batched-puts.ts).
    const batchWriters = new Set<FunctionName>(['kvSweeper', 'streams', 'webhook', 'flowWorker', 'triggers']);
    for (const [name, actions] of dynamoActions) expect(actions.includes('dynamodb:BatchWriteItem'), name).toBe(batchWriters.has(name));
    // The execution list by event id reads the records the event's requests name, and outputs kept aside, in batches
    // (a consumer's fetch reads its claimed messages' packed items with a Query, not a batch read); an ack looks up
    // which of its isolated sequences are pending in one batch read before deleting only those.
    for (const [name, actions] of dynamoActions) expect(actions.includes('dynamodb:BatchGetItem'), name).toBe(name === 'triggers' || name === 'streams');
    // The receiver reads a trigger and nothing else of that table.
    expect(dynamoActions.get('webhook')).not.toContain('dynamodb:Query');
  });

  it('a function may read the auth table exactly when it serves a route that accepts X-Api-Key or manages keys', () => {
    // Key management (the apiKeys function, and admin keys in accounts) takes users' tokens only, yet stores keys.
    const acceptingApiKeys = new Set([...ROUTES.filter((r) => r.auth === 'gateway' || r.auth === 'api_key' || r.tag === TAGS.apiKeys).map((r) => r.fn)]);
    const authTableId = idOf(s.stack, s.stack.data.tables.auth);
    for (const [name] of functionEntries) {
      const statements = roleStatements(s, idOf(s.stack, s.stack.functions[name].role)).filter((st) => references(st.Resource, authTableId));
      expect(statements.length > 0, name).toBe(acceptingApiKeys.has(name));
      expect('AUTH_TABLE' in environmentOf(s, name), name).toBe(acceptingApiKeys.has(name));
    }
    // The accounts function takes an API key (an admin one) only for the account's view of its users' factors; never to change one.
    expect(ROUTES.filter((r) => r.fn === 'accounts' && r.auth !== 'bearer' && r.auth !== 'none').map((r) => r.operationId).sort()).toEqual(['adminListUserFactors']);
    // No key management accepts a key.
    expect(ROUTES.filter((r) => r.tag === TAGS.apiKeys && r.auth !== 'bearer')).toEqual([]);
  });

  it('every route that accepts an API key names the scope it needs, and the admin routes need admin', () => {
    expect(ROUTES.filter((r) => (r.auth === 'gateway' || r.auth === 'api_key') && !r.scope).map((r) => r.operationId)).toEqual([]);
    expect(ROUTES.filter((r) => r.scope === 'admin').map((r) => r.operationId).sort()).toEqual(['adminListUserFactors', 'adminResetUserFactors', 'createAdminApiKey']);
  });

  it('the Cognito pool has the administrators\' group ADMIN_GROUP names (default, and as context sets it)', () => {
    const groups = (t: Template) => Object.values(resourcesOfType(t, 'AWS::Cognito::UserPoolGroup')).map((g) => g.Properties.GroupName);
    expect(groups(s.template)).toEqual(['flowgate-admins']);
    expect(groups(synth({ adminGroup: 'ops-admins' }).template)).toEqual(['ops-admins']);
    expect(() => synth({ adminGroup: 'two words' })).toThrow(/adminGroup/);
  });

  it.each(functionEntries.filter(([, spec]) => spec.secretsKey))('%s may use the secrets key only for the purposes the manifest gives it', (name, spec) => {
    const keyId = idOf(s.stack, s.stack.secretsKey.key);
    const onKey = roleStatements(s, idOf(s.stack, s.stack.functions[name].role)).filter((st) => references(st.Resource, keyId));
    expect(onKey).toHaveLength(1);
    expect(onKey[0]).toMatchObject({
      Effect: 'Allow',
      // IAM sorts a statement's actions.
      Action: ((actions: string[]) => (actions.length === 1 ? actions[0] : actions.sort()))(spec.secretsKey!.operations.map((operation) => (operation === 'encrypt' ? 'kms:Encrypt' : 'kms:Decrypt'))),
      Condition: { StringEquals: { 'kms:EncryptionContext:purpose': [...spec.secretsKey!.purposes] } },
    });
  });

  it('the purposes granted are the ones the domain seals with: a seal of another kind is refused', () => {
    const purposesOf = (name: FunctionName) => (FUNCTIONS[name] as FunctionSpec).secretsKey?.purposes ?? [];
    const totp = totpSecretContext('user-1').purpose;
    const signing = signingSecretContext({ account_id: 'acct-1', id: 'trigger-1' }).purpose;
    expect(purposesOf('accounts')).toEqual([totp]);
    expect(purposesOf('triggers')).toEqual([signing]);
    expect(purposesOf('webhook')).toEqual([signing]);
    expect(totp).not.toBe(signing);
  });

  it('the secrets key has an alias named after the stack', () => {
    const aliases = Object.values(resourcesOfType(s.template, 'AWS::KMS::Alias')).filter((alias) => String(alias.Properties.AliasName).endsWith('-secrets'));
    expect(aliases).toHaveLength(1);
    expect(aliases[0]!.Properties).toEqual({
      AliasName: `alias/${s.stack.stackName}-secrets`,
      TargetKeyId: { 'Fn::GetAtt': [idOf(s.stack, s.stack.secretsKey.key), 'Arn'] },
    });
  });

  it('FLOW_NAMES reaches exactly the functions whose manifest entry reads it', () => {
    const readers = functionEntries.filter(([, spec]) => spec.readsFlowNames).map(([name]) => name);
    expect(readers).toEqual(['triggers']);
    for (const [name, spec] of functionEntries) {
      expect(environmentOf(s, name).FLOW_NAMES, name).toBe(spec.readsFlowNames ? listFlowNames(resolve(ROOT, 'flows')).join(',') : undefined);
    }
  });
});

describe('limits a growing list of flows hits: Lambda\'s 4 KB of environment variables', () => {
  let flowsDir: string;
  /** Flow names of the longest kind the trigger API accepts (64 characters). */
  const longName = (i: number) => `customer-subscription-lifecycle-events-from-billing-provider-${String(i).padStart(3, '0')}`;
  beforeAll(() => {
    flowsDir = mkdtempSync(join(tmpdir(), 'flowgate-many-flows-'));
  });
  afterAll(() => {
    rmSync(flowsDir, { recursive: true, force: true });
  });
  const addFlows = (from: number, to: number) => {
    for (let i = from; i < to; i++) copyFileSync(resolve(ROOT, 'flows/echo.asl.json'), join(flowsDir, `${longName(i)}.asl.json`));
  };

  // Two synths of 30 and 45 state machines: slow on a shared machine (over 120 s under load), so a wide bound.
  it('30 flows of long names fit; 45 fail synth, naming the function and how large its environment would be', () => {
    expect(longName(0)).toHaveLength(64);
    addFlows(0, 30);
    expect(() => synth({}, { flowsDir })).not.toThrow();

    addFlows(30, 45);
    let message = '';
    try {
      synth({}, { flowsDir });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/function triggers: its environment variables can take (\d+) bytes once deployed, over Lambda's limit of 4096 bytes/);
    const bytes = Number(/can take (\d+) bytes/.exec(message)![1]);
    // At least the flow names themselves, comma-separated.
    expect(bytes).toBeGreaterThan(45 * 65);
    expect(message).toMatch(/Largest \(bytes\): FLOW_NAMES \d+/);
    // Only the function that reads the names carries them, so no other function is over.
    expect(message).not.toMatch(/function (system|apiKeys|kv|kvSweeper|accounts|webhook|flowWorker):/);
  }, 300_000);
});

describe('an external token issuer', () => {
  const external = { authIssuer: 'https://issuer.example.com/', authJwksUrl: 'https://issuer.example.com/.well-known/jwks.json' };

  it('without authAudience fails synth: it would accept any token the issuer signs, for any app', () => {
    expect(() => synth(external)).toThrow(/context authAudience is required with authIssuer/);
  });
});
