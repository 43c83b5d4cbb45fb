import { Agent, request } from 'node:http';
import { createRequire } from 'node:module';
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
const wireValue = (value: string | number | Buffer): Record<string, string> =>
  typeof value === 'string' ? { S: value } : typeof value === 'number' ? { N: String(value) } : { B: value.toString('base64') };

/** The most items one `BatchWriteItem` takes (DynamoDB's limit, which dynalite enforces). */
const BATCH = 25;

type WireItem = Record<string, Record<string, string>>;
type Callback = (error?: Error | null) => void;
/** What this file uses of dynalite's `db` module (`db/index.js`; `writeItem` is exported by Flowgate's patch of it). */
interface DynaliteDb {
  writeItem(store: unknown, table: unknown, key: string, existingItem: unknown, item: WireItem, cb: Callback): void;
  createKey(item: WireItem, table: unknown): string;
  validateItem(item: WireItem, table: unknown): unknown;
}
/** The module dynalite's own actions require: Node keeps one instance of it per process. */
const dynaliteDb = createRequire(import.meta.url)('dynalite/db') as DynaliteDb;
/** dynalite's store and table description, by table name, as its last `PutItem` in this process passed them to `writeItem`. */
const seenTables = new Map<string, { store: unknown; table: unknown }>();
const writeItem = dynaliteDb.writeItem;
dynaliteDb.writeItem = function (store, table, key, existingItem, item, cb) {
  seenTables.set((table as { TableName: string }).TableName, { store, table });
  return writeItem.call(this, store, table, key, existingItem, item, cb);
};

/**
 * Writes `count` new items into the table at the dynalite `endpoint`. The first batch goes by
 * `BatchWriteItem` over HTTP, with its JSON built by hand; when that dynalite runs in this process
 * (the purge bench's engines do), the rest are put as its `PutItem` puts them, through its own
 * `writeItem` (the item and its index entries in one LevelDB batch), after its own validation, but
 * without the HTTP request, the JSON and the per-key lock and read: the fill of 200,000 keys took
 * 20 s of CPU through the API. Otherwise every batch goes over HTTP, `concurrency` at once. Only
 * for new keys (no existing item is read) and for benches that need large partitions before they
 * measure anything; the benches count the partition through the API afterwards.
 */
export async function fillTable(endpoint: string, table: string, count: number, itemAt: (i: number) => FillItem, concurrency = 16): Promise<void> {
  const wireItem = (i: number): WireItem => Object.fromEntries(Object.entries(itemAt(i)).map(([name, value]) => [name, wireValue(value)]));
  const { hostname, port } = new URL(endpoint);
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  const headers = {
    'content-type': 'application/x-amz-json-1.0',
    'x-amz-target': 'DynamoDB_20120810.BatchWriteItem',
    // dynalite checks that a request is signed, not the signature.
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
  const overHttp = async (from: number, to: number) => {
    let next = from;
    const worker = async () => {
      while (next < to) {
        const start = next;
        next = Math.min(to, next + BATCH);
        let requests: unknown[] = Array.from({ length: next - start }, (_, i) => ({ PutRequest: { Item: wireItem(start + i) } }));
        while (requests.length > 0) requests = (await post(JSON.stringify({ RequestItems: { [table]: requests } }))).UnprocessedItems?.[table] ?? [];
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
  };
  try {
    seenTables.delete(table);
    await overHttp(0, Math.min(count, BATCH));
    const engine = seenTables.get(table);
    if (!engine) return await overHttp(BATCH, count);
    for (let start = BATCH; start < count; start += 1000) {
      await Promise.all(Array.from({ length: Math.min(1000, count - start) }, (_, i) => new Promise<void>((done, fail) => {
        const item = wireItem(start + i);
        const invalid = dynaliteDb.validateItem(item, engine.table);
        if (invalid != null) return fail(invalid);
        writeItem(engine.store, engine.table, dynaliteDb.createKey(item, engine.table), null, item, (error) => error ? fail(error) : done());
      })));
    }
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
