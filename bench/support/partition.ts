import { BatchWriteCommand, QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/** Writes up to 25 items in one `BatchWriteItem`, sending again what the engine leaves unprocessed. */
export async function writeBatch(doc: DynamoDBDocumentClient, table: string, items: Record<string, unknown>[]): Promise<void> {
  let requests: unknown[] = items.map((Item) => ({ PutRequest: { Item } }));
  while (requests.length > 0) {
    const result = await doc.send(new BatchWriteCommand({ RequestItems: { [table]: requests as never } }));
    requests = result.UnprocessedItems?.[table] ?? [];
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
