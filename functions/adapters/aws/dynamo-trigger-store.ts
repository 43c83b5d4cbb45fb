import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, GetCommand, PutCommand, QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { TriggerRecord } from '../../domain/triggers/trigger.js';
import type { TriggerStore } from '../../domain/triggers/trigger-store.js';
import { decodeCursor, encodeCursor } from './cursor.js';

const ownerKey = (accountId: string, id: string) => ({ pk: `ACCOUNT#${accountId}`, sk: `TRIGGER#${id}` });
const webhookKey = (webhookId: string) => ({ pk: `WEBHOOK#${webhookId}`, sk: 'TRIGGER' });

const strip = (item: Record<string, unknown>): TriggerRecord => {
  const { pk: _pk, sk: _sk, ...record } = item;
  return record as unknown as TriggerRecord;
};

const isConditionFailure = (error: unknown) => error instanceof ConditionalCheckFailedException;

/**
 * Each trigger is stored twice: under its account (owner's reads, lists, changes) and under its
 * webhook id (the receiver's single read). The owner's item is written first and is the truth;
 * the receiver's copy carries the version and is only ever replaced by a newer one. A removed
 * trigger loses its receiver copy first, so its URL stops working before anything else changes.
 */
export class DynamoTriggerStore implements TriggerStore {
  constructor(private readonly client: DynamoDBDocumentClient, private readonly table: string) {}

  async create(record: TriggerRecord): Promise<void> {
    await this.client.send(new PutCommand({ TableName: this.table, Item: { ...ownerKey(record.account_id, record.id), ...record }, ConditionExpression: 'attribute_not_exists(pk)' }));
    await this.putWebhookCopy(record);
  }

  async get(accountId: string, id: string): Promise<TriggerRecord | undefined> {
    const { Item } = await this.client.send(new GetCommand({ TableName: this.table, Key: ownerKey(accountId, id), ConsistentRead: true }));
    return Item ? strip(Item) : undefined;
  }

  async list(accountId: string, page: { limit: number; cursor?: string }) {
    const pk = `ACCOUNT#${accountId}`;
    const result = await this.client.send(new QueryCommand({
      TableName: this.table,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': pk, ':prefix': 'TRIGGER#' },
      Limit: page.limit,
      ExclusiveStartKey: decodeCursor(page.cursor, pk),
    }));
    return { items: (result.Items ?? []).map(strip), nextCursor: encodeCursor(result.LastEvaluatedKey) };
  }

  async replace(previous: TriggerRecord, next: TriggerRecord): Promise<boolean> {
    try {
      await this.client.send(new PutCommand({
        TableName: this.table,
        Item: { ...ownerKey(next.account_id, next.id), ...next },
        ConditionExpression: 'version = :previous',
        ExpressionAttributeValues: { ':previous': previous.version },
      }));
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
    await this.putWebhookCopy(next);
    if (previous.webhook_id !== next.webhook_id) {
      await this.client.send(new DeleteCommand({ TableName: this.table, Key: webhookKey(previous.webhook_id) }));
    }
    return true;
  }

  async delete(record: TriggerRecord): Promise<void> {
    await this.client.send(new DeleteCommand({ TableName: this.table, Key: webhookKey(record.webhook_id) }));
    await this.client.send(new DeleteCommand({ TableName: this.table, Key: ownerKey(record.account_id, record.id) }));
  }

  async findByWebhookId(webhookId: string): Promise<TriggerRecord | undefined> {
    const { Item } = await this.client.send(new GetCommand({ TableName: this.table, Key: webhookKey(webhookId) }));
    return Item ? strip(Item) : undefined;
  }

  /** Writes the receiver's copy unless a newer version is already there (concurrent changes). */
  private async putWebhookCopy(record: TriggerRecord): Promise<void> {
    try {
      await this.client.send(new PutCommand({
        TableName: this.table,
        Item: { ...webhookKey(record.webhook_id), ...record },
        ConditionExpression: 'attribute_not_exists(pk) OR version < :version',
        ExpressionAttributeValues: { ':version': record.version },
      }));
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
  }
}
