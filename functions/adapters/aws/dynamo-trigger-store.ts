import { DeleteCommand, GetCommand, PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { epochSeconds, type Clock } from '../../domain/clock.js';
import type { TriggerRecord } from '../../domain/triggers/trigger.js';
import type { TriggerStore } from '../../domain/triggers/trigger-store.js';
import { ifConditionHolds } from './conditional.js';
import { queryPage } from './query-page.js';

const ownerKey = (accountId: string, id: string) => ({ pk: `ACCOUNT#${accountId}`, sk: `TRIGGER#${id}` });
const webhookKey = (webhookId: string) => ({ pk: `WEBHOOK#${webhookId}`, sk: 'TRIGGER' });

/** A retired webhook id's item carries this version, so no write of any trigger version can revive it. */
const RETIRED_VERSION = Number.MAX_SAFE_INTEGER;
/**
 * How long a retired id's marker is kept. It only has to outlast a write already in flight when
 * the id was retired, which a Lambda's 15-minute limit bounds; a day leaves a wide margin, and
 * after it DynamoDB's TTL removes the marker, so markers do not pile up.
 */
const RETIRED_MARKER_SECONDS = 24 * 60 * 60;

const strip = (item: Record<string, unknown>): TriggerRecord => {
  const { pk: _pk, sk: _sk, ...record } = item;
  return record as unknown as TriggerRecord;
};

/**
 * Each trigger is stored twice: under its account (owner's reads, lists, changes) and under its
 * webhook id (the receiver's single read). The owner's item is written first and is the truth;
 * the receiver's copy carries the version and is only ever replaced by a newer one.
 *
 * The two writes are separate (the local engine, dynalite, has no transactions), so a change can
 * be overtaken between them. A webhook id that stops working (new URL, deleted trigger) is
 * therefore not deleted but retired: its item is replaced by a marker with the highest version,
 * which a late write of an older change cannot overwrite. Without it, a PATCH overtaken by a
 * DELETE would write its receiver copy after the delete and leave a URL no one can revoke:
 *
 *   PATCH: put owner v2 ────────────────────────────────────── put WEBHOOK#w v2 (refused: retired)
 *   DELETE:           read v2 ── retire WEBHOOK#w ── delete owner (if still v2)
 *
 * Markers expire after a day (`expires_at`, the table's TTL attribute); until DynamoDB deletes one,
 * a reader sees it as retired, which answers exactly as a missing id does.
 */
export class DynamoTriggerStore implements TriggerStore {
  constructor(private readonly client: DynamoDBDocumentClient, private readonly table: string, private readonly now: Clock) {}

  async create(record: TriggerRecord): Promise<void> {
    await this.client.send(new PutCommand({ TableName: this.table, Item: { ...ownerKey(record.account_id, record.id), ...record }, ConditionExpression: 'attribute_not_exists(pk)' }));
    await this.putWebhookCopy(record);
  }

  async get(accountId: string, id: string): Promise<TriggerRecord | undefined> {
    const { Item } = await this.client.send(new GetCommand({ TableName: this.table, Key: ownerKey(accountId, id), ConsistentRead: true }));
    return Item ? strip(Item) : undefined;
  }

  async list(accountId: string, page: { limit: number; cursor?: string }) {
    const { items, nextCursor } = await queryPage(this.client, { table: this.table, pk: `ACCOUNT#${accountId}`, skPrefix: 'TRIGGER#', ...page });
    return { items: items.map(strip), nextCursor };
  }

  async replace(previous: TriggerRecord, next: TriggerRecord): Promise<boolean> {
    const replaced = await ifConditionHolds(() => this.client.send(new PutCommand({
      TableName: this.table,
      Item: { ...ownerKey(next.account_id, next.id), ...next },
      ConditionExpression: 'version = :previous',
      ExpressionAttributeValues: { ':previous': previous.version },
    })));
    if (!replaced) return false;
    await this.putWebhookCopy(next);
    if (previous.webhook_id !== next.webhook_id) await this.retireWebhookId(previous.webhook_id);
    return true;
  }

  /** The URL stops working first; the owner's item goes only if it is still the version read. */
  async delete(record: TriggerRecord): Promise<boolean> {
    await this.retireWebhookId(record.webhook_id);
    return ifConditionHolds(() => this.client.send(new DeleteCommand({
      TableName: this.table,
      Key: ownerKey(record.account_id, record.id),
      ConditionExpression: 'version = :version',
      ExpressionAttributeValues: { ':version': record.version },
    })));
  }

  async findByWebhookId(webhookId: string): Promise<TriggerRecord | undefined> {
    const { Item } = await this.client.send(new GetCommand({ TableName: this.table, Key: webhookKey(webhookId) }));
    return Item && Item.retired === undefined ? strip(Item) : undefined;
  }

  /** Writes the receiver's copy unless a newer version (or a retirement) is already there. */
  private async putWebhookCopy(record: TriggerRecord): Promise<void> {
    await ifConditionHolds(() => this.client.send(new PutCommand({
      TableName: this.table,
      Item: { ...webhookKey(record.webhook_id), ...record },
      ConditionExpression: 'attribute_not_exists(pk) OR version < :version',
      ExpressionAttributeValues: { ':version': record.version },
    })));
  }

  private async retireWebhookId(webhookId: string): Promise<void> {
    const expiresAt = epochSeconds(this.now()) + RETIRED_MARKER_SECONDS;
    await this.client.send(new PutCommand({ TableName: this.table, Item: { ...webhookKey(webhookId), retired: true, version: RETIRED_VERSION, expires_at: expiresAt } }));
  }
}
