import type { Server } from 'node:http';
import { CreateTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { CreateQueueCommand, GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import dynalite from 'dynalite';
import { createSqsServer } from 'local-aws-sqs';
import { MESSAGE_RETENTION_DAYS, QUEUES, TABLES, type QueueName } from '../functions/manifest.js';
import { SETTINGS } from '../functions/settings.js';
import type { LocalFlowTasks } from './flow-tasks.js';
import { startLocalStepFunctions } from './sfn-server.js';

/** Credentials and region the SDK needs to sign requests; the embedded engines accept any. */
export const LOCAL_AWS_ENV = {
  AWS_REGION: 'us-east-1',
  AWS_ACCESS_KEY_ID: 'local',
  AWS_SECRET_ACCESS_KEY: 'local',
  AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
} as const;

export const LOCAL_FLOW_ARN_PREFIX = 'arn:aws:states:us-east-1:000000000000:stateMachine:flow-';

export interface Engines {
  /** Environment that points the product's AWS clients and handlers at the engines. */
  env: Record<string, string>;
  queueUrls: Record<QueueName, string>;
  stop(): Promise<void>;
}

const listen = (server: Server) =>
  new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)));
const close = (server: Server) => new Promise<void>((resolve) => server.close(() => resolve()));

/**
 * Starts dynalite (DynamoDB), local-aws-sqs (SQS) and the local Step Functions endpoint in this
 * process on free loopback ports, and creates the tables and queues the manifest describes.
 */
export async function startEngines(options: { flowsDirs: string[]; visibilityTimeoutSeconds: number; tasks?: LocalFlowTasks }): Promise<Engines> {
  const dynamoServer: Server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  const dynamoEndpoint = `http://127.0.0.1:${await listen(dynamoServer)}`;
  // local-aws-sqs 2.0.2 counted a ChangeMessageVisibility as one more receive, so a retried
  // message reached its dead-letter queue in half the receives; AWS counts receives only.
  // `patches/local-aws-sqs+2.0.2.patch` (applied by `npm ci` through patch-package) fixes that.
  const sqsServer = await createSqsServer({ port: 0, hostname: "127.0.0.1", emulateQueueCreationLifecycle: false });
  const sqsEndpoint = `http://127.0.0.1:${(sqsServer.address() as { port: number }).port}`;
  const sfn = await startLocalStepFunctions({ flowsDirs: options.flowsDirs, arnPrefix: LOCAL_FLOW_ARN_PREFIX, tasks: options.tasks, engines: { dynamodb: dynamoEndpoint, sqs: sqsEndpoint } });

  const clientConfig = { region: LOCAL_AWS_ENV.AWS_REGION, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } };
  const dynamo = new DynamoDBClient({ ...clientConfig, endpoint: dynamoEndpoint });
  const env: Record<string, string> = {
    ...LOCAL_AWS_ENV,
    AWS_ENDPOINT_URL_DYNAMODB: dynamoEndpoint,
    AWS_ENDPOINT_URL_SQS: sqsEndpoint,
    AWS_ENDPOINT_URL_SFN: sfn.endpoint,
    [SETTINGS.flowArnPrefix.env]: LOCAL_FLOW_ARN_PREFIX,
  };
  for (const [name, table] of Object.entries(TABLES)) {
    const tableName = `local-${name}`;
    // As lib/constructs/data-stores.ts creates them: string keys, every attribute projected.
    const indexes = Object.entries('indexes' in table ? table.indexes : {});
    const keyAttributes = new Set(['pk', 'sk', ...indexes.flatMap(([, index]) => [index.partitionKey, index.sortKey])]);
    await dynamo.send(new CreateTableCommand({
      TableName: tableName,
      BillingMode: 'PAY_PER_REQUEST',
      KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }, { AttributeName: 'sk', KeyType: 'RANGE' }],
      AttributeDefinitions: [...keyAttributes].map((AttributeName) => ({ AttributeName, AttributeType: 'S' })),
      GlobalSecondaryIndexes: indexes.length === 0 ? undefined : indexes.map(([IndexName, index]) => ({
        IndexName,
        KeySchema: [{ AttributeName: index.partitionKey, KeyType: 'HASH' }, { AttributeName: index.sortKey, KeyType: 'RANGE' }],
        Projection: { ProjectionType: 'ALL' },
      })),
    }));
    env[table.env] = tableName;
  }
  dynamo.destroy();

  const sqs = new SQSClient({ ...clientConfig, endpoint: sqsEndpoint });
  const queueUrls = {} as Record<QueueName, string>;
  for (const [name, queue] of Object.entries(QUEUES) as [QueueName, (typeof QUEUES)[QueueName]][]) {
    const dlq = await sqs.send(new CreateQueueCommand({ QueueName: `local-${name}-dlq`, Attributes: { MessageRetentionPeriod: String(MESSAGE_RETENTION_DAYS * 24 * 3600) } }));
    const dlqArn = (await sqs.send(new GetQueueAttributesCommand({ QueueUrl: dlq.QueueUrl, AttributeNames: ['QueueArn'] }))).Attributes!.QueueArn!;
    const created = await sqs.send(new CreateQueueCommand({
      QueueName: `local-${name}`,
      Attributes: {
        VisibilityTimeout: String(options.visibilityTimeoutSeconds),
        RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlqArn, maxReceiveCount: queue.maxReceiveCount }),
      },
    }));
    queueUrls[name] = created.QueueUrl!;
    env[queue.env] = created.QueueUrl!;
    env[`${queue.env.replace(/_URL$/, '')}_DLQ_URL`] = dlq.QueueUrl!;
  }
  sqs.destroy();

  return {
    env,
    queueUrls,
    async stop() {
      await Promise.all([close(dynamoServer), close(sqsServer), close(sfn.server)]);
    },
  };
}
