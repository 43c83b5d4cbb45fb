/**
 * Loaded by `DynamoExecutionStore` on its rare paths, one chunk of the bundle: what follows an
 * update that was refused (a success written over a later attempt's failure, the change's timeline
 * entry where that keeps the timeline true, and why), and the status a retry reads before it runs.
 * An attempt that is written at once never loads it.
 */
import { GetCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { AttemptRecord, ExecutionChange, ExecutionStatus, RecordState, ReplacingUpdate } from '../../../domain/flows/ports.js';
import { recordState } from '../dynamo-execution-store.js';
import { ifConditionHolds } from '../conditional.js';

type Key = Record<string, string>;

/** A refused change as the store built it, less its `attempts`: the update a success is written again with. */
export interface RefusedChange {
  TableName: string;
  Key: Key;
  UpdateExpression: string;
  ExpressionAttributeNames: Record<string, string>;
  ExpressionAttributeValues: Record<string, unknown>;
}

/**
 * After `DynamoExecutionStore.update`'s conditional write was refused: a success is written again
 * unless the record says `succeeded` already, whatever later attempt it shows (its `attempts` kept,
 * the higher); anything else reads the record (strongly consistent) to say why, and writes its own
 * timeline entry when the timeline has none under its attempt number, or only that run's start: a
 * copy's run then shows how it ended, and a finished entry is never replaced.
 */
export async function refusedUpdate(client: DynamoDBDocumentClient, update: RefusedChange, change: ExecutionChange): Promise<ReplacingUpdate> {
  if (change.status === 'succeeded') {
    let replaced: RecordState | undefined;
    const written = await ifConditionHolds(async () => {
      // ALL_OLD: `attempts` is not among what this write sets, and what the record counted as needs it.
      const { Attributes } = await client.send(new UpdateCommand({ ...update, ConditionExpression: 'attribute_exists(pk) AND #status <> :succeeded', ReturnValues: 'ALL_OLD' }));
      replaced = recordState(Attributes);
    });
    if (written) return { result: 'written', replaced: replaced! };
  }
  const { TableName, Key: key } = update;
  const entry = change.attempt;
  const names: Record<string, string> = { '#status': 'status', ...(entry && { '#attempt': String(entry.attempt) }) };
  const { Item } = await client.send(new GetCommand({
    TableName, Key: key, ProjectionExpression: entry ? '#status, timeline.#attempt' : '#status', ExpressionAttributeNames: names, ConsistentRead: true,
  }));
  if (!Item) return { result: 'outdated' };
  const current = entry && (Item.timeline as Record<string, AttemptRecord> | undefined)?.[String(entry.attempt)];
  if (entry && (current === undefined || current.status === 'running')) {
    await ifConditionHolds(() => client.send(new UpdateCommand({
      TableName,
      Key: key,
      UpdateExpression: 'SET timeline.#attempt = :entry',
      ConditionExpression: 'attribute_exists(pk) AND (attribute_not_exists(timeline.#attempt) OR timeline.#attempt.#status = :running)',
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: { ':entry': entry, ':running': 'running' },
    })));
  }
  return { result: Item.status === 'succeeded' ? 'succeeded_already' : 'outdated' };
}

/** The record's status, strongly consistent; undefined when there is none, or it has expired (TTL deletion is lazy). */
export async function statusOf(client: DynamoDBDocumentClient, table: string, key: Key, nowSeconds: number): Promise<ExecutionStatus | undefined> {
  const { Item } = await client.send(new GetCommand({
    TableName: table, Key: key, ProjectionExpression: '#status, expires_at', ExpressionAttributeNames: { '#status': 'status' }, ConsistentRead: true,
  }));
  return Item && (Item.expires_at as number) > nowSeconds ? Item.status as ExecutionStatus : undefined;
}
