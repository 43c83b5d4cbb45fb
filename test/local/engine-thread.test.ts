import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient, GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, expect, it } from 'vitest';
import { localTableName, startEngines } from '../../local/engines.js';

const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});
const listeningHere = () => process.getActiveResourcesInfo().filter((kind) => kind === 'TCPServerWrap').length;

it('engineThread serves DynamoDB and SQS from a thread of their own, and its stop closes the LevelDB: a start on the same folder reads what it stored', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'flowgate-engine-thread-'));
  dirs.push(dir);
  const options = { flowsDirs: [], visibilityTimeoutSeconds: 30, dynamodbPath: join(dir, 'dynamodb'), objectsPath: join(dir, 'objects'), stepFunctions: false };
  const before = listeningHere();
  const threaded = await startEngines({ ...options, engineThread: true });
  // This thread listens for s3rver alone; dynalite and local-aws-sqs listen on the engine thread.
  expect(listeningHere() - before).toBe(1);
  const item = { pk: { S: 'thread' }, sk: { S: '1' }, note: { S: 'stored by the engine thread' } };
  const clientConfig = { region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } };
  const writer = new DynamoDBClient({ ...clientConfig, endpoint: threaded.env.AWS_ENDPOINT_URL_DYNAMODB });
  await writer.send(new PutItemCommand({ TableName: localTableName('kv'), Item: item }));
  writer.destroy();
  await threaded.stop();

  const reopened = await startEngines(options);
  const reader = new DynamoDBClient({ ...clientConfig, endpoint: reopened.env.AWS_ENDPOINT_URL_DYNAMODB });
  try {
    expect((await reader.send(new GetItemCommand({ TableName: localTableName('kv'), Key: { pk: item.pk, sk: item.sk } }))).Item).toEqual(item);
  } finally {
    reader.destroy();
    await reopened.stop();
  }
});
