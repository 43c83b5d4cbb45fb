import { resolve } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll } from 'vitest';
import { LOCAL_AWS_ENV, startEngines, type Engines } from '../../local/engines.js';

export interface TestEngines {
  /** The running engines: `env` names their endpoints, tables and queues. */
  engines: Engines;
  /** A DynamoDB document client pointed at the engines. */
  dynamo: DynamoDBDocumentClient;
  /** An SQS client pointed at the engines. */
  sqs: SQSClient;
}

/**
 * Starts the embedded engines (DynamoDB, SQS, Step Functions with the shipped flows) for the
 * calling test file, with clients pointed at them, and stops them afterwards. The returned object
 * is filled in `beforeAll`; read its fields inside tests and hooks, not at collection time. Call it
 * before the file's own `beforeAll`, which then runs after the engines are up (e.g. to copy
 * `engines.env` into `process.env` and import a handler module).
 */
export function useEngines(): TestEngines {
  const holder = {} as TestEngines;
  beforeAll(async () => {
    const engines = await startEngines({ flowsDirs: [resolve(import.meta.dirname, '../../flows')], visibilityTimeoutSeconds: 2 });
    const config = { region: LOCAL_AWS_ENV.AWS_REGION, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } };
    Object.assign(holder, {
      engines,
      dynamo: DynamoDBDocumentClient.from(new DynamoDBClient({ ...config, endpoint: engines.env.AWS_ENDPOINT_URL_DYNAMODB })),
      sqs: new SQSClient({ ...config, endpoint: engines.env.AWS_ENDPOINT_URL_SQS }),
    });
  });
  afterAll(async () => {
    holder.dynamo?.destroy();
    holder.sqs?.destroy();
    await holder.engines?.stop();
  });
  return holder;
}
