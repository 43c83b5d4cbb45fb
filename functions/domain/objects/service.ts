import { AppError, notFound } from '../../shared/errors.js';
import { expiresAtFor, isExpired } from '../kv/service.js';
import { FIRST_SWEEP_DELAY_SECONDS, SETTLE_MARGIN_SECONDS, settleSecondsFor } from '../kv/sweep-task.js';
import { checkCondition, type WriteCondition } from './conditions.js';
import { UPLOAD_URL_EXPIRY_SECONDS } from './limits.js';
import { BLOB_ID_BYTES, DOWNLOAD_URL_EXPIRY_SECONDS, GENERATION_BYTES, MAX_INLINE_OBJECT_BYTES, MAX_WRITE_ATTEMPTS, STORE_ID_BYTES } from './limits.js';
import { blobNameOf, type ObjectInfo, type ObjectPage, type ObjectServiceOptions, type Store, type StoreConfig, type StoreGeneration, type StorePage, type StoreRef, type StoredBytes } from './types.js';
import { ObjectExpiry } from './expiry.js';
import { ObjectUploads } from './uploads.js';
import { releaseUsage, reserveUsage, type UsageDelta } from './usage.js';
import { isAllowedContentType } from './validation.js';

/**
 * How long an object store's old generation may still receive bytes: a write that read it before
 * the swap (as for KV), and also a presigned PUT, whose URL works for `UPLOAD_URL_EXPIRY_SECONDS`
 * after it was made. The sweeper's passes repeat until then (every 15 minutes, SQS's longest delay).
 */
export const objectsSettleSeconds = (writerTimeoutSeconds: number): number =>
  Math.max(settleSecondsFor(writerTimeoutSeconds), UPLOAD_URL_EXPIRY_SECONDS + SETTLE_MARGIN_SECONDS);

export interface NewObject {
  bytes: Uint8Array;
  contentType: string;
  metadata: Record<string, string>;
}

/** An object's bytes, or where to fetch them when they are too large to answer inline. */
export type ObjectRead = { info: ObjectInfo; body: StoredBytes } | { info: ObjectInfo; redirect: string };

const refused = (code: 'payload_too_large' | 'validation_error', message: string) => new AppError(code, message, undefined, message);

/**
 * A single `bytes=` range (RFC 9110 14.1.2) as `bytes=first-last` within `size`: s3rver serves
 * neither suffix ranges (`bytes=-500`) nor ranges running past the end, which S3 clips, so the
 * product resolves them against the size it recorded. A range that starts past the end is 416; one
 * that does not parse, or ends before it starts, is ignored (the whole object), as HTTP says.
 */
export function absoluteRange(range: string, size: number): string | undefined {
  const match = /^bytes=(\d*)-(\d*)$/.exec(range);
  if (!match || (match[1] === '' && match[2] === '')) return undefined;
  const [first, last] = match[1] === ''
    ? [Math.max(0, size - Number(match[2])), size - 1]
    : [Number(match[1]), match[2] === '' ? size - 1 : Math.min(Number(match[2]), size - 1)];
  if (match[1] !== '' && match[2] !== '' && Number(match[2]) < first) return undefined;
  if (first >= size || (match[1] === '' && Number(match[2]) === 0)) throw new AppError('range_not_satisfiable', 'range outside the object');
  return `bytes=${first}-${last}`;
}

/**
 * The object stores' use cases. Every operation is scoped by `StoreRef.accountId`, so another
 * account's store is simply not found. The catalog (DynamoDB) says which objects exist; S3 holds
 * their bytes under the store's random id and current generation.
 *
 * A write reserves its bytes in the store's usage first (a conditional update that keeps
 * `max_bytes`), then writes the bytes to S3 under a name of its own (`ObjectInfo.blob`, never
 * reused: S3's `If-None-Match: *`), then records the object with a compare-and-swap on what it
 * read. That swap decides `If-None-Match` and `If-Match`, and which bytes the key serves: the
 * winner's entry names its own bytes, and the bytes it replaced are deleted after it. A write that
 * loses the swap deletes its bytes, gives its reservation back and, unconditional, tries again.
 * Concurrent writers never share a name, so what a read returns is exactly one accepted write.
 *
 *   write:  read entry ─ reserve ─ PUT own name ─ swap entry ─ won: delete replaced bytes
 *                                                            └ lost: delete own bytes, release
 */
export class ObjectService {
  /** Presigned uploads (`./uploads.ts`). */
  readonly uploads: ObjectUploads;
  /** Expired objects' and uploads' removal (`./expiry.ts`); the sweeper runs its passes. */
  readonly expiry: ObjectExpiry;

  constructor(private readonly options: ObjectServiceOptions) {
    this.uploads = new ObjectUploads(options, (ref) => this.getStore(ref), (store, at) => this.expiry.arm(store, at));
    this.expiry = new ObjectExpiry(options, this.uploads);
  }

  async createStore(ref: StoreRef, config: StoreConfig): Promise<Store> {
    const store: Store = {
      ...ref,
      config,
      id: this.randomHex(STORE_ID_BYTES),
      generation: this.randomHex(GENERATION_BYTES),
      createdAt: new Date(this.options.now()).toISOString(),
      usage: { objects: 0, bytes: 0 },
    };
    if (!(await this.options.catalog.createStore(store))) throw new AppError('already_exists');
    return store;
  }

  async getStore(ref: StoreRef): Promise<Store> {
    const store = await this.options.catalog.getStore(ref);
    if (!store) throw notFound('store');
    return store;
  }

  listStores(accountId: string, page: { limit: number; cursor?: string }): Promise<StorePage> {
    return this.options.catalog.listStores(accountId, page);
  }

  /**
   * Moves the store to a new generation with its usage at zero: one conditional write, whatever
   * it holds, as a KV purge (`KvService.purgeBucket`, whose timeline holds here too). The old
   * generation's bytes and catalog entries are left to the sweeper, enqueued first so that it is
   * never lost; objects written after the purge are in the new generation and survive it.
   */
  async purgeStore(ref: StoreRef): Promise<void> {
    const store = await this.getStore(ref);
    await this.enqueueSweep(store);
    if (await this.options.catalog.swapGeneration(ref, store, this.randomHex(GENERATION_BYTES))) return;
    const now = await this.options.catalog.getStore(ref);
    if (!now || now.id !== store.id) throw notFound('storeDeleted', 'store deleted during purge');
  }

  /** Deletes the store, whatever it holds, and leaves its objects to the sweeper; retried when a purge moves it meanwhile. */
  async deleteStore(ref: StoreRef): Promise<void> {
    for (let attempt = 0; attempt < MAX_WRITE_ATTEMPTS; attempt++) {
      const store = await this.getStore(ref);
      await this.enqueueSweep(store);
      if (await this.options.catalog.deleteStore(ref, store)) return;
    }
    throw new AppError('unavailable', 'store kept changing generation during delete');
  }

  private enqueueSweep(store: Store): Promise<void> {
    const task = { accountId: store.accountId, name: store.name, objectStoreId: store.id, generation: store.generation, settleUntil: this.options.now() + this.options.settleMs };
    return this.options.sweeps.enqueue(task, FIRST_SWEEP_DELAY_SECONDS);
  }

  async putObject(ref: StoreRef, key: string, object: NewObject, condition: WriteCondition = {}): Promise<ObjectInfo> {
    const store = await this.getStore(ref);
    const { config } = store;
    const size = object.bytes.length;
    if (size > config.maxObjectSize) throw refused('payload_too_large', `the store's max_object_size is ${config.maxObjectSize} bytes`);
    if (size > MAX_INLINE_OBJECT_BYTES) throw refused('payload_too_large', `objects written through the API are at most ${MAX_INLINE_OBJECT_BYTES} bytes`);
    if (!isAllowedContentType(object.contentType, config.allowedContentTypes)) {
      throw refused('validation_error', `the store accepts only ${config.allowedContentTypes!.join(', ')}`);
    }
    const nowMs = this.options.now();
    for (let attempt = 0; attempt < MAX_WRITE_ATTEMPTS; attempt++) {
      const stored = await this.options.catalog.getObject(store, key);
      checkCondition(condition, stored, nowMs);
      const delta = { objects: stored ? 0 : 1, bytes: size - (stored?.size ?? 0) };
      await this.reserve(store, delta);
      let info: ObjectInfo;
      const blob = this.randomHex(BLOB_ID_BYTES);
      try {
        const etag = await this.options.blobs.put(store, blob, object);
        info = {
          key, size, etag, contentType: object.contentType, metadata: object.metadata, lastModified: new Date(nowMs).toISOString(), blob,
          ...(config.ttlSeconds !== null && { expiresAt: expiresAtFor(nowMs, config.ttlSeconds) }),
        };
      } catch (error) {
        await this.release(store, delta);
        throw error;
      }
      if (await this.options.catalog.putObject(store, info, stored)) {
        if (stored) await this.options.blobs.delete(store, blobNameOf(stored));
        if (info.expiresAt !== undefined) await this.expiry.arm(store, info.expiresAt);
        return info;
      }
      await this.options.blobs.delete(store, blob);
      await this.release(store, delta);
    }
    throw new AppError('unavailable', 'the key kept changing during the write');
  }

  /** The object, read whole or a range of it; one larger than a response carries is a redirect to a presigned URL. */
  async getObject(ref: StoreRef, key: string, range?: string): Promise<ObjectRead> {
    const store = await this.getStore(ref);
    for (let attempt = 0; attempt < MAX_WRITE_ATTEMPTS; attempt++) {
      const info = await this.liveObject(store, key);
      if (info.size > MAX_INLINE_OBJECT_BYTES) {
        return { info, redirect: (await this.options.blobs.downloadUrl(store, blobNameOf(info), DOWNLOAD_URL_EXPIRY_SECONDS)).url };
      }
      try {
        return { info, body: await this.options.blobs.get(store, blobNameOf(info), range === undefined ? undefined : absoluteRange(range, info.size)) };
      } catch (error) {
        if (!(error instanceof AppError && error.code === 'not_found')) throw error;
        // A write replaced the object and deleted its bytes since the entry was read: read the new one.
        // Or the entry names bytes that are not there (a crash between the two writes): it is repaired.
        if (await this.repairMissing(store, info)) throw notFound('object');
      }
    }
    throw new AppError('unavailable', 'the key kept changing during the read');
  }

  /**
   * Removes an entry whose bytes are missing, and gives its usage back, if the key still holds it
   * (a newer write's bytes are not missing); true when the entry is still the one that was read.
   */
  private async repairMissing(store: Store, info: ObjectInfo): Promise<boolean> {
    const now = await this.options.catalog.getObject(store, info.key);
    if (!now || now.revision !== info.revision) return false;
    if (await this.options.blobs.head(store, blobNameOf(info))) return false;
    if (await this.options.catalog.deleteObject(store, info)) await this.release(store, { objects: 1, bytes: info.size });
    return true;
  }

  /**
   * A presigned GET of a live object, working for `expiresInSeconds` (at most `MAX_URL_EXPIRY_SECONDS`)
   * or until the credentials that signed it expire, if sooner: `expiresAt` is when it really stops.
   */
  async objectUrl(ref: StoreRef, key: string, expiresInSeconds: number): Promise<{ info: ObjectInfo; url: string; expiresAt: string }> {
    const store = await this.getStore(ref);
    const info = await this.liveObject(store, key);
    const { url, expiresAt } = await this.options.blobs.downloadUrl(store, blobNameOf(info), expiresInSeconds);
    return { info, url, expiresAt: new Date(expiresAt * 1000).toISOString() };
  }

  async headObject(ref: StoreRef, key: string): Promise<ObjectInfo> {
    return this.liveObject(await this.getStore(ref), key);
  }

  /** Deletes the object; an expired one is removed too but answers 404, as it reads. */
  async deleteObject(ref: StoreRef, key: string): Promise<void> {
    const store = await this.getStore(ref);
    for (let attempt = 0; attempt < MAX_WRITE_ATTEMPTS; attempt++) {
      const stored = await this.options.catalog.getObject(store, key);
      if (!stored) throw notFound('object');
      if (!(await this.options.catalog.deleteObject(store, stored))) continue;
      await this.release(store, { objects: 1, bytes: stored.size });
      await this.options.blobs.delete(store, blobNameOf(stored));
      if (isExpired(stored, this.options.now())) throw notFound('object');
      return;
    }
    throw new AppError('unavailable', 'the key kept changing during the delete');
  }

  async listObjects(ref: StoreRef, page: { prefix?: string; delimiter?: string; limit: number; cursor?: string }): Promise<ObjectPage> {
    const store = await this.getStore(ref);
    return this.options.catalog.listObjects(store, { ...page, nowSeconds: this.options.now() / 1000 });
  }

  private async liveObject(at: StoreGeneration, key: string): Promise<ObjectInfo> {
    const info = await this.options.catalog.getObject(at, key);
    if (!info || isExpired(info, this.options.now())) throw notFound('object');
    return info;
  }

  private reserve(store: Store, delta: UsageDelta): Promise<void> {
    return reserveUsage(this.options.catalog, store, delta);
  }

  private release(store: Store, delta: UsageDelta): Promise<void> {
    return releaseUsage(this.options.catalog, store, delta);
  }

  private randomHex(bytes: number): string {
    return Buffer.from(this.options.randomBytes(bytes)).toString('hex');
  }
}
