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

/** One page of a partition's items under a sort-key prefix, with an opaque cursor to the next. */
export async function queryPage(client: DynamoDBDocumentClient, query: PageQuery): Promise<{ items: Record<string, unknown>[]; nextCursor: string | null }> {
  const values: Record<string, unknown> = { ':pk': query.pk, ':prefix': query.skPrefix };
  if (query.expiresAfterSeconds !== undefined) values[':now'] = query.expiresAfterSeconds;
  const result = await client.send(new QueryCommand({
    TableName: query.table,
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    FilterExpression: query.expiresAfterSeconds === undefined ? undefined : 'expires_at > :now',
    ExpressionAttributeValues: values,
    ScanIndexForward: !query.newestFirst,
    Limit: query.limit,
    ExclusiveStartKey: decodeCursor(query.cursor, query.pk, query.skPrefix),
  }));
  return { items: result.Items ?? [], nextCursor: encodeCursor(result.LastEvaluatedKey) };
}
