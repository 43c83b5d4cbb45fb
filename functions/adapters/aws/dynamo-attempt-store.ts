import { DeleteCommand, PutCommand, QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { AttemptBucket, AttemptSlot, AttemptStore } from '../../domain/accounts/index.js';
import { ifConditionHolds } from './conditional.js';
import { userPartitionKey } from './dynamo-mfa-store.js';

const slotPrefix = (bucket: AttemptBucket) => `ATTEMPT#${bucket}#`;

/**
 * Attempt slots as items `ATTEMPT#<bucket>#<slot>` in the user's partition, holding
 * `attempted_at` (epoch ms), the claiming `reservation` and `expires_at` (epoch s, the table's
 * TTL). TTL deletion is lazy, so nothing here relies on it: a slot is free by its `attempted_at`.
 */
export class DynamoAttemptStore implements AttemptStore {
  constructor(private readonly client: DynamoDBDocumentClient, private readonly table: string) {}

  async listSlots(subject: string, bucket: AttemptBucket): Promise<AttemptSlot[]> {
    const prefix = slotPrefix(bucket);
    const { Items } = await this.client.send(new QueryCommand({
      TableName: this.table,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': userPartitionKey(subject), ':prefix': prefix },
      ConsistentRead: true,
    }));
    return (Items ?? []).map((item) => ({
      slot: Number((item.sk as string).slice(prefix.length)),
      attemptedAtMs: item.attempted_at as number,
    }));
  }

  claimSlot(input: Parameters<AttemptStore['claimSlot']>[0]): Promise<boolean> {
    return ifConditionHolds(() => this.client.send(new PutCommand({
      TableName: this.table,
      Item: {
        pk: userPartitionKey(input.subject),
        sk: slotPrefix(input.bucket) + input.slot,
        attempted_at: input.attemptedAtMs,
        reservation: input.reservation,
        expires_at: input.expiresAt,
      },
      // The check and the claim in one write: two attempts can never hold the same slot.
      ConditionExpression: 'attribute_not_exists(pk) OR attempted_at <= :free',
      ExpressionAttributeValues: { ':free': input.freeIfAttemptedAtOrBeforeMs },
    })));
  }

  async releaseSlot(input: { subject: string; bucket: AttemptBucket; slot: number; reservation: string }): Promise<void> {
    await ifConditionHolds(() => this.client.send(new DeleteCommand({
      TableName: this.table,
      Key: { pk: userPartitionKey(input.subject), sk: slotPrefix(input.bucket) + input.slot },
      // Only our own claim: once the window has passed another attempt may have taken the slot.
      ConditionExpression: 'reservation = :reservation',
      ExpressionAttributeValues: { ':reservation': input.reservation },
    })));
  }
}
