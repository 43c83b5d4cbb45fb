import { PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { isScope, type ApiKeyEvent, type ApiKeyEventLog } from '../../domain/api-keys.js';
import type { RandomBytes } from '../../domain/random-bytes.js';
import { queryPage } from './query-page.js';

const EVENT_PREFIX = 'KEY_EVENT#';

/**
 * Events as items `KEY_EVENT#<ISO time>#<random>` in the account's partition of the auth table
 * (beside its `KEY#` items, which listing keys never reaches), so a backwards query of the prefix
 * is newest first. Written once, never updated; the auth table has no TTL, so they stay.
 */
export class DynamoApiKeyEventLog implements ApiKeyEventLog {
  constructor(private readonly client: DynamoDBDocumentClient, private readonly table: string, private readonly randomBytes: RandomBytes) {}

  async record(accountId: string, event: ApiKeyEvent): Promise<void> {
    await this.client.send(new PutCommand({
      TableName: this.table,
      Item: {
        pk: `ACCOUNT#${accountId}`,
        sk: `${EVENT_PREFIX}${event.at}#${Buffer.from(this.randomBytes(6)).toString('hex')}`,
        type: event.type, at: event.at, key_id: event.keyId, scopes: event.scopes, actor: event.actor,
        source_ip: event.sourceIp, user_agent: event.userAgent,
      },
    }));
  }

  async list(accountId: string, page: { limit: number; cursor?: string }) {
    const { items, nextCursor } = await queryPage(this.client, { table: this.table, pk: `ACCOUNT#${accountId}`, skPrefix: EVENT_PREFIX, newestFirst: true, ...page });
    const events = items.map((item): ApiKeyEvent => ({
      type: item.type as ApiKeyEvent['type'],
      at: item.at as string,
      keyId: item.key_id as string,
      actor: item.actor as string,
      ...(Array.isArray(item.scopes) && { scopes: item.scopes.filter(isScope) }),
      ...(item.source_ip !== undefined && { sourceIp: item.source_ip as string }),
      ...(item.user_agent !== undefined && { userAgent: item.user_agent as string }),
    }));
    return { events, nextCursor };
  }
}
