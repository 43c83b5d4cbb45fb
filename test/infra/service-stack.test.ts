import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { App, Stack, Validations, type CfnElement } from 'aws-cdk-lib';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { Queue } from 'aws-cdk-lib/aws-sqs';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  DEFAULT_ROUTE,
  FUNCTIONS,
  QUEUES,
  BUCKET_OPERATIONS,
  ROUTES,
  TABLES,
  TAGS,
  routeKey,
  type FunctionName,
  type FunctionSpec,
  type QueueName,
  type TableAccess,
  type TableName,
} from '../../functions/manifest.js';
import { buildServiceApp } from '../../lib/app.js';
import { DataStores } from '../../lib/constructs/data-stores.js';
import type { ServiceFunction } from '../../lib/constructs/service-function.js';
import { listFlowNames } from '../../lib/flow-files.js';
import { domainPrefixStackPart } from '../../lib/constructs/identity.js';
import { synth, testApp, type Synthesized } from '../support/synth.js';
import { listFlowFunctions } from '../../lib/flow-functions.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const FLOW_NAMES = listFlowNames(resolve(ROOT, 'flows'));
/** The flows with a batch state machine: notify has a Task and is not declared safe to run again (test/infra/flow-batches.test.ts). */
const BATCHED_FLOW_NAMES = FLOW_NAMES.filter((flow) => flow !== 'notify');

type Resource = { Type: string; Properties: Record<string, any>; DeletionPolicy?: string; UpdateReplacePolicy?: string };
type Statement = { Effect: string; Action: string | string[]; Resource: unknown };

const functionEntries = Object.entries(FUNCTIONS) as [FunctionName, FunctionSpec][];
const TUNABLE_VARIABLES = ['WEBHOOK_MAX_BODY_BYTES', 'WAIT_TIMEOUT_MS', 'TRIGGER_CACHE_TTL_MS', 'TOTP_ISSUER', 'MFA_RETIRED_SIGNING_KEY_IDS'];
const tableEntries = Object.entries(TABLES) as [TableName, (typeof TABLES)[TableName]][];
const queueEntries = Object.entries(QUEUES) as [QueueName, (typeof QUEUES)[QueueName]][];
const asArray = <T>(value: T | T[]): T[] => (Array.isArray(value) ? value : [value]);
const idOf = (stack: Stack, construct: IConstruct) => stack.getLogicalId(construct.node.defaultChild as CfnElement);

/** Logical ids a CloudFormation value points at through `Ref` or `Fn::GetAtt`. */
function referencedIds(value: unknown, into = new Set<string>()): Set<string> {
  if (Array.isArray(value)) value.forEach((v) => referencedIds(v, into));
  else if (value && typeof value === 'object') {
    for (const [key, inner] of Object.entries(value)) {
      if (key === 'Ref' && typeof inner === 'string' && !inner.startsWith('AWS::')) into.add(inner);
      else if (key === 'Fn::GetAtt') into.add((inner as string[])[0]!);
      else referencedIds(inner, into);
    }
  }
  return into;
}

function resourcesOfType(template: Template, type: string): Record<string, Resource> {
  return template.findResources(type) as Record<string, Resource>;
}

function functionResource(s: Synthesized, name: FunctionName): Resource {
  return resourcesOfType(s.template, 'AWS::Lambda::Function')[idOf(s.stack, s.stack.functions[name].function)]!;
}

const environmentOf = (s: Synthesized, name: FunctionName): Record<string, unknown> =>
  functionResource(s, name).Properties.Environment?.Variables ?? {};

/** Every statement of the inline policies attached to a role. */
function roleStatements(s: Synthesized, roleId: string): Statement[] {
  return Object.values(resourcesOfType(s.template, 'AWS::IAM::Policy'))
    .filter((policy) => asArray(policy.Properties.Roles).some((role: unknown) => referencedIds(role).has(roleId)))
    .flatMap((policy) => policy.Properties.PolicyDocument.Statement as Statement[]);
}

/** For a role: each resource it may touch (by logical id) and the actions allowed on it. */
function grantsOf(s: Synthesized, roleId: string): Map<string, Set<string>> {
  const grants = new Map<string, Set<string>>();
  for (const statement of roleStatements(s, roleId)) {
    expect(statement.Effect).toBe('Allow');
    for (const target of referencedIds(statement.Resource)) {
      const actions = grants.get(target) ?? new Set<string>();
      asArray(statement.Action).forEach((a) => actions.add(a));
      grants.set(target, actions);
    }
  }
  return grants;
}

const SQS_CONSUME = ['sqs:ReceiveMessage', 'sqs:DeleteMessage', 'sqs:ChangeMessageVisibility'];

const tokenRouteFunctions = new Set(ROUTES.filter((r) => r.auth !== 'none').map((r) => r.fn));
const triggerRouteFunctions = new Set(ROUTES.filter((r) => r.tag === TAGS.triggers).map((r) => r.fn));

describe('the service stack, from functions/manifest.ts', () => {
  let s: Synthesized;
  beforeAll(() => {
    s = synth();
  });

  describe('functions', () => {
    it('has one Lambda function per FUNCTIONS entry, one per flow function (flows/functions/*.ts) and no other', () => {
      s.template.resourceCountIs('AWS::Lambda::Function', functionEntries.length + listFlowFunctions(resolve(ROOT, 'flows')).length);
      expect(Object.keys(s.stack.functions).sort()).toEqual(Object.keys(FUNCTIONS).sort());
    });

    it.each(functionEntries)('%s runs on Node.js 22, arm64 unless the manifest says x86_64, with the manifest\'s memory and timeout', (name, spec) => {
      const { Properties: p } = functionResource(s, name);
      expect(p.Runtime).toBe('nodejs22.x');
      // x86_64 only where a native module's installed binary needs it (the search function's engine).
      expect(p.Architectures).toEqual([spec.architecture ?? 'arm64']);
      expect(p.Handler).toBe('index.handler');
      expect(p.MemorySize).toBe(spec.memoryMb);
      expect(p.Timeout).toBe(spec.timeoutSeconds);
    });

    it.each(functionEntries)('%s logs JSON into its own log group, which has a retention', (name) => {
      const { Properties: p } = functionResource(s, name);
      const logGroupId = idOf(s.stack, s.stack.functions[name].logGroup);
      expect(p.LoggingConfig).toMatchObject({ LogFormat: 'JSON', LogGroup: { Ref: logGroupId } });
      expect(resourcesOfType(s.template, 'AWS::Logs::LogGroup')[logGroupId]!.Properties.RetentionInDays).toBeGreaterThan(0);
    });
  });

  describe('tables', () => {
    it('has one table per TABLES entry', () => {
      // And the search indexes' commit table, whose keys are LanceDB's (lib/constructs/search-storage.ts).
      s.template.resourceCountIs('AWS::DynamoDB::Table', tableEntries.length + 1);
    });

    it.each(tableEntries)('%s is on demand, with PITR, encryption, pk/sk keys and the manifest\'s TTL, and is retained', (name, spec) => {
      const table = resourcesOfType(s.template, 'AWS::DynamoDB::Table')[idOf(s.stack, s.stack.data.tables[name])]!;
      expect(table.Properties).toMatchObject({
        BillingMode: 'PAY_PER_REQUEST',
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
        SSESpecification: { SSEEnabled: true },
        KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }, { AttributeName: 'sk', KeyType: 'RANGE' }],
        DeletionProtectionEnabled: true,
      });
      if (spec.ttlAttribute) expect(table.Properties.TimeToLiveSpecification).toEqual({ AttributeName: spec.ttlAttribute, Enabled: true });
      else expect(table.Properties.TimeToLiveSpecification).toBeUndefined();
      expect(table.DeletionPolicy).toBe('Retain');
      expect(table.UpdateReplacePolicy).toBe('Retain');
    });

    it('the kv table has the byOwner index the bucket listing queries, and the kv function may Query it and nothing more', () => {
      const kvId = idOf(s.stack, s.stack.data.tables.kv);
      const table = resourcesOfType(s.template, 'AWS::DynamoDB::Table')[kvId]!;
      const { partitionKey, sortKey } = TABLES.kv.indexes.byOwner;
      expect(table.Properties.GlobalSecondaryIndexes).toEqual([{
        IndexName: 'byOwner',
        KeySchema: [{ AttributeName: partitionKey, KeyType: 'HASH' }, { AttributeName: sortKey, KeyType: 'RANGE' }],
        Projection: { ProjectionType: 'ALL' },
      }]);
      for (const [name, spec] of tableEntries.filter(([n]) => n !== 'kv')) expect((resourcesOfType(s.template, 'AWS::DynamoDB::Table')[idOf(s.stack, s.stack.data.tables[name])]!).Properties.GlobalSecondaryIndexes, `${name} ${spec.env}`).toBeUndefined();
      const onIndexes = (name: FunctionName) => roleStatements(s, idOf(s.stack, s.stack.functions[name].role))
        .filter((st) => JSON.stringify(st.Resource).includes('/index/'));
      expect(onIndexes('kv')).toEqual([{
        Effect: 'Allow',
        Action: 'dynamodb:Query',
        Resource: { 'Fn::Join': ['', [{ 'Fn::GetAtt': [kvId, 'Arn'] }, '/index/byOwner']] },
      }]);
      for (const [name] of functionEntries.filter(([n]) => n !== 'kv')) expect(onIndexes(name), name).toEqual([]);
    });

    it('a function that names an index its table does not have fails the synth', () => {
      const stack = new Stack(new App(), 'IndexCheck');
      const data = new DataStores(stack, 'Data', { tables: TABLES, removal: 'destroy' });
      const role = new Role(stack, 'reader', { assumedBy: new ServicePrincipal('lambda.amazonaws.com') });
      expect(() => data.connect(role as unknown as ServiceFunction, { kv: ['Query'] }, { kv: ['byNothing'] })).toThrow(/index byNothing that table kv does not have/);
      expect(() => data.connect(role as unknown as ServiceFunction, { auth: ['Query'] }, { auth: ['byOwner'] })).toThrow(/table auth does not have/);
    });
  });

  describe('queues', () => {
    it('has one queue and one dead-letter queue per QUEUES entry', () => {
      s.template.resourceCountIs('AWS::SQS::Queue', queueEntries.length * 2);
    });

    it.each(queueEntries)('%s dead-letters after the manifest\'s maxReceiveCount and outlasts its consumer\'s timeout', (name, spec) => {
      const queues = resourcesOfType(s.template, 'AWS::SQS::Queue');
      const queue = queues[idOf(s.stack, s.stack.queues.queues[name])]!;
      const dlqId = idOf(s.stack, s.stack.queues.deadLetterQueues[name]);
      expect(queue.Properties.RedrivePolicy).toEqual({ deadLetterTargetArn: { 'Fn::GetAtt': [dlqId, 'Arn'] }, maxReceiveCount: spec.maxReceiveCount });
      expect(queue.Properties.VisibilityTimeout).toBeGreaterThanOrEqual(FUNCTIONS[spec.consumer].timeoutSeconds);
      // AWS's six times the consumer's timeout, and the batching window a message may wait in first.
      expect(queue.Properties.VisibilityTimeout).toBe(FUNCTIONS[spec.consumer].timeoutSeconds * 6 + ('batchingWindowSeconds' in spec ? spec.batchingWindowSeconds : 0));
      expect(queues[dlqId]!.Properties.MessageRetentionPeriod).toBe(14 * 24 * 3600);
    });

    it.each(queueEntries)('%s and its dead-letter queue are encrypted and refuse requests without TLS', (name) => {
      const policies = Object.values(resourcesOfType(s.template, 'AWS::SQS::QueuePolicy'));
      for (const q of [s.stack.queues.queues[name], s.stack.queues.deadLetterQueues[name]]) {
        const id = idOf(s.stack, q);
        expect(resourcesOfType(s.template, 'AWS::SQS::Queue')[id]!.Properties.SqsManagedSseEnabled).toBe(true);
        const policy = policies.find((p) => referencedIds(p.Properties.Queues).has(id));
        expect(policy?.Properties.PolicyDocument.Statement).toContainEqual(expect.objectContaining({
          Effect: 'Deny',
          Condition: { Bool: { 'aws:SecureTransport': 'false' } },
        }));
      }
    });

    it.each(queueEntries)('%s feeds its consumer in the manifest\'s batch size and batching window, reporting partial batch failures', (name, spec) => {
      const mappings = Object.values(resourcesOfType(s.template, 'AWS::Lambda::EventSourceMapping'))
        .filter((m) => referencedIds(m.Properties.EventSourceArn).has(idOf(s.stack, s.stack.queues.queues[name])));
      expect(mappings).toHaveLength(1);
      expect(mappings[0]!.Properties).toMatchObject({
        FunctionName: { Ref: idOf(s.stack, s.stack.functions[spec.consumer].function) },
        BatchSize: spec.batchSize,
        FunctionResponseTypes: ['ReportBatchItemFailures'],
      });
      // SQS's default is none: Lambda invokes as soon as one message is there.
      expect(mappings[0]!.Properties.MaximumBatchingWindowInSeconds).toBe('batchingWindowSeconds' in spec ? spec.batchingWindowSeconds : undefined);
    });
  });

  describe('flows', () => {
    it('has one express state machine per flow definition in flows/, and a batch state machine for each that may run again', () => {
      expect(FLOW_NAMES.length).toBeGreaterThan(0);
      expect(Object.keys(s.stack.flows.batchStateMachines).sort()).toEqual([...BATCHED_FLOW_NAMES].sort());
      s.template.resourceCountIs('AWS::StepFunctions::StateMachine', FLOW_NAMES.length + BATCHED_FLOW_NAMES.length);
    });

    it.each(BATCHED_FLOW_NAMES)('%s\'s batch state machine runs the flow\'s own states in a Map over the batch, with the flow\'s role', (flow) => {
      const machines = resourcesOfType(s.template, 'AWS::StepFunctions::StateMachine');
      const single = machines[idOf(s.stack, s.stack.flows.stateMachines[flow]!)]!;
      const batch = machines[idOf(s.stack, s.stack.flows.batchStateMachines[flow]!)]!;
      expect(batch.Properties).toMatchObject({
        StateMachineType: 'EXPRESS',
        StateMachineName: `${s.stack.stackName}-batch-${flow}`,
        RoleArn: single.Properties.RoleArn,
        LoggingConfiguration: { Level: 'ERROR', IncludeExecutionData: false },
      });
      const own = JSON.parse(readFileSync(resolve(ROOT, 'flows', `${flow}.asl.json`), 'utf8'));
      const branch = JSON.parse(batch.Properties.DefinitionString).States.FlowgateBatch.ItemProcessor.States.FlowgateBatchRun.Branches[0];
      expect(branch).toEqual({ StartAt: own.StartAt, States: own.States, ...(own.Comment !== undefined && { Comment: own.Comment }) });
    });

    it.each(FLOW_NAMES)('%s is express, named after the stack, logs its failed executions (not every event, not the data) and does not trace', (flow) => {
      const machine = resourcesOfType(s.template, 'AWS::StepFunctions::StateMachine')[idOf(s.stack, s.stack.flows.stateMachines[flow]!)]!;
      expect(machine.Properties).toMatchObject({
        StateMachineType: 'EXPRESS',
        StateMachineName: `${s.stack.stackName}-flow-${flow}`,
        LoggingConfiguration: { Level: 'ERROR', IncludeExecutionData: false },
        TracingConfiguration: { Enabled: false },
      });
      expect(JSON.parse(machine.Properties.DefinitionString)).toEqual(JSON.parse(readFileSync(resolve(ROOT, 'flows', `${flow}.asl.json`), 'utf8')));
    });

  });

  describe('HTTP API', () => {
    it('routes every ROUTES entry and $default to the function the manifest names', () => {
      const integrations = resourcesOfType(s.template, 'AWS::ApiGatewayV2::Integration');
      const routes = Object.values(resourcesOfType(s.template, 'AWS::ApiGatewayV2::Route'));
      const actual = Object.fromEntries(routes.map((route) => {
        const [integrationId] = referencedIds(route.Properties.Target);
        const integration = integrations[integrationId!]!;
        expect(integration.Properties).toMatchObject({ IntegrationType: 'AWS_PROXY', PayloadFormatVersion: '2.0' });
        return [route.Properties.RouteKey, [...referencedIds(integration.Properties.IntegrationUri)]];
      }));
      const fnId = (fn: FunctionName) => [idOf(s.stack, s.stack.functions[fn].function)];
      const expected = Object.fromEntries([
        ...ROUTES.map((route) => [routeKey(route), fnId(route.fn)]),
        [DEFAULT_ROUTE.routeKey, fnId(DEFAULT_ROUTE.fn)],
      ]);
      expect(actual).toEqual(expected);
    });

    it('serves the API reference page (GET /docs and its assets) from the system function, which touches no table, queue or key', () => {
      const integrations = resourcesOfType(s.template, 'AWS::ApiGatewayV2::Integration');
      const routes = Object.values(resourcesOfType(s.template, 'AWS::ApiGatewayV2::Route'));
      for (const key of ['GET /docs', 'GET /docs/{asset+}']) {
        const route = routes.find((r) => r.Properties.RouteKey === key);
        expect(route, key).toBeDefined();
        const [integrationId] = referencedIds(route!.Properties.Target);
        expect([...referencedIds(integrations[integrationId!]!.Properties.IntegrationUri)]).toEqual([idOf(s.stack, s.stack.functions.system.function)]);
      }
      expect(FUNCTIONS.system).toMatchObject({ tables: {}, sendsTo: [], servesConsole: true });
    });

    it('has no API Gateway authorizer: the handlers authenticate', () => {
      s.template.resourceCountIs('AWS::ApiGatewayV2::Authorizer', 0);
      for (const route of Object.values(resourcesOfType(s.template, 'AWS::ApiGatewayV2::Route'))) {
        expect(route.Properties.AuthorizationType ?? 'NONE').toBe('NONE');
      }
    });

    it('has a $default stage with throttling and JSON access logs that leave out paths and queries', () => {
      const [stage] = Object.values(resourcesOfType(s.template, 'AWS::ApiGatewayV2::Stage'));
      expect(stage!.Properties).toMatchObject({
        StageName: '$default',
        AutoDeploy: true,
        DefaultRouteSettings: { ThrottlingRateLimit: expect.any(Number), ThrottlingBurstLimit: expect.any(Number) },
        AccessLogSettings: { DestinationArn: expect.anything() },
      });
      const format = JSON.parse(stage!.Properties.AccessLogSettings.Format) as Record<string, string>;
      expect(Object.values(format)).toContain('$context.routeKey');
      for (const field of Object.values(format)) expect(field).not.toMatch(/\$context\.(path|resourcePath)|querystring/i);
    });

    it('outputs BaseUrl and WebhookUrl (<api url>/webhooks)', () => {
      const apiId = idOf(s.stack, s.stack.http.api);
      s.template.hasOutput('BaseUrl', { Value: { 'Fn::GetAtt': [apiId, 'ApiEndpoint'] } });
      s.template.hasOutput('WebhookUrl', { Value: { 'Fn::Join': ['', [{ 'Fn::GetAtt': [apiId, 'ApiEndpoint'] }, '/webhooks']] } });
    });
  });

  describe('IAM: each function may touch exactly what the manifest gives it', () => {
    it.each(functionEntries)('%s', (name, spec) => {
      const fn = s.stack.functions[name];
      const id = (construct: IConstruct) => idOf(s.stack, construct);
      const expected = new Map<string, (actions: Set<string>) => void>();
      const has = (...actions: string[]) => (set: Set<string>) => expect([...set]).toEqual(expect.arrayContaining(actions));
      const exactly = (...actions: string[]) => (set: Set<string>) => expect([...set].sort()).toEqual([...actions].sort());
      const hasNone = (...actions: string[]) => (set: Set<string>) => actions.forEach((a) => expect(set).not.toContain(a));

      expected.set(id(fn.logGroup), exactly('logs:CreateLogStream', 'logs:PutLogEvents'));
      for (const [table, access] of Object.entries(spec.tables) as [TableName, TableAccess][]) {
        expected.set(id(s.stack.data.tables[table]), exactly(...access.map((operation) => `dynamodb:${operation}`)));
      }
      const consumes = queueEntries.filter(([, q]) => q.consumer === name).map(([q]) => q);
      for (const queue of new Set<QueueName>([...spec.sendsTo, ...consumes])) {
        const sends = spec.sendsTo.includes(queue);
        const consumesThis = consumes.includes(queue);
        expected.set(id(s.stack.queues.queues[queue]), (set) => {
          if (sends) has('sqs:SendMessage')(set);
          else hasNone('sqs:SendMessage')(set);
          if (consumesThis) has(...SQS_CONSUME)(set);
          else hasNone(...SQS_CONSUME)(set);
        });
      }
      if (spec.secretsKey) {
        expected.set(id(s.stack.secretsKey.key), exactly(...spec.secretsKey.operations.map((operation) => (operation === 'encrypt' ? 'kms:Encrypt' : 'kms:Decrypt'))));
      }
      if ('signsMfaTokens' in spec) expected.set(id(s.stack.mfaSigningKey.key), exactly('kms:Sign', 'kms:GetPublicKey'));
      if (spec.objectsBucket) {
        expected.set(id(s.stack.objectStorage.bucket), exactly(...new Set(spec.objectsBucket.map((operation) => BUCKET_OPERATIONS[operation]))));
      }
      // The search function: its prefix of the bucket (objects, and listing under it) and its commit table.
      if ('nativeModules' in spec) {
        expected.set(id(s.stack.objectStorage.bucket), exactly('s3:GetObject', 's3:PutObject', 's3:DeleteObject', 's3:ListBucket'));
        expected.set(id(s.stack.searchStorage.commitTable), exactly('dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:Query'));
      }
      if (spec.runsFlows) {
        for (const machine of Object.values(s.stack.flows.stateMachines)) expected.set(id(machine), exactly('states:StartSyncExecution'));
      }
      // The receiver invokes the flow worker directly for a quiet trigger (test/infra/direct-flow-path.test.ts).
      if (name === 'webhook') expected.set(id(s.stack.functions.flowWorker.function), exactly('lambda:InvokeFunction'));
      // The flow worker alone runs the flows' batch state machines.
      if (name === 'flowWorker') {
        for (const machine of Object.values(s.stack.flows.batchStateMachines)) expected.set(id(machine), exactly('states:StartSyncExecution'));
        // It dead-letters an event itself after its last failed attempt (test/infra/flow-retries.test.ts).
        expected.set(id(s.stack.queues.deadLetterQueues.flowEvents), exactly('sqs:SendMessage'));
      }

      const actual = grantsOf(s, id(fn.role));
      expect([...actual.keys()].sort()).toEqual([...expected.keys()].sort());
      for (const [target, check] of expected) check(actual.get(target)!);
      for (const statement of roleStatements(s, id(fn.role))) expect(statement.Resource).not.toBe('*');
    });

    it('the streams function touches the kv table, with the batch writes its log needs and the batch reads an ack needs, and the sweep queue; no bucket or key', () => {
      const fn = s.stack.functions.streams;
      const grants = grantsOf(s, idOf(s.stack, fn.role));
      const kvTable = idOf(s.stack, s.stack.data.tables.kv);
      expect([...grants.get(kvTable)!].sort()).toEqual(['dynamodb:BatchGetItem', 'dynamodb:BatchWriteItem', 'dynamodb:DeleteItem', 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:Query', 'dynamodb:UpdateItem']);
      expect([...grants.keys()].sort()).toEqual([idOf(s.stack, fn.logGroup), idOf(s.stack, s.stack.data.tables.auth), kvTable, idOf(s.stack, s.stack.queues.queues.kvSweep)].sort());
      expect([...grants.get(idOf(s.stack, s.stack.queues.queues.kvSweep))!]).toContain('sqs:SendMessage');
    });

    it('no policy allows "*" or a whole service ("dynamodb:*"), and no role has a managed policy', () => {
      const documents = [
        ...Object.values(resourcesOfType(s.template, 'AWS::IAM::Policy')).map((p) => p.Properties.PolicyDocument),
        ...Object.values(resourcesOfType(s.template, 'AWS::IAM::Role')).flatMap((r) => (r.Properties.Policies ?? []).map((p: any) => p.PolicyDocument)),
      ];
      const actions = documents.flatMap((d) => (d.Statement as Statement[]).flatMap((st) => asArray(st.Action)));
      expect(actions.length).toBeGreaterThan(0);
      for (const action of actions) expect(action).not.toMatch(/^\*$|^[a-z0-9-]+:\*$/);
      for (const role of Object.values(resourcesOfType(s.template, 'AWS::IAM::Role'))) expect(role.Properties.ManagedPolicyArns).toBeUndefined();
    });
  });

  describe('environment: each function gets the settings for what it may touch', () => {
    it.each(functionEntries)('%s', (name, spec) => {
      const env = environmentOf(s, name);
      for (const [table, { env: variable }] of tableEntries) expect(variable in env, variable).toBe(table in spec.tables);
      // Senders get a queue's URL to send to; its consumer to set when a failed message comes back.
      for (const [queue, { env: variable, consumer }] of queueEntries) expect(variable in env, variable).toBe(spec.sendsTo.includes(queue) || consumer === name);
      expect('SECRETS_KMS_KEY_ID' in env).toBe(Boolean(spec.secretsKey));
      expect('FLOW_STATE_MACHINE_ARN_PREFIX' in env).toBe(Boolean(spec.runsFlows));
      expect(env.FLOW_NAMES).toBe(spec.readsFlowNames ? FLOW_NAMES.join(',') : undefined);
      for (const variable of ['AUTH_ISSUER', 'AUTH_JWKS_URL', 'AUTH_AUDIENCE', 'AUTH_JWT_ALGORITHMS']) {
        expect(variable in env, variable).toBe(tokenRouteFunctions.has(name));
      }
      // The receiver checks URL signatures (Twilio) against the trigger URL under this base, never one built from headers.
      expect('WEBHOOK_BASE_URL' in env).toBe(triggerRouteFunctions.has(name));
      expect('PUBLIC_WEBHOOK_BASE_URL' in env).toBe(false);
      // Without context, the handlers' own defaults apply.
      for (const variable of [...TUNABLE_VARIABLES, 'POWERTOOLS_LOG_LEVEL']) expect(variable in env, variable).toBe(false);
    });

    it('the triggers and webhook functions know the webhook base URL, the API\'s own: the receiver always has one to check URL signatures against', () => {
      const apiId = idOf(s.stack, s.stack.http.api);
      for (const name of ['triggers', 'webhook'] as const) {
        expect(environmentOf(s, name).WEBHOOK_BASE_URL).toEqual({ 'Fn::Join': ['', [{ 'Fn::GetAtt': [apiId, 'ApiEndpoint'] }, '/webhooks']] });
      }
    });
  });

  describe('secrets key and identity', () => {
    it('has one KMS key for secrets, rotated, kept with the data (the others encrypt the alarm topic and sign step-up proofs)', () => {
      const keys = resourcesOfType(s.template, 'AWS::KMS::Key');
      expect(Object.keys(keys).sort()).toEqual([idOf(s.stack, s.stack.secretsKey.key), idOf(s.stack, s.stack.alarms.key), idOf(s.stack, s.stack.mfaSigningKey.key)].sort());
      const secrets = keys[idOf(s.stack, s.stack.secretsKey.key)]!;
      expect(secrets.Properties.EnableKeyRotation).toBe(true);
      expect(secrets.DeletionPolicy).toBe('Retain');
    });

    it('gives the console a hosted UI: the code grant only, returning to <api>/console and nowhere else', () => {
      const apiId = idOf(s.stack, s.stack.http.api);
      const consoleUrl = { 'Fn::Join': ['', [{ 'Fn::GetAtt': [apiId, 'ApiEndpoint'] }, '/console']] };
      const client = resourcesOfType(s.template, 'AWS::Cognito::UserPoolClient')[idOf(s.stack, s.stack.identity.userPoolClient!)]!;
      expect(client.Properties).toMatchObject({
        GenerateSecret: false,
        AllowedOAuthFlowsUserPoolClient: true,
        AllowedOAuthFlows: ['code'],
        AllowedOAuthScopes: ['openid', 'email'],
        CallbackURLs: [consoleUrl],
        LogoutURLs: [consoleUrl],
        SupportedIdentityProviders: ['COGNITO'],
      });
      const domainId = idOf(s.stack, s.stack.identity.hostedUi!);
      expect(resourcesOfType(s.template, 'AWS::Cognito::UserPoolDomain')[domainId]!.Properties).toMatchObject({
        Domain: { 'Fn::Join': ['-', ['flowgate', { Ref: 'AWS::AccountId' }]] },
        UserPoolId: { Ref: idOf(s.stack, s.stack.identity.userPool!) },
      });
      // Only the system function, which serves the console, learns where the hosted UI is.
      const system = environmentOf(s, 'system');
      expect(system.CONSOLE_COGNITO_CLIENT_ID).toEqual({ Ref: idOf(s.stack, s.stack.identity.userPoolClient!) });
      expect(JSON.stringify(system.CONSOLE_COGNITO_DOMAIN)).toContain(domainId);
      for (const [name] of functionEntries.filter(([n]) => n !== 'system')) {
        expect(Object.keys(environmentOf(s, name)).filter((v) => v.startsWith('CONSOLE_')), name).toEqual([]);
      }
    });

    it('creates a Cognito user pool by default: strong passwords, TOTP MFA required, a public client', () => {
      s.template.hasResourceProperties('AWS::Cognito::UserPool', {
        MfaConfiguration: 'ON',
        EnabledMfas: ['SOFTWARE_TOKEN_MFA'],
        Policies: { PasswordPolicy: Match.objectLike({ MinimumLength: 12, RequireSymbols: true, RequireNumbers: true, RequireUppercase: true, RequireLowercase: true }) },
        AdminCreateUserConfig: { AllowAdminCreateUserOnly: true },
      });
      s.template.hasResourceProperties('AWS::Cognito::UserPoolClient', { GenerateSecret: false, ExplicitAuthFlows: Match.arrayWith(['ALLOW_USER_SRP_AUTH']) });
      const pool = idOf(s.stack, s.stack.identity.userPool!);
      const client = idOf(s.stack, s.stack.identity.userPoolClient!);
      expect(environmentOf(s, 'apiKeys')).toMatchObject({
        AUTH_ISSUER: { 'Fn::GetAtt': [pool, 'ProviderURL'] },
        AUTH_JWKS_URL: { 'Fn::Join': ['', [{ 'Fn::GetAtt': [pool, 'ProviderURL'] }, '/.well-known/jwks.json']] },
        AUTH_AUDIENCE: { Ref: client },
        AUTH_JWT_ALGORITHMS: 'RS256',
      });
    });
  });

  describe('cdk-nag AwsSolutions', () => {
    it('finds nothing that is not acknowledged', () => {
      const report = new AwsSolutionsChecks(undefined, { verbose: true }).validateScope(s.app);
      expect(report.violations.map((v) => `${v.ruleName} at ${v.violatingResources.map((r) => r.constructPath).join(', ')}: ${v.description}`)).toEqual([]);
    });

    it('acknowledges only these rules, each with a reason in code', () => {
      const acknowledged = new Map<string, string>();
      const visit = (construct: IConstruct) => {
        for (const entry of construct.node.metadata) {
          if (entry.type !== Validations.ACKNOWLEDGED_RULES_METADATA_KEY) continue;
          for (const [rule, reason] of Object.entries(entry.data as Record<string, string>)) acknowledged.set(rule.replace(/^annotation::/i, ''), reason);
        }
        construct.node.children.forEach(visit);
      };
      visit(s.app);
      // The objects bucket: its grant covers the objects of stores whose ids are made at run time, and it keeps no access logs (lib/constructs/object-storage.ts).
      const objectsBucket = s.stack.getLogicalId(s.stack.objectStorage.bucket.node.defaultChild as CfnElement);
      // The search function's grant covers LanceDB's files, named at run time, under search/ (lib/constructs/search-storage.ts).
      expect([...acknowledged.keys()].sort()).toEqual(['AwsSolutions-APIG4', 'AwsSolutions-COG8', 'AwsSolutions-IAM5[Resource::*]', `AwsSolutions-IAM5[Resource::<${objectsBucket}.Arn>/*]`, `AwsSolutions-IAM5[Resource::<${objectsBucket}.Arn>/search/*]`, 'AwsSolutions-L1', 'AwsSolutions-S1', 'AwsSolutions-SF1', 'AwsSolutions-SF2']);
      for (const reason of acknowledged.values()) expect(reason.length).toBeGreaterThan(40);
    });

    it('is wired into synthesis: an unacknowledged finding fails the synth', () => {
      const app = testApp();
      const stack = buildServiceApp(app);
      new Queue(stack, 'QueueWithoutDeadLetters');
      expect(() => app.synth()).toThrow(/AwsSolutions-SQS3/);
    });

    it('leaves no CDK warning or error on the stack', () => {
      expect(Annotations.fromStack(s.stack).findError('*', Match.anyValue())).toEqual([]);
      expect(Annotations.fromStack(s.stack).findWarning('*', Match.anyValue())).toEqual([]);
    });
  });
});

describe('the service stack, as configured by CDK context', () => {
  const external = {
    authIssuer: 'https://issuer.example.com/',
    authJwksUrl: 'https://issuer.example.com/.well-known/jwks.json',
    authAudience: 'flowgate',
    publicWebhookBaseUrl: 'https://hooks.example.com/webhooks/',
    dataRemovalPolicy: 'destroy',
  };
  let s: Synthesized;
  beforeAll(() => {
    // A concrete account and region, so that ARNs resolve to plain strings.
    s = synth(external, { env: { account: '123456789012', region: 'eu-west-1' } });
  });

  it('authIssuer + authJwksUrl select an external issuer instead of the user pool', () => {
    s.template.resourceCountIs('AWS::Cognito::UserPool', 0);
    for (const name of tokenRouteFunctions) {
      expect(environmentOf(s, name)).toMatchObject({
        AUTH_ISSUER: external.authIssuer,
        AUTH_JWKS_URL: external.authJwksUrl,
        AUTH_AUDIENCE: external.authAudience,
        AUTH_JWT_ALGORITHMS: 'RS256',
      });
    }
  });

  it('behind a custom domain the hosted UI also returns to the console\'s public URL, where the console builds its redirect_uri', () => {
    const withPool = synth({ publicWebhookBaseUrl: 'https://hooks.example.com/webhooks/' }, { env: { account: '123456789012', region: 'eu-west-1' } });
    const client = Object.values(resourcesOfType(withPool.template, 'AWS::Cognito::UserPoolClient'))[0]!;
    const apiConsole = { 'Fn::Join': ['', [{ 'Fn::GetAtt': [idOf(withPool.stack, withPool.stack.http.api), 'ApiEndpoint'] }, '/console']] };
    expect(client.Properties.CallbackURLs).toEqual([apiConsole, 'https://hooks.example.com/console']);
    expect(client.Properties.LogoutURLs).toEqual([apiConsole, 'https://hooks.example.com/console']);
  });

  it('publicWebhookBaseUrl reaches the functions that build webhook URLs, and an output', () => {
    for (const name of triggerRouteFunctions) expect(environmentOf(s, name).PUBLIC_WEBHOOK_BASE_URL).toBe('https://hooks.example.com/webhooks');
    s.template.hasOutput('PublicWebhookUrl', { Value: 'https://hooks.example.com/webhooks' });
  });

  it('dataRemovalPolicy=destroy deletes tables and key with the stack', () => {
    for (const table of Object.values(resourcesOfType(s.template, 'AWS::DynamoDB::Table'))) {
      expect(table.DeletionPolicy).toBe('Delete');
      expect(table.Properties.DeletionProtectionEnabled).toBe(false);
    }
    const signingKey = idOf(s.stack, s.stack.mfaSigningKey.key);
    for (const [id, key] of Object.entries(resourcesOfType(s.template, 'AWS::KMS::Key'))) {
      // The MFA signing key is kept whatever the policy: a rotation takes it out of the template
      // while it still verifies the proofs it signed (test/infra/mfa-signing-key.test.ts).
      expect(key.DeletionPolicy, id).toBe(id === signingKey ? 'RetainExceptOnCreate' : 'Delete');
    }
  });

  it('passes cdk-nag', () => {
    expect(new AwsSolutionsChecks(undefined).validateScope(s.app).violations).toEqual([]);
  });

  it('cognitoThreatProtection=true puts the user pool on the Plus plan and needs no acknowledgement', () => {
    const plus = synth({ cognitoThreatProtection: 'true' });
    plus.template.hasResourceProperties('AWS::Cognito::UserPool', {
      UserPoolTier: 'PLUS',
      UserPoolAddOns: { AdvancedSecurityMode: 'ENFORCED' },
    });
    expect(new AwsSolutionsChecks(undefined).validateScope(plus.app).violations).toEqual([]);
  });

  it('a flow\'s state machine ARN is FLOW_STATE_MACHINE_ARN_PREFIX + its name', () => {
    const runner = functionEntries.find(([, spec]) => spec.runsFlows)![0];
    const prefix = environmentOf(s, runner).FLOW_STATE_MACHINE_ARN_PREFIX;
    expect(typeof prefix).toBe('string');
    const machines = resourcesOfType(s.template, 'AWS::StepFunctions::StateMachine');
    for (const flow of FLOW_NAMES) {
      const name = machines[idOf(s.stack, s.stack.flows.stateMachines[flow]!)]!.Properties.StateMachineName;
      expect(`${prefix}${flow}`).toBe(`arn:aws:states:eu-west-1:123456789012:stateMachine:${name}`);
    }
  });

  it('handler settings from context reach exactly the functions that read them, and logLevel every function', () => {
    const tuned = synth({ webhookMaxBodyBytes: '524288', waitTimeoutMs: 10_000, triggerCacheTtlMs: '0', totpIssuer: 'Acme Corp', logLevel: 'warn' });
    const expected: Partial<Record<FunctionName, Record<string, string>>> = {
      webhook: { WEBHOOK_MAX_BODY_BYTES: '524288', WAIT_TIMEOUT_MS: '10000', TRIGGER_CACHE_TTL_MS: '0' },
      triggers: { WAIT_TIMEOUT_MS: '10000' },
      accounts: { TOTP_ISSUER: 'Acme Corp' },
    };
    for (const [name] of functionEntries) {
      const env = environmentOf(tuned, name);
      for (const variable of TUNABLE_VARIABLES) expect(env[variable], `${name}: ${variable}`).toBe(expected[name]?.[variable]);
      expect(env.POWERTOOLS_LOG_LEVEL, name).toBe('WARN');
    }
  });

  it.each([
    ['waitTimeoutMs', '40000'],
    ['webhookMaxBodyBytes', '0'],
    ['webhookMaxBodyBytes', '5000000'],
    ['triggerCacheTtlMs', '1.5'],
    ['triggerCacheTtlMs', '-1'],
    ['triggerCacheTtlMs', '600000'],
    ['totpIssuer', 'Acme:Corp'],
    ['logLevel', 'LOUD'],
  ])('refuses %s=%s when it synthesises, not at run time', (key, value) => {
    expect(() => synth({ [key]: value })).toThrow(new RegExp(`context ${key} must be`));
  });

  it('with an external issuer the console has no hosted UI: the system function gets no CONSOLE_ settings', () => {
    s.template.resourceCountIs('AWS::Cognito::UserPoolDomain', 0);
    expect(Object.keys(environmentOf(s, 'system')).filter((v) => v.startsWith('CONSOLE_'))).toEqual([]);
  });

  it('two stacks in one account and region get two hosted UI domain prefixes, each one Cognito accepts', () => {
    const prefixOf = (stackName: string) => {
      const { template } = synth({ stackName }, { env: { account: '123456789012', region: 'eu-west-1' } });
      const domain = Object.values(resourcesOfType(template, 'AWS::Cognito::UserPoolDomain'))[0]!.Properties.Domain;
      // The account id is a deploy-time value: joined after the stack's part.
      expect(domain['Fn::Join'][1][1]).toEqual({ Ref: 'AWS::AccountId' });
      return `${domain['Fn::Join'][1][0]}-123456789012`;
    };
    // Two stacks synthesized; the same rule over more names, without a synth each.
    const synthesized = [prefixOf('Flowgate'), prefixOf('Flowgate-Staging')];
    const names = ['Acme-AWS-Cognito-Amazon-Hooks', 'awawsscognito', `Long${'x'.repeat(56)}`, 'A--b-'];
    const prefixes = [...synthesized, ...names.map((name) => `${domainPrefixStackPart(name)}-123456789012`)];
    expect(new Set(prefixes).size).toBe(prefixes.length);
    // The default stack keeps the prefix it always had.
    expect(synthesized[0]).toBe('flowgate-123456789012');
    for (const prefix of prefixes) {
      expect(prefix, prefix).toMatch(/^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/);
      expect(prefix, prefix).not.toMatch(/aws|amazon|cognito/);
    }
  });

  it('cognitoDomainPrefix names the hosted UI\'s domain; a prefix Cognito would refuse fails the synth', () => {
    synth({ cognitoDomainPrefix: 'acme-flowgate' }).template.hasResourceProperties('AWS::Cognito::UserPoolDomain', { Domain: 'acme-flowgate' });
    for (const bad of ['Acme', 'my-aws-gate', '-x', 'a'.repeat(64)]) expect(() => synth({ cognitoDomainPrefix: bad }), bad).toThrow(/cognitoDomainPrefix/);
  });

  it('refuses half an external issuer', () => {
    expect(() => synth({ authIssuer: external.authIssuer })).toThrow(/authIssuer and authJwksUrl/);
  });
});
