import {
  DeleteCommand,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
  type DynamoDBDocumentClient,
} from '@aws-sdk/lib-dynamodb';
import { BUCKET_NAME_PATTERN } from '../../domain/kv/limits.js';
import type { Bucket, BucketConfig, BucketPage, BucketRef, GenerationRef, KeyPage, KvStore, NewValue, StoredValue } from '../../domain/kv/types.js';
import { isValidKey } from '../../domain/kv/validation.js';
import { AppError } from '../../shared/errors.js';
import { deleteSortKeys, scanSortKeys } from './partition-keys.js';
import { ifConditionHolds } from './conditional.js';
import { decodeCursor, encodeCursor } from './cursor.js';

/**
 * Item layout. Bucket names and generations contain no `#`, so both keys read unambiguously from
 * the right even when an account id contains one.
 *
 * - `BUCKET#{account}#{bucket}` / `#META`: name, description, ttl_seconds, max_value_bytes,
 *   created_at, generation, and `bucket_owner` (the account id), which puts the item in the
 *   `byOwner` index (`bucket_owner` / `name`): an account's buckets are one Query of that index.
 * - `DATA#{account}#{bucket}#{generation}` / `{key}`: value (binary), content_type, revision,
 *   expires_at (epoch seconds: the kv table's TTL attribute, so DynamoDB deletes expired values).
 */
export const bucketKey = (ref: BucketRef) => ({ pk: `BUCKET#${ref.accountId}#${ref.name}`, sk: '#META' });
export const generationPk = (at: GenerationRef): string => `DATA#${at.accountId}#${at.name}#${at.generation}`;

/**
 * The kv table's index of buckets by account (`TABLES.kv.indexes` in the manifest). Only
 * configuration items carry its partition key, so values never enter it. A bucket created before
 * the index existed joins it the first time it is used (any read or write of it, or its purge).
 */
export const BUCKETS_BY_OWNER = { indexName: 'byOwner', partitionKey: 'bucket_owner', sortKey: 'name' } as const;

/**
 * Where a value's expiry is written, in epoch seconds as DynamoDB TTL requires. The kv table's
 * `ttlAttribute` in `functions/manifest.ts` must name it (the template tests hold them together).
 */
export const VALUE_EXPIRY_ATTRIBUTE = 'expires_at';


const toBucket = (accountId: string, item: Record<string, unknown>): Bucket => ({
  accountId,
  name: item.name as string,
  config: {
    description: (item.description as string | undefined) ?? null,
    ttlSeconds: (item.ttl_seconds as number | undefined) ?? null,
    maxValueBytes: item.max_value_bytes as number,
  },
  createdAt: item.created_at as string,
  generation: item.generation as string,
});

export class DynamoKvStore implements KvStore {
  /**
   * @param options.indexOnRead put a bucket created before the `byOwner` index into it when it is
   *   read (an UpdateItem): the kv function's store does; the sweeper's, which may not update
   *   configuration items, does not.
   */
  constructor(private readonly client: DynamoDBDocumentClient, private readonly table: string, private readonly options: { indexOnRead?: boolean } = {}) {}

  createBucket(bucket: Bucket): Promise<boolean> {
    return ifConditionHolds(() => this.client.send(new PutCommand({
      TableName: this.table,
      Item: {
        ...bucketKey(bucket),
        name: bucket.name,
        description: bucket.config.description ?? undefined,
        ttl_seconds: bucket.config.ttlSeconds ?? undefined,
        max_value_bytes: bucket.config.maxValueBytes,
        created_at: bucket.createdAt,
        generation: bucket.generation,
        [BUCKETS_BY_OWNER.partitionKey]: bucket.accountId,
      },
      ConditionExpression: 'attribute_not_exists(pk)',
    })));
  }

  /**
   * Replaces the configuration of an existing bucket in one conditional write; its name,
   * created_at and generation stay. `undefined` when there is no such bucket.
   */
  async updateConfig(ref: BucketRef, config: BucketConfig): Promise<Bucket | undefined> {
    const fields: [string, string | number | null][] = [
      ['description', config.description], ['ttl_seconds', config.ttlSeconds], ['max_value_bytes', config.maxValueBytes],
    ];
    const set = fields.filter(([, value]) => value !== null);
    const remove = fields.filter(([, value]) => value === null);
    let Attributes: Record<string, unknown> | undefined;
    const updated = await ifConditionHolds(async () => {
      ({ Attributes } = await this.client.send(new UpdateCommand({
        TableName: this.table,
        Key: bucketKey(ref),
        // Also indexes a bucket created before the byOwner index, as a purge does.
        UpdateExpression: `SET ${[...set.map(([name]) => `#${name} = :${name}`), '#owner = :owner'].join(', ')}` +
          (remove.length > 0 ? ` REMOVE ${remove.map(([name]) => `#${name}`).join(', ')}` : ''),
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeNames: { ...Object.fromEntries(fields.map(([name]) => [`#${name}`, name])), '#owner': BUCKETS_BY_OWNER.partitionKey },
        ExpressionAttributeValues: { ...Object.fromEntries(set.map(([name, value]) => [`:${name}`, value])), ':owner': ref.accountId },
        ReturnValues: 'ALL_NEW',
      })));
    });
    return updated && Attributes ? toBucket(ref.accountId, Attributes) : undefined;
  }

  async getBucket(ref: BucketRef): Promise<Bucket | undefined> {
    const { Item } = await this.client.send(new GetCommand({ TableName: this.table, Key: bucketKey(ref), ConsistentRead: true }));
    if (this.options.indexOnRead && Item && Item[BUCKETS_BY_OWNER.partitionKey] === undefined) await this.index(ref);
    return Item && toBucket(ref.accountId, Item);
  }

  /** Puts a bucket created before the `byOwner` index into it: one small write, once per such bucket. */
  private async index(ref: BucketRef): Promise<void> {
    await ifConditionHolds(() => this.client.send(new UpdateCommand({
      TableName: this.table,
      Key: bucketKey(ref),
      UpdateExpression: 'SET #owner = :owner',
      ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(#owner)',
      ExpressionAttributeNames: { '#owner': BUCKETS_BY_OWNER.partitionKey },
      ExpressionAttributeValues: { ':owner': ref.accountId },
    })));
  }

  /**
   * One page of the account's buckets in name order, from the `byOwner` index. Index reads are
   * eventually consistent: a bucket created a moment ago may be missing from a listing for a moment.
   */
  async listBuckets(accountId: string, page: { limit: number; cursor?: string }): Promise<BucketPage> {
    const after = decodeCursor(page.cursor, accountId)?.sk as string | undefined;
    // A forged cursor must not reach DynamoDB as a key it would refuse, nor point into another account.
    if (after !== undefined && !BUCKET_NAME_PATTERN.test(after)) throw new AppError('validation_error', undefined, undefined, 'cursor does not belong to this listing');
    const result = await this.client.send(new QueryCommand({
      TableName: this.table,
      IndexName: BUCKETS_BY_OWNER.indexName,
      KeyConditionExpression: '#owner = :owner',
      ExpressionAttributeNames: { '#owner': BUCKETS_BY_OWNER.partitionKey },
      ExpressionAttributeValues: { ':owner': accountId },
      Limit: page.limit,
      ExclusiveStartKey: after === undefined
        ? undefined
        : { ...bucketKey({ accountId, name: after }), [BUCKETS_BY_OWNER.partitionKey]: accountId, [BUCKETS_BY_OWNER.sortKey]: after },
    }));
    const last = result.LastEvaluatedKey;
    return {
      buckets: (result.Items ?? []).map((item) => toBucket(accountId, item)),
      nextCursor: encodeCursor(last && { sk: last[BUCKETS_BY_OWNER.sortKey] }),
    };
  }

  swapGeneration(ref: BucketRef, expected: string, next: string): Promise<boolean> {
    return ifConditionHolds(() => this.client.send(new UpdateCommand({
      TableName: this.table,
      Key: bucketKey(ref),
      // Also indexes a bucket created before the byOwner index: the same small item, no extra write.
      UpdateExpression: 'SET generation = :next, #owner = :owner',
      ConditionExpression: 'generation = :expected',
      ExpressionAttributeNames: { '#owner': BUCKETS_BY_OWNER.partitionKey },
      ExpressionAttributeValues: { ':next': next, ':expected': expected, ':owner': ref.accountId },
    })));
  }

  deleteBucket(ref: BucketRef, expected: string): Promise<boolean> {
    return ifConditionHolds(() => this.client.send(new DeleteCommand({
      TableName: this.table,
      Key: bucketKey(ref),
      ConditionExpression: 'generation = :expected',
      ExpressionAttributeValues: { ':expected': expected },
    })));
  }

  async putValue(at: GenerationRef, key: string, value: NewValue): Promise<number> {
    const values: Record<string, unknown> = { ':value': value.bytes, ':content_type': value.contentType, ':one': 1 };
    if (value.expiresAt !== undefined) values[':expires_at'] = value.expiresAt;
    const expiry = value.expiresAt === undefined ? ` REMOVE ${VALUE_EXPIRY_ATTRIBUTE}` : `, ${VALUE_EXPIRY_ATTRIBUTE} = :expires_at`;
    // One write: the value, its content type and its expiry replace the old ones, and the revision counts up.
    const { Attributes } = await this.client.send(new UpdateCommand({
      TableName: this.table,
      Key: { pk: generationPk(at), sk: key },
      UpdateExpression: `SET #value = :value, content_type = :content_type${expiry} ADD revision :one`,
      ExpressionAttributeNames: { '#value': 'value' },
      ExpressionAttributeValues: values,
      ReturnValues: 'UPDATED_NEW',
    }));
    return Attributes!.revision as number;
  }

  async getValue(at: GenerationRef, key: string): Promise<StoredValue | undefined> {
    const { Item } = await this.client.send(new GetCommand({ TableName: this.table, Key: { pk: generationPk(at), sk: key }, ConsistentRead: true }));
    if (!Item) return undefined;
    return {
      bytes: Item.value as Uint8Array,
      contentType: Item.content_type as string,
      revision: Item.revision as number,
      expiresAt: Item[VALUE_EXPIRY_ATTRIBUTE] as number | undefined,
    };
  }

  deleteValue(at: GenerationRef, key: string, nowSeconds: number): Promise<boolean> {
    return ifConditionHolds(() => this.client.send(new DeleteCommand({
      TableName: this.table,
      Key: { pk: generationPk(at), sk: key },
      ConditionExpression: `attribute_exists(sk) AND (attribute_not_exists(${VALUE_EXPIRY_ATTRIBUTE}) OR ${VALUE_EXPIRY_ATTRIBUTE} > :now)`,
      ExpressionAttributeValues: { ':now': nowSeconds },
    })));
  }

  async listKeys(at: GenerationRef, page: { prefix?: string; limit: number; cursor?: string; nowSeconds: number }): Promise<KeyPage> {
    const pk = generationPk(at);
    const start = decodeCursor(page.cursor, pk, page.prefix);
    // A forged cursor must not reach DynamoDB as a key it would refuse.
    if (start && !isValidKey(start.sk as string)) {
      throw new AppError('validation_error', undefined, undefined, 'cursor does not belong to this listing');
    }
    const values: Record<string, unknown> = { ':pk': pk, ':now': page.nowSeconds };
    if (page.prefix) values[':prefix'] = page.prefix;
    const result = await this.client.send(new QueryCommand({
      TableName: this.table,
      KeyConditionExpression: page.prefix ? 'pk = :pk AND begins_with(sk, :prefix)' : 'pk = :pk',
      FilterExpression: `attribute_not_exists(${VALUE_EXPIRY_ATTRIBUTE}) OR ${VALUE_EXPIRY_ATTRIBUTE} > :now`,
      ProjectionExpression: 'sk',
      ExpressionAttributeValues: values,
      Limit: page.limit,
      ExclusiveStartKey: start,
      ConsistentRead: true,
    }));
    return { keys: (result.Items ?? []).map((item) => item.sk as string), nextCursor: encodeCursor(result.LastEvaluatedKey) };
  }

  scanGeneration(at: GenerationRef, page: { after?: string; limit: number }): Promise<{ keys: string[]; last?: string }> {
    return scanSortKeys(this.client, this.table, generationPk(at), page);
  }

  deleteFromGeneration(at: GenerationRef, keys: string[]): Promise<void> {
    return deleteSortKeys(this.client, this.table, generationPk(at), keys);
  }
}
