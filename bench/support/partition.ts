import { Agent, request } from 'node:http';
import { BatchWriteCommand, QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/** Writes up to 25 items in one `BatchWriteItem`, sending again what the engine leaves unprocessed. */
export async function writeBatch(doc: DynamoDBDocumentClient, table: string, items: Record<string, unknown>[]): Promise<void> {
  let requests: unknown[] = items.map((Item) => ({ PutRequest: { Item } }));
  while (requests.length > 0) {
    const result = await doc.send(new BatchWriteCommand({ RequestItems: { [table]: requests as never } }));
    requests = result.UnprocessedItems?.[table] ?? [];
  }
}

/** An item of a bench's fill: strings, numbers and bytes are all its attributes need. */
export type FillItem = Record<string, string | number | Buffer>;

/** One attribute in DynamoDB's wire form. */
const wireValue = (value: string | number | Buffer) =>
  typeof value === 'string' ? { S: value } : typeof value === 'number' ? { N: String(value) } : { B: value.toString('base64') };

/** The most items one `BatchWriteItem` takes (DynamoDB's limit, which dynalite enforces). */
const BATCH = 25;

/**
 * Writes `count` items into the table at the dynalite `endpoint` by `BatchWriteItem`, `concurrency`
 * requests at once, each its JSON built by hand and posted over keep-alive HTTP: the engine's own
 * write path (its validation, index upkeep and LevelDB batch), without the AWS SDK's per-request
 * marshalling, middleware and signing, which took about 40% of a fill's CPU (dynalite checks that a
 * request is signed, not the signature). For benches that need large partitions before they start
 * measuring; what is measured goes through the product's own clients.
 */
export async function fillTable(endpoint: string, table: string, count: number, itemAt: (i: number) => FillItem, concurrency = 16): Promise<void> {
  const { hostname, port } = new URL(endpoint);
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  const headers = {
    'content-type': 'application/x-amz-json-1.0',
    'x-amz-target': 'DynamoDB_20120810.BatchWriteItem',
    authorization: 'AWS4-HMAC-SHA256 Credential=local/20260101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=0',
    'x-amz-date': '20260101T000000Z',
  };
  const post = (body: string) => new Promise<{ UnprocessedItems?: Record<string, unknown[]> }>((done, fail) => {
    const req = request({ hostname, port, method: 'POST', path: '/', agent, headers: { ...headers, 'content-length': Buffer.byteLength(body) } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => res.statusCode === 200 ? done(JSON.parse(text)) : fail(new Error(`BatchWriteItem answered ${res.statusCode}: ${text}`)));
    });
    req.on('error', fail);
    req.end(body);
  });
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const start = next;
      next = Math.min(count, next + BATCH);
      let requests: unknown[] = Array.from({ length: next - start }, (_, i) => ({
        PutRequest: { Item: Object.fromEntries(Object.entries(itemAt(start + i)).map(([name, value]) => [name, wireValue(value)])) },
      }));
      while (requests.length > 0) requests = (await post(JSON.stringify({ RequestItems: { [table]: requests } }))).UnprocessedItems?.[table] ?? [];
    }
  };
  try {
    await Promise.all(Array.from({ length: concurrency }, worker));
  } finally {
    agent.destroy();
  }
}

/** How many items a partition holds, counted by paged `Query` with `Select: COUNT`. */
export async function countPartition(doc: DynamoDBDocumentClient, table: string, pk: string): Promise<number> {
  let total = 0;
  let start: Record<string, unknown> | undefined;
  do {
    const page = await doc.send(new QueryCommand({ TableName: table, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': pk }, Select: 'COUNT', ExclusiveStartKey: start }));
    total += page.Count ?? 0;
    start = page.LastEvaluatedKey;
  } while (start);
  return total;
}
