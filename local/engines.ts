import type { Server } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateTableCommand, DescribeTableCommand, DynamoDBClient, ListTablesCommand, type TableDescription } from '@aws-sdk/client-dynamodb';
import { CreateQueueCommand, GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { ClassicLevel } from 'classic-level';
import { PutBucketCorsCommand, S3Client } from '@aws-sdk/client-s3';
import { startEngineThread } from './engine-thread-host.js';
import S3rver from 's3rver';
import { OBJECTS_CORS } from '../functions/cors.js';
import { DUMMY_ACCOUNT } from 's3rver/lib/models/account.js';
import { MESSAGE_RETENTION_DAYS, QUEUES, TABLES, type IndexSpec, type QueueName, type TableName } from '../functions/manifest.js';
import { SETTINGS } from '../functions/settings.js';
import { DataDirError } from './data-dir.js';
import { confineStore, s3Guard } from './s3-guard.js';
import type { LocalFlowTasks } from './flow-tasks.js';
import { startLocalStepFunctions } from './sfn-server.js';
import { keepIdleConnections } from './idle-connections.js';
import { serveDataEngines } from './data-engines.js';

/** Credentials and region the SDK needs to sign requests; the embedded engines accept any. */
export const LOCAL_AWS_ENV = {
  AWS_REGION: 'us-east-1',
  AWS_ACCESS_KEY_ID: 'local',
  AWS_SECRET_ACCESS_KEY: 'local',
  AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
} as const;

export const LOCAL_FLOW_ARN_PREFIX = 'arn:aws:states:us-east-1:000000000000:stateMachine:flow-';
export const LOCAL_FLOW_BATCH_ARN_PREFIX = 'arn:aws:states:us-east-1:000000000000:stateMachine:batch-';

export interface Engines {
  /** Environment that points the product's AWS clients and handlers at the engines. */
  env: Record<string, string>;
  queueUrls: Record<QueueName, string>;
  stop(): Promise<void>;
}

const close = (server: Server) => new Promise<void>((resolve) => server.close(() => resolve()));

/**
 * Indexes only a local stack with a data directory has: its recovery after a restart finds what
 * was queued or running (`byStatus`), and the trigger of each (`byId`), by Query rather than by
 * reading every record (`recovery.ts`). Deployed, SQS keeps every queued event and nothing needs
 * finding, so no deployed table pays for them. They hold keys only (recovery reads the record by
 * key anyway), so a status write costs one small index entry more, in the same batch.
 */
export const RECOVERY_INDEXES = {
  executions: { byStatus: { partitionKey: 'status', sortKey: 'sk' } },
  triggers: { byId: { partitionKey: 'id', sortKey: 'sk' } },
} as const satisfies Partial<Record<TableName, Record<string, IndexSpec>>>;

export const localTableName = (name: TableName) => `local-${name}`;

type LocalIndex = [name: string, index: IndexSpec, projection: 'ALL' | 'KEYS_ONLY'];

/** The indexes a local table has: the manifest's (every attribute, as deployed), and with a data directory the recovery ones. */
function indexesOf(name: TableName, persistent: boolean): LocalIndex[] {
  const table = TABLES[name];
  const recovery: Record<string, IndexSpec> = persistent ? (RECOVERY_INDEXES as Partial<Record<TableName, Record<string, IndexSpec>>>)[name] ?? {} : {};
  return [
    ...Object.entries('indexes' in table ? table.indexes : {}).map(([indexName, index]): LocalIndex => [indexName, index, 'ALL']),
    ...Object.entries(recovery).map(([indexName, index]): LocalIndex => [indexName, index, 'KEYS_ONLY']),
  ];
}

type IndexDescription = { IndexName?: string; KeySchema?: { AttributeName?: string }[]; Projection?: { ProjectionType?: string } };
/** A table as its keys and indexes, to compare a stored one with what this code would make. */
const shapeOf = (keys: { AttributeName?: string }[] | undefined, indexes: IndexDescription[] | undefined) =>
  JSON.stringify([keys?.map((k) => k.AttributeName), (indexes ?? []).map((i) => [i.IndexName, i.KeySchema?.map((k) => k.AttributeName), i.Projection?.ProjectionType]).sort()]);

/**
 * The tables as `lib/constructs/data-stores.ts` makes them (string keys, every attribute projected
 * into the manifest's indexes), made where missing. On a reopened data directory a table that exists is kept as it is, after
 * checking it has the keys and indexes this code expects: dynalite cannot add an index to a table,
 * so a difference is a layout this code cannot use, and is said so rather than half used.
 */
async function ensureTables(dynamo: DynamoDBClient, dataDir: string | undefined): Promise<void> {
  const existing = new Set<string>();
  let start: string | undefined;
  do {
    const page = await dynamo.send(new ListTablesCommand({ ExclusiveStartTableName: start }));
    for (const name of page.TableNames ?? []) existing.add(name);
    start = page.LastEvaluatedTableName;
  } while (start);
  const created: string[] = [];
  for (const name of Object.keys(TABLES) as TableName[]) {
    const tableName = localTableName(name);
    const indexes = indexesOf(name, dataDir !== undefined);
    const keySchema = [{ AttributeName: 'pk', KeyType: 'HASH' as const }, { AttributeName: 'sk', KeyType: 'RANGE' as const }];
    const globalIndexes = indexes.map(([IndexName, index, ProjectionType]) => ({
      IndexName,
      KeySchema: [{ AttributeName: index.partitionKey, KeyType: 'HASH' as const }, { AttributeName: index.sortKey, KeyType: 'RANGE' as const }],
      Projection: { ProjectionType },
    }));
    if (existing.has(tableName)) {
      const { Table } = await dynamo.send(new DescribeTableCommand({ TableName: tableName })) as { Table: TableDescription };
      if (shapeOf(Table.KeySchema, Table.GlobalSecondaryIndexes) !== shapeOf(keySchema, globalIndexes)) {
        throw new DataDirError(`The data directory ${dataDir} holds table ${tableName} with other keys or indexes than this Flowgate uses; it was written by another version: update Flowgate, or choose another directory with FLOWGATE_DATA_DIR`);
      }
      continue;
    }
    const keyAttributes = new Set(['pk', 'sk', ...indexes.flatMap(([, index]) => [index.partitionKey, index.sortKey])]);
    await dynamo.send(new CreateTableCommand({
      TableName: tableName,
      BillingMode: 'PAY_PER_REQUEST',
      KeySchema: keySchema,
      AttributeDefinitions: [...keyAttributes].map((AttributeName) => ({ AttributeName, AttributeType: 'S' })),
      GlobalSecondaryIndexes: globalIndexes.length === 0 ? undefined : globalIndexes,
    }));
    created.push(tableName);
  }
  // dynalite answers CreateTable with a table still CREATING, and turns it ACTIVE a write later;
  // on disk that write takes an fsync, and a request to a table not yet ACTIVE is refused.
  for (const tableName of created) {
    while ((await dynamo.send(new DescribeTableCommand({ TableName: tableName }))).Table?.TableStatus !== 'ACTIVE') await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/**
 * Opens and closes the LevelDB folder before dynalite does: dynalite opens it on its first request
 * and, when that fails, dies of an unhandled stream error. Here a folder another process holds
 * (LevelDB's LOCK, which the operating system releases with its process) or cannot read is one line.
 */
async function probeLevelDb(path: string, dataDir: string): Promise<void> {
  const db = new ClassicLevel(path);
  try {
    await db.open();
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    throw new DataDirError(cause?.code === 'LEVEL_LOCKED'
      ? `The data directory ${dataDir} is in use by another process (its tables are locked); stop it, or choose another directory with FLOWGATE_DATA_DIR`
      : `The tables in the data directory ${dataDir} cannot be opened (${(cause?.message ?? (error as Error).message).split('\n')[0]}); move it away, or choose another directory with FLOWGATE_DATA_DIR`);
  }
  await db.close();
}

export interface EngineOptions {
  flowsDirs: string[];
  visibilityTimeoutSeconds: number;
  tasks?: LocalFlowTasks;
  /**
   * A data directory's LevelDB folder for dynalite (`data-dir.ts`); in memory when unset. Every
   * write is then fsync'd before it is answered, so what a handler acknowledged survives a crash of
   * the machine as well as of the process. The queues stay in memory (`recovery.ts` says why).
   */
  dynamodbPath?: string;
  /** The data directory, for messages. */
  dataDir?: string;
  /** A data directory's folder for s3rver's buckets; a temporary folder, removed on stop, when unset. */
  objectsPath?: string;
  /**
   * Whether to start the Step Functions endpoint here (default true). The local stack's flow
   * worker thread (`flow-worker-thread.ts`) starts its own instead, and its endpoint joins `env`.
   */
  stepFunctions?: boolean;
  /**
   * Whether dynalite and local-aws-sqs run on a worker thread of their own (`engine-thread.ts`),
   * off the event loop of the handlers that call them (default false: in this thread, as tests
   * start them, a thread's start costing them time for nothing).
   */
  engineThread?: boolean;
}

/** The one bucket that holds every object store's bytes, as deployed (`lib/constructs/object-storage.ts`). */
export const LOCAL_OBJECTS_BUCKET = 'local-objects';

/**
 * s3rver (S3) on a free loopback port, with the objects bucket. `s3-guard.ts` goes first in its
 * middleware: every request must be signed (Signature Version 4, header or presigned) with the
 * local credentials, which are also made one of s3rver's key pairs, and nothing a request names
 * reaches a file outside the bucket's folder. Buckets are named by path only (the product's
 * clients use path style), never by host name. It has no in-memory store: without a data
 * directory it works in a temporary folder.
 */
async function startS3(objectsPath: string | undefined): Promise<{ endpoint: string; stop(): Promise<void> }> {
  DUMMY_ACCOUNT.createKeyPair(LOCAL_AWS_ENV.AWS_ACCESS_KEY_ID, LOCAL_AWS_ENV.AWS_SECRET_ACCESS_KEY);
  const directory = objectsPath ?? await mkdtemp(join(tmpdir(), 'flowgate-objects-'));
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory, vhostBuckets: false, configureBuckets: [{ name: LOCAL_OBJECTS_BUCKET }] });
  confineStore(server.store, directory);
  server.middleware.unshift(s3Guard({
    credentials: [{ accessKeyId: LOCAL_AWS_ENV.AWS_ACCESS_KEY_ID, secretAccessKey: LOCAL_AWS_ENV.AWS_SECRET_ACCESS_KEY }],
    region: LOCAL_AWS_ENV.AWS_REGION,
    directory,
  }));
  const { port } = await server.run();
  keepIdleConnections(server.httpServer);
  return {
    endpoint: `http://127.0.0.1:${port}`,
    async stop() {
      await server.close();
      if (objectsPath === undefined) await rm(directory, { recursive: true, force: true });
    },
  };
}

/** dynalite and local-aws-sqs in this thread (`data-engines.ts`). */
async function startInThisThread(dynamodbPath: string | undefined): Promise<{ dynamodbEndpoint: string; sqsEndpoint: string; stop(): Promise<void> }> {
  const served = await serveDataEngines(dynamodbPath);
  return { dynamodbEndpoint: `http://127.0.0.1:${served.dynamodbPort}`, sqsEndpoint: `http://127.0.0.1:${served.sqsPort}`, stop: served.stop };
}

/**
 * Starts dynalite (DynamoDB), local-aws-sqs (SQS), s3rver (S3) and the local Step Functions endpoint in this
 * process on free loopback ports, and creates the tables and queues the manifest describes.
 */
export async function startEngines(options: EngineOptions): Promise<Engines> {
  if (options.dynamodbPath !== undefined) await probeLevelDb(options.dynamodbPath, options.dataDir ?? options.dynamodbPath);
  const served = options.engineThread ? await startEngineThread({ dynamodbPath: options.dynamodbPath }) : await startInThisThread(options.dynamodbPath);
  const dynamoEndpoint = served.dynamodbEndpoint;
  const clientConfig = { region: LOCAL_AWS_ENV.AWS_REGION, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } };
  const dynamo = new DynamoDBClient({ ...clientConfig, endpoint: dynamoEndpoint });
  try {
    await ensureTables(dynamo, options.dataDir);
  } catch (error) {
    await served.stop();
    throw error;
  } finally {
    dynamo.destroy();
  }
  const sqsEndpoint = served.sqsEndpoint;
  const s3 = await startS3(options.objectsPath);
  const sfn = options.stepFunctions === false ? undefined : await startLocalStepFunctions({ flowsDirs: options.flowsDirs, arnPrefix: LOCAL_FLOW_ARN_PREFIX, batchArnPrefix: LOCAL_FLOW_BATCH_ARN_PREFIX, tasks: options.tasks, engines: { dynamodb: dynamoEndpoint, sqs: sqsEndpoint } });

  const env: Record<string, string> = {
    ...LOCAL_AWS_ENV,
    AWS_ENDPOINT_URL_DYNAMODB: dynamoEndpoint,
    AWS_ENDPOINT_URL_SQS: sqsEndpoint,
    ...(sfn && { AWS_ENDPOINT_URL_SFN: sfn.endpoint }),
    AWS_ENDPOINT_URL_S3: s3.endpoint,
    [SETTINGS.objectsBucket.env]: LOCAL_OBJECTS_BUCKET,
    [SETTINGS.objectsTransferOrigin.env]: s3.endpoint,
    [SETTINGS.flowArnPrefix.env]: LOCAL_FLOW_ARN_PREFIX,
    [SETTINGS.flowBatchArnPrefix.env]: LOCAL_FLOW_BATCH_ARN_PREFIX,
  };
  for (const [name, table] of Object.entries(TABLES) as [TableName, (typeof TABLES)[TableName]][]) env[table.env] = localTableName(name);

  const sqs = new SQSClient({ ...clientConfig, endpoint: sqsEndpoint });
  const queueUrls = {} as Record<QueueName, string>;
  for (const [name, queue] of Object.entries(QUEUES) as [QueueName, (typeof QUEUES)[QueueName]][]) {
    // A FIFO queue as deployed (`lib/constructs/event-queues.ts`): `.fifo` names, a FIFO dead-letter queue, the queue's delay.
    const fifo = 'fifo' in queue ? { suffix: '.fifo', attributes: { FifoQueue: 'true' } } : { suffix: '', attributes: {} };
    const dlq = await sqs.send(new CreateQueueCommand({ QueueName: `local-${name}-dlq${fifo.suffix}`, Attributes: { MessageRetentionPeriod: String(MESSAGE_RETENTION_DAYS * 24 * 3600), ...fifo.attributes } }));
    const dlqArn = (await sqs.send(new GetQueueAttributesCommand({ QueueUrl: dlq.QueueUrl, AttributeNames: ['QueueArn'] }))).Attributes!.QueueArn!;
    const created = await sqs.send(new CreateQueueCommand({
      QueueName: `local-${name}${fifo.suffix}`,
      Attributes: {
        VisibilityTimeout: String(options.visibilityTimeoutSeconds),
        RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlqArn, maxReceiveCount: queue.maxReceiveCount }),
        ...fifo.attributes,
        ...('delaySeconds' in queue && { DelaySeconds: String(queue.delaySeconds) }),
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
      await Promise.all([served.stop(), ...(sfn ? [close(sfn.server)] : []), s3.stop()]);
    },
  };
}

/**
 * Sets the objects bucket's CORS rule (`OBJECTS_CORS`) for these origins, as the CDK stack does:
 * called once the local stack knows its own address, so the console's uploads pass s3rver's preflights.
 */
export async function allowBrowserOrigins(s3Endpoint: string, origins: readonly string[]): Promise<void> {
  const client = new S3Client({ region: LOCAL_AWS_ENV.AWS_REGION, credentials: { accessKeyId: LOCAL_AWS_ENV.AWS_ACCESS_KEY_ID, secretAccessKey: LOCAL_AWS_ENV.AWS_SECRET_ACCESS_KEY }, endpoint: s3Endpoint, forcePathStyle: true });
  try {
    await client.send(new PutBucketCorsCommand({
      Bucket: LOCAL_OBJECTS_BUCKET,
      CORSConfiguration: {
        CORSRules: [{
          AllowedOrigins: [...new Set(origins)],
          AllowedMethods: [...OBJECTS_CORS.methods],
          AllowedHeaders: [...OBJECTS_CORS.headers],
          ExposeHeaders: [...OBJECTS_CORS.expose],
          MaxAgeSeconds: OBJECTS_CORS.maxAgeSeconds,
        }],
      },
    }));
  } finally {
    client.destroy();
  }
}
