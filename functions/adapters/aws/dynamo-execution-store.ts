import { DeleteCommand, GetCommand, PutCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { epochSeconds, type Clock } from '../../domain/clock.js';
import type { Execution, ExecutionChange, ExecutionRef, ExecutionStore } from '../../domain/flows/ports.js';
import { MESSAGE_RETENTION_DAYS } from '../../manifest.js';
import { ifConditionHolds } from './conditional.js';
import { queryPage } from './query-page.js';

/** Execution records expire after seven days (DynamoDB TTL). */
export const EXECUTION_TTL_SECONDS = 7 * 24 * 3600;
/** Stored-aside payloads outlive the dead-letter queue's retention by a day, so a redrive finds them. */
const PAYLOAD_TTL_SECONDS = (MESSAGE_RETENTION_DAYS + 1) * 24 * 3600;
/** Well under DynamoDB's 400 KB item limit. */
const PAYLOAD_CHUNK_CHARS = 300_000;

const recordKey = (ref: ExecutionRef) => ({ pk: `TRIGGER#${ref.triggerId}`, sk: `EXEC#${ref.key}` });
const dedupKey = (triggerId: string, eventId: string) => ({ pk: `DEDUP#${triggerId}#${eventId}`, sk: 'DEDUP' });
const chunkKey = (id: string, index: number) => ({ pk: `PAYLOAD#${id}`, sk: String(index).padStart(4, '0') });


/** Flow output is kept as JSON text: DynamoDB maps stop at 32 levels, flow outputs do not. */
function toExecution(item: Record<string, unknown>): Execution {
  return {
    event_id: item.event_id as string,
    received_at: item.received_at as string,
    ...(item.type !== undefined && { type: item.type as string }),
    status: item.status as Execution['status'],
    ...(item.output_json !== undefined && { output: JSON.parse(item.output_json as string) }),
    ...(item.error !== undefined && { error: item.error as string }),
    attempts: item.attempts as number,
    ...(item.next_attempt_at !== undefined && { next_attempt_at: item.next_attempt_at as string }),
  };
}

export class DynamoExecutionStore implements ExecutionStore {
  constructor(private readonly client: DynamoDBDocumentClient, private readonly table: string, private readonly now: Clock) {}

  private nowSeconds(): number {
    return epochSeconds(this.now());
  }

  async record(ref: ExecutionRef, execution: Execution): Promise<void> {
    const { output, ...rest } = execution;
    await this.client.send(new PutCommand({
      TableName: this.table,
      Item: { ...recordKey(ref), ...rest, ...(output !== undefined && { output_json: JSON.stringify(output) }), expires_at: this.nowSeconds() + EXECUTION_TTL_SECONDS },
    }));
  }

  async discard(ref: ExecutionRef): Promise<void> {
    await this.client.send(new DeleteCommand({ TableName: this.table, Key: recordKey(ref) }));
  }

  async update(ref: ExecutionRef, change: ExecutionChange): Promise<void> {
    const names: Record<string, string> = { '#status': 'status', '#error': 'error' };
    const values: Record<string, unknown> = { ':status': change.status, ':attempts': change.attempts };
    const sets = ['#status = :status', 'attempts = :attempts'];
    const removes: string[] = [];
    const setOrRemove = (attribute: string, value: unknown) => {
      if (value === undefined) {
        removes.push(attribute);
        return;
      }
      const placeholder = `:${attribute.replace('#', '')}`;
      sets.push(`${attribute} = ${placeholder}`);
      values[placeholder] = value;
    };
    setOrRemove('output_json', change.output === undefined ? undefined : JSON.stringify(change.output));
    setOrRemove('#error', change.error);
    setOrRemove('next_attempt_at', change.nextAttemptAt);
    await ifConditionHolds(() => this.client.send(new UpdateCommand({
      TableName: this.table,
      Key: recordKey(ref),
      UpdateExpression: `SET ${sets.join(', ')}${removes.length ? ` REMOVE ${removes.join(', ')}` : ''}`,
      // A late update of an earlier attempt must not overwrite a later attempt's outcome.
      ConditionExpression: 'attribute_exists(pk) AND attempts <= :attempts',
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
    })));
  }

  async list(triggerId: string, page: { limit: number; cursor?: string }) {
    const { items, nextCursor } = await queryPage(this.client, {
      table: this.table,
      pk: `TRIGGER#${triggerId}`,
      skPrefix: 'EXEC#',
      ...page,
      newestFirst: true,
      expiresAfterSeconds: this.nowSeconds(),
    });
    return { items: items.map(toExecution), nextCursor };
  }

  claimEvent(triggerId: string, eventId: string, ttlSeconds: number): Promise<boolean> {
    const now = this.nowSeconds();
    return ifConditionHolds(() => this.client.send(new PutCommand({
      TableName: this.table,
      Item: { ...dedupKey(triggerId, eventId), expires_at: now + ttlSeconds },
      // TTL deletion is lazy: an expired claim counts as no claim.
      ConditionExpression: 'attribute_not_exists(pk) OR expires_at <= :now',
      ExpressionAttributeValues: { ':now': now },
    })));
  }

  async releaseEvent(triggerId: string, eventId: string): Promise<void> {
    await this.client.send(new DeleteCommand({ TableName: this.table, Key: dedupKey(triggerId, eventId) }));
  }

  async storePayload(id: string, payload: string): Promise<{ id: string; chunks: number }> {
    const chunks = Math.max(1, Math.ceil(payload.length / PAYLOAD_CHUNK_CHARS));
    const expiresAt = this.nowSeconds() + PAYLOAD_TTL_SECONDS;
    for (let i = 0; i < chunks; i++) {
      const data = payload.slice(i * PAYLOAD_CHUNK_CHARS, (i + 1) * PAYLOAD_CHUNK_CHARS);
      await this.client.send(new PutCommand({ TableName: this.table, Item: { ...chunkKey(id, i), data, expires_at: expiresAt } }));
    }
    return { id, chunks };
  }

  async loadPayload(ref: { id: string; chunks: number }): Promise<string> {
    const parts: string[] = [];
    for (let i = 0; i < ref.chunks; i++) {
      const { Item } = await this.client.send(new GetCommand({ TableName: this.table, Key: chunkKey(ref.id, i), ConsistentRead: true }));
      if (!Item) throw new Error(`payload ${ref.id} chunk ${i} is missing`);
      parts.push(Item.data as string);
    }
    return parts.join('');
  }
}
