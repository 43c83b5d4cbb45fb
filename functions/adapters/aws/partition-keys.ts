import { BatchWriteCommand, QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/*
 * One partition's sort keys, read and deleted page by page: how each kind of store's sweep reclaims
 * a generation it no longer uses (KV buckets, object stores' catalogs, streams).
 */

/** BatchWriteItem's limit. */
const BATCH_WRITE_ITEMS = 25;
/** Batch deletes in flight at once while sweeping. */
const SWEEP_WRITE_CONCURRENCY = 4;
const UNPROCESSED_RETRY_BASE_MS = 50;
const UNPROCESSED_RETRY_MAX_MS = 5_000;
const UNPROCESSED_MAX_ATTEMPTS = 10;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Deletes the items `pk`/`sk` for every `sk` in `keys`: batches of 25, four at a time (what the sweepers use). */
export async function deleteSortKeys(client: DynamoDBDocumentClient, table: string, pk: string, keys: string[]): Promise<void> {
  const batches: string[][] = [];
  for (let i = 0; i < keys.length; i += BATCH_WRITE_ITEMS) batches.push(keys.slice(i, i + BATCH_WRITE_ITEMS));
  let next = 0;
  const worker = async () => {
    while (next < batches.length) await deleteBatch(client, table, pk, batches[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(SWEEP_WRITE_CONCURRENCY, batches.length) }, worker));
}

/** One BatchWriteItem, retrying what DynamoDB leaves unprocessed (throttling) with capped, jittered backoff. */
async function deleteBatch(client: DynamoDBDocumentClient, table: string, pk: string, keys: string[]): Promise<void> {
  let requests: Record<string, unknown>[] = keys.map((sk) => ({ DeleteRequest: { Key: { pk, sk } } }));
  for (let attempt = 0; ; attempt++) {
    const { UnprocessedItems } = await client.send(new BatchWriteCommand({ RequestItems: { [table]: requests } }));
    requests = (UnprocessedItems?.[table] ?? []) as Record<string, unknown>[];
    if (requests.length === 0) return;
    if (attempt + 1 >= UNPROCESSED_MAX_ATTEMPTS) throw new Error(`${requests.length} deletes left unprocessed after ${UNPROCESSED_MAX_ATTEMPTS} attempts`);
    await sleep(Math.random() * Math.min(UNPROCESSED_RETRY_MAX_MS, UNPROCESSED_RETRY_BASE_MS * 2 ** attempt));
  }
}

/** Up to `page.limit` sort keys of partition `pk` after `page.after`, in order; `last` is undefined when none are left. */
export async function scanSortKeys(client: DynamoDBDocumentClient, table: string, pk: string, page: { after?: string; limit: number }): Promise<{ keys: string[]; last?: string }> {
  const result = await client.send(new QueryCommand({
    TableName: table,
    KeyConditionExpression: 'pk = :pk',
    ProjectionExpression: 'sk',
    ExpressionAttributeValues: { ':pk': pk },
    Limit: page.limit,
    ExclusiveStartKey: page.after === undefined ? undefined : { pk, sk: page.after },
    ConsistentRead: true,
  }));
  return { keys: (result.Items ?? []).map((item) => item.sk as string), last: result.LastEvaluatedKey?.sk as string | undefined };
}
