import { QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { bucketKey, DynamoKvStore, generationPk } from '../../functions/adapters/aws/dynamo-kv-store.js';
import { MAX_ACCOUNT_ID_BYTES, MAX_CONTENT_TYPE_BYTES, MAX_KEY_BYTES, MAX_VALUE_BYTES } from '../../functions/domain/kv/limits.js';
import type { Bucket, GenerationRef } from '../../functions/domain/kv/types.js';
import { useEngines } from '../support/engines.js';

const local = useEngines();
let store: DynamoKvStore;

beforeAll(() => {
  store = new DynamoKvStore(local.dynamo, local.engines.env.KV_TABLE!);
});

let counter = 0;
const gen = (n: number) => n.toString(16).padStart(32, '0');
function newBucket(overrides: Partial<Bucket> = {}): Bucket {
  counter++;
  return {
    accountId: `acct-${counter}`,
    name: `bucket-${counter}`,
    config: { description: null, ttlSeconds: null, maxValueBytes: 1024 },
    createdAt: '2030-01-01T00:00:00.000Z',
    generation: gen(counter),
    ...overrides,
  };
}
const value = (text: string, expiresAt?: number) => ({ bytes: Buffer.from(text), contentType: 'text/plain', expiresAt });
const at = (bucket: Bucket): GenerationRef => ({ accountId: bucket.accountId, name: bucket.name, generation: bucket.generation });
const NOW = 1_900_000_000;

describe('DynamoKvStore buckets', () => {
  it('createBucket is refused for a name the account already has', async () => {
    const bucket = newBucket();
    expect(await store.createBucket(bucket)).toBe(true);
    expect(await store.createBucket({ ...bucket, generation: gen(999) })).toBe(false);
    expect((await store.getBucket(bucket))?.generation).toBe(bucket.generation);
  });

  it('the same name in another account is another bucket', async () => {
    const bucket = newBucket();
    await store.createBucket(bucket);
    expect(await store.createBucket({ ...bucket, accountId: `${bucket.accountId}-other` })).toBe(true);
  });

  it('an account id containing # cannot reach another account’s bucket', async () => {
    const bucket = newBucket({ accountId: 'a', name: 'b' });
    await store.createBucket(bucket);
    expect(await store.getBucket({ accountId: 'a#b', name: 'b' })).toBeUndefined();
  });

  it('getBucket returns the configuration as written', async () => {
    const bucket = newBucket({ config: { description: 'd', ttlSeconds: 30, maxValueBytes: 77 } });
    await store.createBucket(bucket);
    expect(await store.getBucket(bucket)).toEqual(bucket);
    const plain = newBucket();
    await store.createBucket(plain);
    expect(await store.getBucket(plain)).toEqual(plain);
  });

  it('swapGeneration moves the bucket only from the expected generation', async () => {
    const bucket = newBucket();
    await store.createBucket(bucket);
    expect(await store.swapGeneration(bucket, gen(12345), gen(1))).toBe(false);
    expect(await store.swapGeneration(bucket, bucket.generation, gen(2))).toBe(true);
    expect(await store.swapGeneration(bucket, bucket.generation, gen(3))).toBe(false);
    expect((await store.getBucket(bucket))?.generation).toBe(gen(2));
  });

  it('swapGeneration does not create a missing bucket', async () => {
    const bucket = newBucket();
    expect(await store.swapGeneration(bucket, bucket.generation, gen(2))).toBe(false);
    expect(await store.getBucket(bucket)).toBeUndefined();
  });

  it('deleteBucket deletes only at the expected generation', async () => {
    const bucket = newBucket();
    await store.createBucket(bucket);
    expect(await store.deleteBucket(bucket, gen(4242))).toBe(false);
    expect(await store.getBucket(bucket)).toBeDefined();
    expect(await store.deleteBucket(bucket, bucket.generation)).toBe(true);
    expect(await store.getBucket(bucket)).toBeUndefined();
    expect(await store.deleteBucket(bucket, bucket.generation)).toBe(false);
  });
});

describe('DynamoKvStore bucket listing', () => {
  const listAll = async (accountId: string, limit: number) => {
    const names: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await store.listBuckets(accountId, { limit, cursor });
      names.push(...page.buckets.map((b) => b.name));
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    return names;
  };

  it('listBuckets answers an account\'s buckets in name order with their configuration, and no other account\'s', async () => {
    const first = newBucket({ accountId: 'lister', name: 'b-second', config: { description: 'd', ttlSeconds: 60, maxValueBytes: 10 } });
    const second = newBucket({ accountId: 'lister', name: 'a-first' });
    await store.createBucket(first);
    await store.createBucket(second);
    await store.createBucket(newBucket({ accountId: 'lister-other', name: 'c-not-mine' }));
    await store.createBucket(newBucket({ accountId: 'lister#x', name: 'd-not-mine' }));
    // A value's item is not a bucket, whatever its key.
    await store.putValue(at(first), 'name', value('v'));
    expect(await store.listBuckets('lister', { limit: 10 })).toEqual({ buckets: [second, first], nextCursor: null });
  });

  it('listBuckets pages through every bucket exactly once with limit and cursor', async () => {
    const names = Array.from({ length: 7 }, (_, i) => `paged-${i}`);
    for (const name of names) await store.createBucket(newBucket({ accountId: 'pager', name }));
    expect(await listAll('pager', 3)).toEqual(names);
    expect(await listAll('pager', 7)).toEqual(names);
  });

  it('a deleted bucket leaves the listing; a purged one stays', async () => {
    const kept = newBucket({ accountId: 'churn', name: 'kept' });
    const gone = newBucket({ accountId: 'churn', name: 'gone' });
    await store.createBucket(kept);
    await store.createBucket(gone);
    await store.swapGeneration(kept, kept.generation, gen(5));
    await store.deleteBucket(gone, gone.generation);
    expect((await store.listBuckets('churn', { limit: 10 })).buckets).toEqual([{ ...kept, generation: gen(5) }]);
  });

  it('a bucket written before the index existed joins the listing at its next purge', async () => {
    const old = newBucket({ accountId: 'legacy', name: 'old' });
    await store.createBucket(old);
    await local.dynamo.send(new UpdateCommand({ TableName: local.engines.env.KV_TABLE!, Key: bucketKey(old), UpdateExpression: 'REMOVE bucket_owner' }));
    expect((await store.listBuckets('legacy', { limit: 10 })).buckets).toEqual([]);
    await store.swapGeneration(old, old.generation, gen(6));
    expect((await store.listBuckets('legacy', { limit: 10 })).buckets.map((b) => b.name)).toEqual(['old']);
  });

  it('a bucket written before the index existed joins the listing the first time the kv function reads it (not the sweeper)', async () => {
    const old = newBucket({ accountId: 'legacy-read', name: 'old' });
    const sweeperStore = store;
    const kvFunctionStore = new DynamoKvStore(local.dynamo, local.engines.env.KV_TABLE!, { indexOnRead: true });
    await store.createBucket(old);
    await local.dynamo.send(new UpdateCommand({ TableName: local.engines.env.KV_TABLE!, Key: bucketKey(old), UpdateExpression: 'REMOVE bucket_owner' }));
    expect((await store.listBuckets('legacy-read', { limit: 10 })).buckets).toEqual([]);
    expect(await sweeperStore.getBucket(old)).toEqual(old);
    expect((await store.listBuckets('legacy-read', { limit: 10 })).buckets).toEqual([]);
    expect(await kvFunctionStore.getBucket(old)).toEqual(old);
    expect((await store.listBuckets('legacy-read', { limit: 10 })).buckets).toEqual([old]);
  });

  it('a cursor that is not a bucket name is 400 validation_error, never a DynamoDB error', async () => {
    const forged = Buffer.from(JSON.stringify({ sk: 'x'.repeat(65) })).toString('base64url');
    await expect(store.listBuckets('lister', { limit: 1, cursor: forged })).rejects.toMatchObject({ code: 'validation_error' });
    await expect(store.listBuckets('lister', { limit: 1, cursor: 'garbage' })).rejects.toMatchObject({ code: 'validation_error' });
  });
});

describe('DynamoKvStore values', () => {
  it('putValue counts revisions up from 1 and replaces value and content type', async () => {
    const bucket = newBucket();
    expect(await store.putValue(at(bucket), 'k', value('one'))).toBe(1);
    expect(await store.putValue(at(bucket), 'k', { bytes: Buffer.from([0, 255]), contentType: 'application/x-bin' })).toBe(2);
    expect(await store.getValue(at(bucket), 'k')).toEqual({ bytes: new Uint8Array([0, 255]), contentType: 'application/x-bin', revision: 2, expiresAt: undefined });
  });

  it('rewriting a value without expiry removes the old expiry', async () => {
    const bucket = newBucket();
    await store.putValue(at(bucket), 'k', value('v', NOW));
    await store.putValue(at(bucket), 'k', value('v'));
    expect((await store.getValue(at(bucket), 'k'))?.expiresAt).toBeUndefined();
  });

  it('values of one generation are invisible from another', async () => {
    const bucket = newBucket();
    await store.putValue(at(bucket), 'k', value('v'));
    expect(await store.getValue({ ...at(bucket), generation: gen(77777) }, 'k')).toBeUndefined();
  });

  it('the largest value fits in one item with the longest account, bucket name, key and content type', async () => {
    const worst: GenerationRef = { accountId: 'a'.repeat(MAX_ACCOUNT_ID_BYTES), name: 'b'.repeat(64), generation: 'f'.repeat(32) };
    const key = 'k'.repeat(MAX_KEY_BYTES);
    const bytes = Buffer.alloc(MAX_VALUE_BYTES, 7);
    const stored = { bytes, contentType: 'c'.repeat(MAX_CONTENT_TYPE_BYTES), expiresAt: Number.MAX_SAFE_INTEGER };
    expect(await store.putValue(worst, key, stored)).toBe(1);
    expect(await store.putValue(worst, key, stored)).toBe(2);
    expect(Buffer.from((await store.getValue(worst, key))!.bytes).equals(bytes)).toBe(true);
  });

  it('deleteValue is false for a missing key and for an expired one, true for a live one', async () => {
    const bucket = newBucket();
    await store.putValue(at(bucket), 'live', value('v', NOW + 10));
    await store.putValue(at(bucket), 'old', value('v', NOW));
    expect(await store.deleteValue(at(bucket), 'missing', NOW)).toBe(false);
    expect(await store.deleteValue(at(bucket), 'old', NOW)).toBe(false);
    expect(await store.deleteValue(at(bucket), 'live', NOW)).toBe(true);
    expect(await store.getValue(at(bucket), 'live')).toBeUndefined();
  });
});

describe('DynamoKvStore listing', () => {
  const listAll = async (ref: GenerationRef, limit: number, prefix?: string) => {
    const keys: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await store.listKeys(ref, { prefix, limit, cursor, nowSeconds: NOW });
      expect(page.keys.length).toBeLessThanOrEqual(limit);
      keys.push(...page.keys);
      cursor = page.nextCursor ?? undefined;
      pages++;
    } while (cursor);
    return { keys, pages };
  };

  it('lists in UTF-8 byte order, page by page', async () => {
    const bucket = newBucket();
    const keys = ['é', 'a', 'B', 'a/b', 'z', '0', '😀', 'ab'];
    for (const key of keys) await store.putValue(at(bucket), key, value('v'));
    const { keys: listed, pages } = await listAll(at(bucket), 3);
    expect(listed).toEqual([...keys].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y))));
    expect(pages).toBeGreaterThanOrEqual(3);
  });

  it('lists only keys under the prefix', async () => {
    const bucket = newBucket();
    for (const key of ['logs/1', 'logs/2', 'logz', 'other']) await store.putValue(at(bucket), key, value('v'));
    expect((await listAll(at(bucket), 1, 'logs/')).keys).toEqual(['logs/1', 'logs/2']);
  });

  it('leaves out expired values', async () => {
    const bucket = newBucket();
    await store.putValue(at(bucket), 'expired', value('v', NOW));
    await store.putValue(at(bucket), 'fresh', value('v', NOW + 1));
    await store.putValue(at(bucket), 'forever', value('v'));
    expect((await listAll(at(bucket), 10)).keys).toEqual(['forever', 'fresh']);
  });

  it('refuses a cursor that is not its own', async () => {
    const bucket = newBucket();
    await store.putValue(at(bucket), 'logs/1', value('v'));
    const outside = Buffer.from(JSON.stringify({ sk: 'zzz' })).toString('base64url');
    const invalidKey = Buffer.from(JSON.stringify({ sk: 'x'.repeat(2000) })).toString('base64url');
    for (const cursor of ['not-a-cursor', invalidKey]) {
      await expect(store.listKeys(at(bucket), { limit: 10, cursor, nowSeconds: NOW })).rejects.toMatchObject({ code: 'validation_error' });
    }
    await expect(store.listKeys(at(bucket), { prefix: 'logs/', limit: 10, cursor: outside, nowSeconds: NOW })).rejects.toMatchObject({ code: 'validation_error' });
  });
});

describe('DynamoKvStore sweeping', () => {
  const itemsUnder = async (ref: GenerationRef) =>
    (await local.dynamo.send(new QueryCommand({ TableName: local.engines.env.KV_TABLE, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': generationPk(ref) } }))).Items ?? [];

  it('scanGeneration pages through keys after a position', async () => {
    const bucket = newBucket();
    for (const key of ['a', 'b', 'c', 'd', 'e']) await store.putValue(at(bucket), key, value('v'));
    const first = await store.scanGeneration(at(bucket), { limit: 2 });
    expect(first).toEqual({ keys: ['a', 'b'], last: 'b' });
    expect((await store.scanGeneration(at(bucket), { after: 'b', limit: 10 })).keys).toEqual(['c', 'd', 'e']);
  });

  it('deleteFromGeneration deletes those keys of that generation only, in batches of 25', async () => {
    const old = newBucket();
    const current: GenerationRef = { ...at(old), generation: gen(55555) };
    const keys = Array.from({ length: 60 }, (_, i) => `k${String(i).padStart(2, '0')}`);
    for (const key of keys) {
      await store.putValue(at(old), key, value('v'));
      await store.putValue(current, key, value('v'));
    }
    await store.deleteFromGeneration(at(old), keys);
    expect(await itemsUnder(at(old))).toEqual([]);
    expect(await itemsUnder(current)).toHaveLength(60);
  });
});
