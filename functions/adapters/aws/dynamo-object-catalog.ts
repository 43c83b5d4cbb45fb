import { DeleteCommand, GetCommand, PutCommand, QueryCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { CATALOG_TTL_GRACE_SECONDS, STORE_NAME_PATTERN } from '../../domain/objects/limits.js';
import type { ObjectCatalog, ObjectInfo, ObjectPage, Store, StoreGeneration, StorePage, StoreRef, Upload } from '../../domain/objects/types.js';
import { AppError } from '../../shared/errors.js';
import { deleteSortKeys } from './partition-keys.js';
import { ifConditionHolds } from './conditional.js';
import { decodeCursor, encodeCursor } from './cursor.js';
import { queryPage } from './query-page.js';

/**
 * Item layout, in the kv table beside the KV buckets (their own key prefixes, no index):
 *
 * - `OBJSTORES#{account}` / `{store}`: id, generation, description, max_bytes, max_object_size,
 *   ttl_seconds, allowed_content_types, created_at, the usage counters `objects` and `bytes`, and
 *   expiry_due (when the store's next expiry pass is due, if one is).
 *   An account's stores are one partition, so listing them is one Query.
 * - `OBJECT#{store id}#{generation}` / `{key}`: size, etag, content_type, metadata, last_modified,
 *   revision, blob (the name of its bytes in the generation), live_until (when it expires) and
 *   expires_at, the kv table's TTL attribute, `CATALOG_TTL_GRACE_SECONDS` later: the product's
 *   expiry pass, which gives the usage back and deletes the bytes, always comes first. Entries
 *   written before live_until existed have expires_at at the expiry itself, and read it as such.
 *
 * - `OBJUPLOAD#{store id}#{generation}` / `{upload id}`: key, size, content_type, metadata, blob,
 *   multipart_id, live_until, url_expires_at, and sweep_at once closed (completed or aborted):
 *   the entry stays until then, for the pass that removes what its URL may still bring. Creating
 *   one costs UpdateItem (usage) + PutItem; completing it UpdateItem (close) + GetItem + PutItem
 *   (object) + UpdateItem (usage), and the pass's DeleteItem after its URLs expire.
 *
 * One API write of an object costs: GetItem (store) + GetItem (object) + UpdateItem (usage, the
 * small store item) + PutItem (object, about 300 bytes plus key and metadata: 1 write unit).
 */
export const storesPk = (accountId: string): string => `OBJSTORES#${accountId}`;
export const objectsPk = (at: StoreGeneration): string => `OBJECT#${at.id}#${at.generation}`;
export const uploadsPk = (at: StoreGeneration): string => `OBJUPLOAD#${at.id}#${at.generation}`;
const storeKey = (ref: StoreRef) => ({ pk: storesPk(ref.accountId), sk: ref.name });

/** The largest code point: appended to a common prefix, it starts a query after every key under it. */
const AFTER_EVERYTHING = '\u{10FFFF}';
/** A listing page reads at most this many DynamoDB pages (it skips one subtree a query). */
const MAX_QUERIES_PER_PAGE = 16;

const toStore = (accountId: string, item: Record<string, unknown>): Store => ({
  accountId,
  name: item.sk as string,
  id: item.id as string,
  generation: item.generation as string,
  config: {
    description: (item.description as string | undefined) ?? null,
    maxBytes: (item.max_bytes as number | undefined) ?? null,
    maxObjectSize: item.max_object_size as number,
    ttlSeconds: (item.ttl_seconds as number | undefined) ?? null,
    allowedContentTypes: (item.allowed_content_types as string[] | undefined) ?? null,
  },
  createdAt: item.created_at as string,
  usage: { objects: (item.objects as number | undefined) ?? 0, bytes: (item.bytes as number | undefined) ?? 0 },
  ...(item.expiry_due !== undefined && { expiryDue: item.expiry_due as number }),
});

const toObject = (item: Record<string, unknown>): ObjectInfo => ({
  key: item.sk as string,
  size: item.size as number,
  etag: item.etag as string,
  contentType: item.content_type as string,
  metadata: (item.metadata as Record<string, string> | undefined) ?? {},
  lastModified: item.last_modified as string,
  revision: item.revision as number,
  ...(item.blob !== undefined && { blob: item.blob as string }),
  ...(liveUntil(item) !== undefined && { expiresAt: liveUntil(item) }),
});

/** When an entry expires for the product: `live_until`, or `expires_at` of entries written before it (which had no grace). */
const liveUntil = (item: Record<string, unknown>): number | undefined => (item.live_until ?? item.expires_at) as number | undefined;
/** The TTL attribute of an entry that expires at `at`: DynamoDB may delete it only well after the product's pass. */
const ttlAfter = (at: number | undefined): number | undefined => (at === undefined ? undefined : at + CATALOG_TTL_GRACE_SECONDS);

const toUpload = (item: Record<string, unknown>): Upload => ({
  id: item.sk as string,
  key: item.key as string,
  size: item.size as number,
  contentType: item.content_type as string,
  metadata: (item.metadata as Record<string, string> | undefined) ?? {},
  // Uploads made before names were per upload landed at the key itself.
  blob: (item.blob ?? item.key) as string,
  ...(item.multipart_id !== undefined && { multipartId: item.multipart_id as string }),
  ...((item.if_none_match !== undefined || item.if_match !== undefined) && {
    condition: { ...(item.if_none_match === true && { ifNoneMatch: true }), ...(item.if_match !== undefined && { ifMatch: item.if_match as string }) },
  }),
  expiresAt: liveUntil(item)!,
  urlExpiresAt: (item.url_expires_at ?? liveUntil(item)) as number,
  ...(item.sweep_at !== undefined && { sweepAt: item.sweep_at as number }),
});

const isLive = (item: Record<string, unknown>, nowSeconds: number) => liveUntil(item) === undefined || liveUntil(item)! > nowSeconds;

export class DynamoObjectCatalog implements ObjectCatalog {
  constructor(private readonly client: DynamoDBDocumentClient, private readonly table: string) {}

  createStore(store: Store): Promise<boolean> {
    const { config } = store;
    return ifConditionHolds(() => this.client.send(new PutCommand({
      TableName: this.table,
      Item: {
        ...storeKey(store),
        id: store.id,
        generation: store.generation,
        description: config.description ?? undefined,
        max_bytes: config.maxBytes ?? undefined,
        max_object_size: config.maxObjectSize,
        ttl_seconds: config.ttlSeconds ?? undefined,
        allowed_content_types: config.allowedContentTypes ?? undefined,
        created_at: store.createdAt,
        objects: 0,
        bytes: 0,
      },
      ConditionExpression: 'attribute_not_exists(pk)',
    })));
  }

  async getStore(ref: StoreRef): Promise<Store | undefined> {
    const { Item } = await this.client.send(new GetCommand({ TableName: this.table, Key: storeKey(ref), ConsistentRead: true }));
    return Item && toStore(ref.accountId, Item);
  }

  async listStores(accountId: string, page: { limit: number; cursor?: string }): Promise<StorePage> {
    const pk = storesPk(accountId);
    const start = decodeCursor(page.cursor, pk);
    if (start && !STORE_NAME_PATTERN.test(start.sk as string)) throw new AppError('validation_error', undefined, undefined, 'cursor does not belong to this listing');
    const { items, nextCursor } = await queryPage(this.client, { table: this.table, pk, skPrefix: '', limit: page.limit, cursor: page.cursor });
    return { stores: items.map((item) => toStore(accountId, item)), nextCursor };
  }

  deleteStore(ref: StoreRef, expected: StoreGeneration): Promise<boolean> {
    return ifConditionHolds(() => this.client.send(new DeleteCommand({
      TableName: this.table,
      Key: storeKey(ref),
      ConditionExpression: 'id = :id AND generation = :generation',
      ExpressionAttributeValues: { ':id': expected.id, ':generation': expected.generation },
    })));
  }

  /** One write of the small store item, whatever the store holds: a purge's cost does not grow with it. */
  swapGeneration(ref: StoreRef, expected: StoreGeneration, next: string): Promise<boolean> {
    return ifConditionHolds(() => this.client.send(new UpdateCommand({
      TableName: this.table,
      Key: storeKey(ref),
      UpdateExpression: 'SET generation = :next, objects = :zero, #bytes = :zero',
      ConditionExpression: 'id = :id AND generation = :expected',
      ExpressionAttributeNames: { '#bytes': 'bytes' },
      ExpressionAttributeValues: { ':next': next, ':zero': 0, ':id': expected.id, ':expected': expected.generation },
    })));
  }

  deleteEntries(at: StoreGeneration, keys: string[]): Promise<void> {
    return deleteSortKeys(this.client, this.table, objectsPk(at), keys);
  }

  async adjustUsage(ref: StoreRef, at: StoreGeneration, delta: { objects: number; bytes: number }, maxBytes: number | null): Promise<boolean> {
    const values: Record<string, unknown> = { ':id': at.id, ':generation': at.generation, ':objects': delta.objects, ':bytes': delta.bytes };
    let condition = 'id = :id AND generation = :generation';
    if (maxBytes !== null && delta.bytes > 0) {
      // DynamoDB conditions cannot add: "bytes + delta <= max" is written "bytes <= max - delta".
      const room = maxBytes - delta.bytes;
      if (room < 0) return false;
      condition += ' AND #bytes <= :room';
      values[':room'] = room;
    }
    return ifConditionHolds(() => this.client.send(new UpdateCommand({
      TableName: this.table,
      Key: storeKey(ref),
      UpdateExpression: 'ADD objects :objects, #bytes :bytes',
      ConditionExpression: condition,
      ExpressionAttributeNames: { '#bytes': 'bytes' },
      ExpressionAttributeValues: values,
    })));
  }

  armExpiry(ref: StoreRef, at: StoreGeneration, dueSeconds: number): Promise<boolean> {
    return ifConditionHolds(() => this.client.send(new UpdateCommand({
      TableName: this.table,
      Key: storeKey(ref),
      UpdateExpression: 'SET expiry_due = :due',
      ConditionExpression: 'id = :id AND generation = :generation AND (attribute_not_exists(expiry_due) OR expiry_due > :due)',
      ExpressionAttributeValues: { ':id': at.id, ':generation': at.generation, ':due': dueSeconds },
    })));
  }

  async disarmExpiry(ref: StoreRef, at: StoreGeneration, dueSeconds: number): Promise<void> {
    await ifConditionHolds(() => this.client.send(new UpdateCommand({
      TableName: this.table,
      Key: storeKey(ref),
      UpdateExpression: 'REMOVE expiry_due',
      ConditionExpression: 'id = :id AND generation = :generation AND expiry_due = :due',
      ExpressionAttributeValues: { ':id': at.id, ':generation': at.generation, ':due': dueSeconds },
    })));
  }

  async scanObjects(at: StoreGeneration, page: { after?: string; limit: number }): Promise<{ objects: ObjectInfo[]; last?: string }> {
    const pk = objectsPk(at);
    const result = await this.client.send(new QueryCommand({
      TableName: this.table,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': pk },
      Limit: page.limit,
      ...(page.after !== undefined && { ExclusiveStartKey: { pk, sk: page.after } }),
    }));
    return { objects: (result.Items ?? []).map(toObject), ...(result.LastEvaluatedKey && { last: result.LastEvaluatedKey.sk as string }) };
  }

  async scanUploads(at: StoreGeneration): Promise<Upload[]> {
    const uploads: Upload[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const result = await this.client.send(new QueryCommand({
        TableName: this.table, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': uploadsPk(at) }, ExclusiveStartKey: start,
      }));
      uploads.push(...(result.Items ?? []).map(toUpload));
      start = result.LastEvaluatedKey;
    } while (start);
    return uploads;
  }

  async getObject(at: StoreGeneration, key: string): Promise<ObjectInfo | undefined> {
    const { Item } = await this.client.send(new GetCommand({ TableName: this.table, Key: { pk: objectsPk(at), sk: key }, ConsistentRead: true }));
    return Item && toObject(Item);
  }

  /** A compare-and-swap on the revision read before: the one place where conditional writes are decided. */
  putObject(at: StoreGeneration, info: ObjectInfo, expected: ObjectInfo | undefined): Promise<boolean> {
    const condition = expected === undefined
      ? { ConditionExpression: 'attribute_not_exists(sk)' }
      : { ConditionExpression: 'revision = :revision', ExpressionAttributeValues: { ':revision': expected.revision } };
    return ifConditionHolds(() => this.client.send(new PutCommand({
      TableName: this.table,
      Item: {
        pk: objectsPk(at),
        sk: info.key,
        size: info.size,
        etag: info.etag,
        content_type: info.contentType,
        metadata: Object.keys(info.metadata).length === 0 ? undefined : info.metadata,
        last_modified: info.lastModified,
        revision: (expected?.revision ?? 0) + 1,
        blob: info.blob,
        live_until: info.expiresAt,
        expires_at: ttlAfter(info.expiresAt),
      },
      ...condition,
    })));
  }

  deleteObject(at: StoreGeneration, expected: ObjectInfo): Promise<boolean> {
    return ifConditionHolds(() => this.client.send(new DeleteCommand({
      TableName: this.table,
      Key: { pk: objectsPk(at), sk: expected.key },
      ConditionExpression: 'revision = :revision',
      ExpressionAttributeValues: { ':revision': expected.revision },
    })));
  }

  createUpload(at: StoreGeneration, upload: Upload): Promise<boolean> {
    return ifConditionHolds(() => this.client.send(new PutCommand({
      TableName: this.table,
      Item: {
        pk: uploadsPk(at),
        sk: upload.id,
        key: upload.key,
        size: upload.size,
        content_type: upload.contentType,
        metadata: Object.keys(upload.metadata).length === 0 ? undefined : upload.metadata,
        blob: upload.blob,
        multipart_id: upload.multipartId,
        if_none_match: upload.condition?.ifNoneMatch || undefined,
        if_match: upload.condition?.ifMatch,
        live_until: upload.expiresAt,
        url_expires_at: upload.urlExpiresAt,
        expires_at: ttlAfter(upload.expiresAt),
      },
      ConditionExpression: 'attribute_not_exists(pk)',
    })));
  }

  async getUpload(at: StoreGeneration, id: string): Promise<Upload | undefined> {
    const { Item } = await this.client.send(new GetCommand({ TableName: this.table, Key: { pk: uploadsPk(at), sk: id }, ConsistentRead: true }));
    return Item && toUpload(Item);
  }

  async closeUpload(at: StoreGeneration, id: string, marginSeconds: number): Promise<number | undefined> {
    let sweepAt: number | undefined;
    // sweep_at is read from url_expires_at in the same write, so URLs made just before still count.
    const closed = await ifConditionHolds(async () => {
      const { Attributes } = await this.client.send(new UpdateCommand({
        TableName: this.table,
        Key: { pk: uploadsPk(at), sk: id },
        UpdateExpression: 'SET sweep_at = url_expires_at + :margin',
        ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(sweep_at)',
        ExpressionAttributeValues: { ':margin': marginSeconds },
        ReturnValues: 'UPDATED_NEW',
      }));
      sweepAt = Attributes?.sweep_at as number;
    });
    return closed ? sweepAt : undefined;
  }

  /** Never moves `url_expires_at` earlier: of two concurrent calls, the later time stays. */
  async extendUpload(at: StoreGeneration, id: string, urlExpiresAt: number): Promise<boolean> {
    const moved = await ifConditionHolds(() => this.client.send(new UpdateCommand({
      TableName: this.table,
      Key: { pk: uploadsPk(at), sk: id },
      UpdateExpression: 'SET url_expires_at = :at',
      ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(sweep_at) AND url_expires_at <= :at',
      ExpressionAttributeValues: { ':at': urlExpiresAt },
    })));
    if (moved) return true;
    const upload = await this.getUpload(at, id);
    return upload !== undefined && upload.sweepAt === undefined && upload.urlExpiresAt >= urlExpiresAt;
  }

  async forgetUpload(at: StoreGeneration, id: string): Promise<void> {
    await this.client.send(new DeleteCommand({ TableName: this.table, Key: { pk: uploadsPk(at), sk: id } }));
  }

  /**
   * One page in key order. With a delimiter, every key whose rest after `prefix` holds it is
   * rolled into one common prefix, and the next query starts past that prefix's keys, so a page
   * costs one query per prefix shown rather than one read per key under it. The cursor is the
   * last key or prefix shown; a prefix cursor resumes past its keys by the same rule.
   */
  async listObjects(at: StoreGeneration, page: { prefix?: string; delimiter?: string; limit: number; cursor?: string; nowSeconds: number }): Promise<ObjectPage> {
    const pk = objectsPk(at);
    const prefix = page.prefix ?? '';
    const commonPrefixOf = (key: string): string | undefined => {
      if (!page.delimiter) return undefined;
      const at = key.indexOf(page.delimiter, prefix.length);
      return at === -1 ? undefined : key.slice(0, at + page.delimiter.length);
    };
    const startAfter = (key: string) => {
      const common = commonPrefixOf(key);
      return { pk, sk: common === undefined ? key : common + AFTER_EVERYTHING };
    };
    const cursor = decodeCursor(page.cursor, pk, prefix);
    let startKey: Record<string, unknown> | undefined = cursor && startAfter(cursor.sk as string);

    const objects: ObjectInfo[] = [];
    const prefixes: string[] = [];
    const values: Record<string, unknown> = { ':pk': pk };
    if (prefix) values[':prefix'] = prefix;
    let last: string | undefined;
    for (let queries = 0; queries < MAX_QUERIES_PER_PAGE; queries++) {
      const room = page.limit - objects.length - prefixes.length;
      const result = await this.client.send(new QueryCommand({
        TableName: this.table,
        KeyConditionExpression: prefix ? 'pk = :pk AND begins_with(sk, :prefix)' : 'pk = :pk',
        ExpressionAttributeValues: values,
        Limit: room,
        ExclusiveStartKey: startKey,
        ConsistentRead: true,
      }));
      startKey = result.LastEvaluatedKey;
      for (const item of result.Items ?? []) {
        if (!isLive(item, page.nowSeconds)) continue;
        const key = item.sk as string;
        const common = commonPrefixOf(key);
        if (common !== undefined) {
          prefixes.push(common);
          last = common;
          startKey = startAfter(key);
          break;
        }
        objects.push(toObject(item));
        last = key;
      }
      if (objects.length + prefixes.length >= page.limit) return { objects, prefixes, nextCursor: encodeCursor({ sk: last }) };
      if (!startKey) return { objects, prefixes, nextCursor: null };
    }
    return { objects, prefixes, nextCursor: encodeCursor({ sk: last ?? (startKey!.sk as string) }) };
  }
}
