import { QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { decodeCursor, encodeCursor } from './cursor.js';

export interface PageQuery {
  table: string;
  pk: string;
  /** Every listing is a `begins_with` range of one partition; cursors are checked against it. */
  skPrefix: string;
  limit: number;
  cursor?: string;
  newestFirst?: boolean;
  /** Items whose `expires_at` has passed are left out (DynamoDB's TTL deletion is lazy). */
  expiresAfterSeconds?: number;
}

/**
 * DynamoDB applies `Limit` before the expiry filter, so one query can return fewer items than asked
 * while more remain; a page keeps querying from where the last stopped until it is full, up to
 * this many queries, so that one listing's cost stays bounded behind a long run of expired items
 * (the page then comes back short, with a cursor to go on from).
 */
const MAX_QUERIES_PER_PAGE = 8;

/** One page of a partition's items under a sort-key prefix, with an opaque cursor to the next. */
export async function queryPage(client: DynamoDBDocumentClient, query: PageQuery): Promise<{ items: Record<string, unknown>[]; nextCursor: string | null }> {
  const values: Record<string, unknown> = { ':pk': query.pk, ':prefix': query.skPrefix };
  if (query.expiresAfterSeconds !== undefined) values[':now'] = query.expiresAfterSeconds;
  const items: Record<string, unknown>[] = [];
  let startKey = decodeCursor(query.cursor, query.pk, query.skPrefix);
  for (let queries = 0; queries < MAX_QUERIES_PER_PAGE; queries++) {
    const result = await client.send(new QueryCommand({
      TableName: query.table,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      FilterExpression: query.expiresAfterSeconds === undefined ? undefined : 'expires_at > :now',
      ExpressionAttributeValues: values,
      ScanIndexForward: !query.newestFirst,
      Limit: query.limit,
      ExclusiveStartKey: startKey,
    }));
    const found = result.Items ?? [];
    startKey = result.LastEvaluatedKey;
    const room = query.limit - items.length;
    if (found.length > room || (found.length === room && startKey)) {
      // Full: the next page starts after the last item kept here, not after the last one read.
      items.push(...found.slice(0, room));
      return { items, nextCursor: encodeCursor(items.at(-1)) };
    }
    items.push(...found);
    if (!startKey) break;
  }
  return { items, nextCursor: encodeCursor(startKey) };
}
