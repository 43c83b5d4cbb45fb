import { randomBytes } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { App, Stack, type CfnElement } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';
import { beforeAll, describe, expect, it } from 'vitest';
import { DynamoKvStore, generationPk, VALUE_EXPIRY_ATTRIBUTE } from '../../functions/adapters/aws/dynamo-kv-store.js';
import { KvService } from '../../functions/domain/kv/service.js';
import { FUNCTIONS, MESSAGE_RETENTION_DAYS, MIN_RECEIVES_FOR_LAMBDA_CONSUMER, QUEUES, type FunctionName, type QueueName } from '../../functions/manifest.js';
import { DEFAULT_FLOW_WORKER_MAX_CONCURRENCY, DEFAULT_SWEEPER_MAX_CONCURRENCY } from '../../lib/config.js';
import { EventQueues } from '../../lib/constructs/event-queues.js';
import { useEngines } from '../support/engines.js';
import { synth, type Synthesized } from '../support/synth.js';

type Resource = { Type: string; Properties: Record<string, any> };

const queueNames = Object.keys(QUEUES) as QueueName[];
const SECONDS_PER_DAY = 24 * 3600;
const capitalized = (name: string) => `${name[0]!.toUpperCase()}${name.slice(1)}`;

const idOf = (s: Synthesized, construct: IConstruct) => s.stack.getLogicalId(construct.node.defaultChild as CfnElement);
const resource = (s: Synthesized, construct: IConstruct): Resource =>
  s.template.toJSON().Resources[idOf(s, construct)] as Resource;

/** The event source mapping that feeds a queue to its consumer. */
function mappingOf(syn: Synthesized, name: QueueName): Resource {
  const queueId = idOf(syn, syn.stack.queues.queues[name]);
  const mappings = Object.values(syn.template.findResources('AWS::Lambda::EventSourceMapping')) as Resource[];
  const matching = mappings.filter((m) => JSON.stringify(m.Properties.EventSourceArn).includes(`"${queueId}"`));
  expect(matching).toHaveLength(1);
  return matching[0]!;
}

let s: Synthesized;
beforeAll(() => {
  s = synth();
});

describe('KV values with ttl_seconds', () => {
  const local = useEngines();

  it('are deleted by DynamoDB TTL: the kv table expires items by the attribute DynamoKvStore writes, in epoch seconds', async () => {
    expect(resource(s, s.stack.data.tables.kv).Properties.TimeToLiveSpecification).toEqual({ AttributeName: VALUE_EXPIRY_ATTRIBUTE, Enabled: true });

    // DynamoDB TTL reads epoch seconds: a value written at a pinned instant with a 60 s lifetime
    // must carry that instant's epoch second + 60 under the attribute, not milliseconds.
    const nowMs = 1_900_000_000_250;
    const store = new DynamoKvStore(local.dynamo, local.engines.env.KV_TABLE!);
    const service = new KvService({ store, sweeps: { enqueue: async () => {} }, now: () => nowMs, randomBytes, settleMs: 0 });
    const ref = { accountId: 'ttl-owner', name: 'expiring' };
    const bucket = await service.createBucket(ref, { description: null, ttlSeconds: 60, maxValueBytes: 1024 });
    await service.putValue(ref, 'k', { bytes: Buffer.from('v'), contentType: 'text/plain' });

    const { Item } = await local.dynamo.send(new GetCommand({
      TableName: local.engines.env.KV_TABLE!,
      Key: { pk: generationPk({ ...ref, generation: bucket.generation }), sk: 'k' },
    }));
    expect(Item?.[VALUE_EXPIRY_ATTRIBUTE]).toBe(1_900_000_001 + 60);
  });
});

describe('queues: retries and retention', () => {
  it.each(queueNames)('%s dead-letters after at least the 5 receives AWS recommends for Lambda consumers', (name) => {
    expect(MIN_RECEIVES_FOR_LAMBDA_CONSUMER).toBeGreaterThanOrEqual(5);
    const { maxReceiveCount } = resource(s, s.stack.queues.queues[name]).Properties.RedrivePolicy;
    expect(maxReceiveCount).toBe(QUEUES[name].maxReceiveCount);
    expect(maxReceiveCount).toBeGreaterThanOrEqual(MIN_RECEIVES_FOR_LAMBDA_CONSUMER);
  });

  it('the flow queue gives a failing flow 5 receives before its event is dead-lettered', () => {
    expect(resource(s, s.stack.queues.queues.flowEvents).Properties.RedrivePolicy.maxReceiveCount).toBe(5);
  });

  it('refuses a queue whose maxReceiveCount is under the recommended 5', () => {
    const queues = { ...QUEUES, flowEvents: { ...QUEUES.flowEvents, maxReceiveCount: 3 } };
    const consumerTimeoutSeconds = { kvSweep: 300, flowEvents: 330, searchMaintenance: 120 };
    expect(() => new EventQueues(new Stack(new App(), 'Bare'), 'Queues', { queues, consumerTimeoutSeconds })).toThrow(/flowEvents: maxReceiveCount 3 is under 5/);
  });

  it.each(queueNames)('%s and its dead-letter queue keep messages 14 days (SQS\'s maximum), as documented', (name) => {
    expect(MESSAGE_RETENTION_DAYS).toBe(14);
    for (const queue of [s.stack.queues.queues[name], s.stack.queues.deadLetterQueues[name]]) {
      expect(resource(s, queue).Properties.MessageRetentionPeriod).toBe(MESSAGE_RETENTION_DAYS * SECONDS_PER_DAY);
    }
  });
});

describe('dead-letter queues: redrive', () => {
  const env = { account: '123456789012', region: 'eu-west-1' };
  let pinned: Synthesized;
  beforeAll(() => {
    pinned = synth({}, { env });
  });

  it.each(queueNames)('%s\'s dead-letter queue allows only its own source queue to dead-letter into it (and so to be redriven to)', (name) => {
    const source = resource(pinned, pinned.stack.queues.queues[name]);
    const dlq = resource(pinned, pinned.stack.queues.deadLetterQueues[name]);
    expect(source.Properties.QueueName).toBe(`${pinned.stack.stackName}-${name}${'fifo' in QUEUES[name] ? '.fifo' : ''}`);
    expect(dlq.Properties.RedriveAllowPolicy).toEqual({
      redrivePermission: 'byQueue',
      sourceQueueArns: [`arn:aws:sqs:${env.region}:${env.account}:${source.Properties.QueueName}`],
    });
    expect(source.Properties.RedrivePolicy.deadLetterTargetArn).toEqual({ 'Fn::GetAtt': [idOf(pinned, pinned.stack.queues.deadLetterQueues[name]), 'Arn'] });
  });

  it.each(queueNames)('outputs the ARN (for start-message-move-task --source-arn) and the URL of %s\'s dead-letter queue', (name) => {
    const dlqId = idOf(s, s.stack.queues.deadLetterQueues[name]);
    s.template.hasOutput(`${capitalized(name)}DeadLetterQueueArn`, { Value: { 'Fn::GetAtt': [dlqId, 'Arn'] } });
    s.template.hasOutput(`${capitalized(name)}DeadLetterQueueUrl`, { Value: { Ref: dlqId } });
  });

  it('refuses a stack name that would make a queue name longer than SQS allows', () => {
    expect(() => synth({ stackName: `S${'x'.repeat(70)}` })).toThrow(/queue name .* is over 80 characters/);
  });
});

describe('flow worker concurrency', () => {
  it(`is bounded by default: at most ${DEFAULT_FLOW_WORKER_MAX_CONCURRENCY} concurrent invocations from the flow queue`, () => {
    expect(mappingOf(s, 'flowEvents').Properties.ScalingConfig).toEqual({ MaximumConcurrency: DEFAULT_FLOW_WORKER_MAX_CONCURRENCY });
  });

  it('takes its bound from context flowWorkerMaxConcurrency', () => {
    const tuned = synth({ flowWorkerMaxConcurrency: '50' });
    expect(mappingOf(tuned, 'flowEvents').Properties.ScalingConfig).toEqual({ MaximumConcurrency: 50 });
  });

  it.each(['1', '1001', '0', '-5', '2.5', 'lots'])('refuses flowWorkerMaxConcurrency=%s when it synthesises (Lambda allows 2 to 1000)', (value) => {
    expect(() => synth({ flowWorkerMaxConcurrency: value })).toThrow(/context flowWorkerMaxConcurrency must be a whole number from 2 to 1000/);
  });
});

describe('sweeper concurrency', () => {
  it(`is bounded by default: at most ${DEFAULT_SWEEPER_MAX_CONCURRENCY} concurrent invocations from the sweep queue, so purges cannot take the account's executions`, () => {
    expect(mappingOf(s, 'kvSweep').Properties.ScalingConfig).toEqual({ MaximumConcurrency: DEFAULT_SWEEPER_MAX_CONCURRENCY });
  });

  it('takes its bound from context sweeperMaxConcurrency, within what Lambda allows', () => {
    expect(mappingOf(synth({ sweeperMaxConcurrency: 2 }), 'kvSweep').Properties.ScalingConfig).toEqual({ MaximumConcurrency: 2 });
    expect(() => synth({ sweeperMaxConcurrency: '1' })).toThrow(/context sweeperMaxConcurrency must be a whole number from 2 to 1000/);
  });
});

describe('HTTP API access logs', () => {
  it('go to a log group under /aws/vendedlogs/ named after the stack, so enabling them never grows the account\'s log resource policy', () => {
    const stages = Object.values(s.template.findResources('AWS::ApiGatewayV2::Stage')) as Resource[];
    expect(stages).toHaveLength(1);
    const destination = stages[0]!.Properties.AccessLogSettings.DestinationArn as { 'Fn::GetAtt': [string, string] };
    const logGroup = s.template.toJSON().Resources[destination['Fn::GetAtt'][0]] as Resource;
    expect(logGroup.Type).toBe('AWS::Logs::LogGroup');
    expect(logGroup.Properties.LogGroupName).toBe(`/aws/vendedlogs/apigateway/${s.stack.stackName}-access`);
    expect(logGroup.Properties.LogGroupName).toMatch(/^[A-Za-z0-9_\-/.#]{1,512}$/);
  });

  it('are named per stack, so two stacks in one account do not collide', () => {
    const other = synth({ stackName: 'FlowgateStaging' });
    expect(other.template.findResources('AWS::Logs::LogGroup', { Properties: { LogGroupName: '/aws/vendedlogs/apigateway/FlowgateStaging-access' } })).not.toEqual({});
  });
});

describe('log levels', () => {
  const functionNames = Object.keys(FUNCTIONS) as FunctionName[];
  const functionOf = (syn: Synthesized, name: FunctionName) => resource(syn, syn.stack.functions[name].function);

  it('by default every function logs at INFO without the platform\'s START and REPORT lines (system level WARN: $0.22 of logs per million webhooks)', () => {
    for (const name of functionNames) {
      const { LoggingConfig, Environment } = functionOf(s, name).Properties;
      expect(LoggingConfig, name).toMatchObject({ LogFormat: 'JSON', ApplicationLogLevel: 'INFO', SystemLogLevel: 'WARN' });
      expect(Environment.Variables.POWERTOOLS_LOG_LEVEL, name).toBeUndefined();
    }
  });

  it('-c logLevel=DEBUG sets the level that wins: Lambda\'s application log level (AWS_LAMBDA_LOG_LEVEL), and the service logger\'s to match', () => {
    const debug = synth({ logLevel: 'DEBUG' });
    for (const name of functionNames) {
      const { LoggingConfig, Environment } = functionOf(debug, name).Properties;
      expect(LoggingConfig, name).toMatchObject({ ApplicationLogLevel: 'DEBUG', SystemLogLevel: 'INFO' });
      expect(Environment.Variables.POWERTOOLS_LOG_LEVEL, name).toBe('DEBUG');
    }
    // Debugging also logs every event of every flow execution and traces them with X-Ray.
    const machines = Object.values(debug.template.findResources('AWS::StepFunctions::StateMachine'));
    expect(machines.length).toBeGreaterThan(0);
    for (const machine of machines) {
      expect(machine.Properties).toMatchObject({ LoggingConfiguration: { Level: 'ALL', IncludeExecutionData: false }, TracingConfiguration: { Enabled: true } });
    }
  });

  it.each([
    ['trace', 'TRACE', 'TRACE'],
    ['warn', 'INFO', 'WARN'],
    ['ERROR', 'INFO', 'ERROR'],
    ['CRITICAL', 'INFO', 'CRITICAL'],
    ['SILENT', 'INFO', 'SILENT'],
  ])('-c logLevel=%s gives Lambda application log level %s (never above INFO, where Lambda would drop the metric lines) and the service logger %s', (level, lambdaLevel, serviceLevel) => {
    const tuned = synth({ logLevel: level });
    for (const name of functionNames) {
      const { LoggingConfig, Environment } = functionOf(tuned, name).Properties;
      expect(LoggingConfig.ApplicationLogLevel, name).toBe(lambdaLevel);
      expect(Environment.Variables.POWERTOOLS_LOG_LEVEL, name).toBe(serviceLevel);
    }
  });
});
