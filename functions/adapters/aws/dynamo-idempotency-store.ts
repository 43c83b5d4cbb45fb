import { DeleteCommand, GetCommand, PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { IdempotencyRecord, IdempotencyStore } from '../../domain/idempotency.js';
import { ifConditionHolds } from './conditional.js';

/** The sort key of every record; the partition key is `IDEMPOTENCY#<record id>`. */
const SK = 'IDEMPOTENCY';

/**
 * Idempotency records as one item each, in the table of the function whose routes honour keys
 * (auth for API keys, kv for object uploads and stream publishes, triggers for triggers).
 * `expires_at` is the table's TTL attribute, so AWS deletes a record after its window. dynalite
 * has no TTL (https://github.com/architect/dynalite/issues/103), and AWS deletes expired items only
 * eventually (typically within 48 hours): so expiry is checked on every read and by the claim's
 * condition, never left to the deletion (test/e2e/idempotency.test.ts passes the window on dynalite).
 */
export class DynamoIdempotencyStore implements IdempotencyStore {
  constructor(private readonly client: DynamoDBDocumentClient, private readonly table: string) {}

  async claim(id: string, record: IdempotencyRecord, now: number): Promise<IdempotencyRecord | undefined> {
    // Two tries: the record that refused the claim may be released before it is read.
    for (let attempt = 0; attempt < 2; attempt += 1) {
      const written = await ifConditionHolds(() => this.client.send(new PutCommand({
        TableName: this.table,
        Item: { pk: `IDEMPOTENCY#${id}`, sk: SK, fingerprint: record.fingerprint, state: record.state, locked_until: record.lockedUntil, expires_at: record.expiresAt },
        // Free when absent, expired, or claimed by a request whose lock lapsed (its function died).
        ConditionExpression: 'attribute_not_exists(pk) OR expires_at <= :now OR (#state = :inFlight AND locked_until <= :now)',
        ExpressionAttributeNames: { '#state': 'state' },
        ExpressionAttributeValues: { ':now': now, ':inFlight': 'in_flight' },
      })));
      if (written) return undefined;
      const { Item } = await this.client.send(new GetCommand({ TableName: this.table, Key: { pk: `IDEMPOTENCY#${id}`, sk: SK }, ConsistentRead: true }));
      if (Item && Item.expires_at > now) {
        return { fingerprint: Item.fingerprint, state: Item.state, lockedUntil: Item.locked_until, expiresAt: Item.expires_at, ...(Item.answer !== undefined && { answer: Item.answer }) };
      }
    }
    throw new Error(`idempotency record ${id} could be neither claimed nor read`);
  }

  async finish(id: string, record: IdempotencyRecord): Promise<void> {
    await this.client.send(new PutCommand({
      TableName: this.table,
      Item: { pk: `IDEMPOTENCY#${id}`, sk: SK, fingerprint: record.fingerprint, state: record.state, locked_until: record.lockedUntil, expires_at: record.expiresAt, answer: record.answer },
    }));
  }

  async release(id: string): Promise<void> {
    await this.client.send(new DeleteCommand({ TableName: this.table, Key: { pk: `IDEMPOTENCY#${id}`, sk: SK } }));
  }
}
