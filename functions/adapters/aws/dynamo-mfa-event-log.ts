import { PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { epochSeconds, type Clock } from '../../domain/clock.js';
import { MFA_EVENT_RETENTION_DAYS, type MfaEvent, type MfaEventLog } from '../../domain/accounts/ports.js';
import type { RandomBytes } from '../../domain/random-bytes.js';
import { userPartitionKey } from './dynamo-mfa-store.js';
import { queryPage } from './query-page.js';

const EVENT_PREFIX = 'MFA_EVENT#';
const RETENTION_SECONDS = MFA_EVENT_RETENTION_DAYS * 24 * 3600;

/**
 * Events as items `MFA_EVENT#<ISO time>#<random>` in the user's partition, so a query of the
 * prefix backwards is newest first; `expires_at` (the table's TTL) deletes each after 90 days, and
 * listings leave out the expired ones TTL has not reached yet. Written once, never updated.
 */
export class DynamoMfaEventLog implements MfaEventLog {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly table: string,
    private readonly deps: { now: Clock; randomBytes: RandomBytes },
  ) {}

  async record(subject: string, event: MfaEvent): Promise<void> {
    await this.client.send(new PutCommand({
      TableName: this.table,
      Item: {
        pk: userPartitionKey(subject),
        sk: `${EVENT_PREFIX}${event.at}#${Buffer.from(this.deps.randomBytes(6)).toString('hex')}`,
        type: event.type,
        at: event.at,
        factor_id: event.factorId,
        source_ip: event.sourceIp,
        user_agent: event.userAgent,
        actor: event.actor,
        expires_at: epochSeconds(Date.parse(event.at)) + RETENTION_SECONDS,
      },
    }));
  }

  async list(subject: string, page: { limit: number; cursor?: string }) {
    const { items, nextCursor } = await queryPage(this.client, {
      table: this.table, pk: userPartitionKey(subject), skPrefix: EVENT_PREFIX,
      limit: page.limit, cursor: page.cursor, newestFirst: true, expiresAfterSeconds: epochSeconds(this.deps.now()),
    });
    const events: MfaEvent[] = items.map((item) => ({
      type: item.type as MfaEvent['type'],
      at: item.at as string,
      ...(item.factor_id !== undefined && { factorId: item.factor_id as string }),
      ...(item.source_ip !== undefined && { sourceIp: item.source_ip as string }),
      ...(item.user_agent !== undefined && { userAgent: item.user_agent as string }),
      ...(item.actor !== undefined && { actor: item.actor as string }),
    }));
    return { events, nextCursor };
  }
}
