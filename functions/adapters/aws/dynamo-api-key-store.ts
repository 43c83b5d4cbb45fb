import { DeleteCommand, GetCommand, PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DEFAULT_KEY_SCOPES, isScope, type ApiKeyOwner, type ApiKeyStore, type ApiKeySummary, type Scope, type SearchRestriction } from '../../domain/api-keys.js';
import { queryPage } from './query-page.js';

const accountPk = (accountId: string) => `ACCOUNT#${accountId}`;
const hashPk = (keyHash: string) => `APIKEY#${keyHash}`;

/**
 * A stored key's scopes. A key stored before scopes existed has no `scopes` attribute: it keeps
 * working with {@link DEFAULT_KEY_SCOPES}. An unknown name (from a later version) is dropped, so a
 * key can only ever reach less than its record says, never more.
 */
const searchOf = (item: Record<string, unknown>): { search?: SearchRestriction } =>
  typeof item.search_index === 'string'
    ? { search: { index: item.search_index, ...(typeof item.search_filter === 'string' && { filter: JSON.parse(item.search_filter) as Record<string, unknown> }) } }
    : {};
const scopesOf = (item: Record<string, unknown>): Scope[] =>
  Array.isArray(item.scopes) ? item.scopes.filter(isScope) : [...DEFAULT_KEY_SCOPES];

/**
 * Two items per key: one under the account (listing, revoking) and one under the key's hash (the
 * lookup on every request). Created listing-first and revoked lookup-first, so a crash between the
 * two writes can leave a listed key that does not work, never a working key that cannot be revoked.
 */
export class DynamoApiKeyStore implements ApiKeyStore {
  constructor(private readonly client: DynamoDBDocumentClient, private readonly table: string) {}

  async create(input: { accountId: string; id: string; keyHash: string; createdAt: string; scopes: readonly Scope[]; search?: SearchRestriction }): Promise<void> {
    const scopes = [...input.scopes];
    // A search-only key's index and fixed filter (JSON text), on both items: the lookup by hash enforces them, the listing shows them.
    const search = input.search && { search_index: input.search.index, ...(input.search.filter && { search_filter: JSON.stringify(input.search.filter) }) };
    await this.client.send(new PutCommand({
      TableName: this.table,
      Item: { pk: accountPk(input.accountId), sk: `KEY#${input.id}`, id: input.id, key_hash: input.keyHash, created_at: input.createdAt, scopes, ...search },
    }));
    await this.client.send(new PutCommand({
      TableName: this.table,
      Item: { pk: hashPk(input.keyHash), sk: 'KEY', account_id: input.accountId, id: input.id, scopes, ...search },
    }));
  }

  async findByHash(keyHash: string): Promise<ApiKeyOwner | undefined> {
    const { Item } = await this.client.send(new GetCommand({ TableName: this.table, Key: { pk: hashPk(keyHash), sk: 'KEY' } }));
    return Item ? { accountId: Item.account_id as string, id: Item.id as string, scopes: scopesOf(Item), ...searchOf(Item) } : undefined;
  }

  async list(accountId: string, page: { limit: number; cursor?: string }) {
    const { items, nextCursor } = await queryPage(this.client, { table: this.table, pk: accountPk(accountId), skPrefix: 'KEY#', ...page });
    return { items: items.map((item): ApiKeySummary => ({ id: item.id as string, created_at: item.created_at as string, scopes: scopesOf(item) })), nextCursor };
  }

  async revoke(accountId: string, id: string): Promise<boolean> {
    const key = { pk: accountPk(accountId), sk: `KEY#${id}` };
    const { Item } = await this.client.send(new GetCommand({ TableName: this.table, Key: key, ConsistentRead: true }));
    if (!Item) return false;
    await this.client.send(new DeleteCommand({ TableName: this.table, Key: { pk: hashPk(Item.key_hash as string), sk: 'KEY' } }));
    await this.client.send(new DeleteCommand({ TableName: this.table, Key: key }));
    return true;
  }
}
