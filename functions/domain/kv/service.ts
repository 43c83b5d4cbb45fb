import { AppError, notFound } from '../../shared/errors.js';
import type { Clock } from '../clock.js';
import type { RandomBytes } from '../random-bytes.js';
import { GENERATION_BYTES } from './limits.js';
import { FIRST_SWEEP_DELAY_SECONDS, type SweepQueue } from './sweep-task.js';
import type { Bucket, BucketConfig, BucketPage, BucketRef, GenerationRef, KeyPage, KvStore, StoredValue } from './types.js';

export interface KvServiceOptions {
  store: KvStore;
  sweeps: SweepQueue;
  now: Clock;
  randomBytes: RandomBytes;
  /** See `SweepTask.settleUntil`; `settleSecondsFor(kv function timeout)` in production. */
  settleMs: number;
}

/** A delete that keeps losing its compare-and-swap to purges gives up after this many tries (503). */
export const MAX_DELETE_ATTEMPTS = 5;

/** The first epoch second at which a value written at `nowMs` has lived at least `ttlSeconds`. */
export const expiresAtFor = (nowMs: number, ttlSeconds: number): number => Math.ceil(nowMs / 1000) + ttlSeconds;
export const isExpired = (value: { expiresAt?: number }, nowMs: number): boolean =>
  value.expiresAt !== undefined && value.expiresAt * 1000 <= nowMs;


/**
 * The KV storage gateway's use cases. Every operation is scoped by `BucketRef.accountId`, so a
 * bucket of another account is simply not found. Data lives under the bucket's current
 * generation; a purge or delete swaps or removes the generation in one conditional write and
 * leaves the old data to the sweeper.
 *
 * A sweep is never lost: its task is enqueued *before* the write that orphans the generation.
 * If the queue refuses it, nothing has changed and the caller gets 503. If the write then fails,
 * the sweeper finds the generation still current and, once the task settles, drops it.
 */
export class KvService {
  constructor(private readonly options: KvServiceOptions) {}

  async createBucket(ref: BucketRef, config: BucketConfig): Promise<Bucket> {
    const bucket: Bucket = { ...ref, config, createdAt: new Date(this.options.now()).toISOString(), generation: this.newGeneration() };
    if (!(await this.options.store.createBucket(bucket))) throw new AppError('already_exists');
    return bucket;
  }

  /**
   * PUT: creates the bucket, or replaces the configuration of the one there (`created: false`), as
   * a stream's PUT does; `ifNoneMatch` (`If-None-Match: *`) keeps it to creating (409 if it exists).
   * A new configuration applies to writes from then on: values already stored keep the expiry they
   * were written with, and values over a lowered `max_value_bytes` stay readable.
   */
  async putBucket(ref: BucketRef, config: BucketConfig, options: { ifNoneMatch?: boolean } = {}): Promise<{ bucket: Bucket; created: boolean }> {
    try {
      return { bucket: await this.createBucket(ref, config), created: true };
    } catch (error) {
      if (options.ifNoneMatch || !(error instanceof AppError && error.code === 'already_exists')) throw error;
    }
    const bucket = await this.options.store.updateConfig(ref, config);
    if (!bucket) throw notFound('bucketDeleted', 'bucket deleted during update');
    return { bucket, created: false };
  }

  async getBucket(ref: BucketRef): Promise<Bucket> {
    const bucket = await this.options.store.getBucket(ref);
    if (!bucket) throw notFound('bucket');
    return bucket;
  }

  listBuckets(accountId: string, page: { limit: number; cursor?: string }): Promise<BucketPage> {
    return this.options.store.listBuckets(accountId, page);
  }

  /**
   * Moves the bucket to a new generation: one conditional write, whatever the bucket holds.
   *
   * When the swap loses to a concurrent purge (the generation moved between our read and our
   * write), that purge did our work during our request, so we answer 200 too:
   *
   *   purge A: read G0 ─ enqueue G0 ──────────── swap G0→G2 fails ─ 200
   *   purge B:   read G0 ─ enqueue G0 ─ swap G0→G1 ─ 200
   *
   * Both are ordered at B's swap. A key written after either response reads G1 and stays; every
   * key of G0 is gone, and G0's sweep was enqueued (twice: sweeps are idempotent).
   */
  async purgeBucket(ref: BucketRef): Promise<void> {
    const bucket = await this.getBucket(ref);
    await this.enqueueSweep(bucket);
    if (await this.options.store.swapGeneration(ref, bucket.generation, this.newGeneration())) return;
    if (!(await this.options.store.getBucket(ref))) throw notFound('bucketDeleted', 'bucket deleted during purge');
  }

  /** Deletes the bucket and leaves its data to the sweeper; retried when a purge moves it meanwhile. */
  async deleteBucket(ref: BucketRef): Promise<void> {
    for (let attempt = 0; attempt < MAX_DELETE_ATTEMPTS; attempt++) {
      const bucket = await this.getBucket(ref);
      await this.enqueueSweep(bucket);
      if (await this.options.store.deleteBucket(ref, bucket.generation)) return;
    }
    throw new AppError('unavailable', 'bucket kept changing generation during delete');
  }

  /**
   * Writes a value. Its expiry is fixed here: `ttlSeconds` (the put's own, already validated)
   * when given, else the bucket's default, else none. Reads, listings and deletes treat it as the
   * bucket's TTL is treated: missing from `expires_at` on.
   */
  async putValue(ref: BucketRef, key: string, value: { bytes: Uint8Array; contentType: string; ttlSeconds?: number }): Promise<number> {
    const bucket = await this.getBucket(ref);
    if (value.bytes.length > bucket.config.maxValueBytes) throw new AppError('payload_too_large', undefined, undefined, `the value is over the bucket's max_value_bytes (${bucket.config.maxValueBytes})`);
    const ttlSeconds = value.ttlSeconds ?? bucket.config.ttlSeconds;
    const expiresAt = ttlSeconds === null ? undefined : expiresAtFor(this.options.now(), ttlSeconds);
    return this.options.store.putValue(current(bucket), key, { bytes: value.bytes, contentType: value.contentType, expiresAt });
  }

  async getValue(ref: BucketRef, key: string): Promise<StoredValue> {
    const bucket = await this.getBucket(ref);
    const value = await this.options.store.getValue(current(bucket), key);
    if (!value || isExpired(value, this.options.now())) throw notFound('value');
    return value;
  }

  async deleteValue(ref: BucketRef, key: string): Promise<void> {
    const bucket = await this.getBucket(ref);
    if (!(await this.options.store.deleteValue(current(bucket), key, this.options.now() / 1000))) throw notFound('value');
  }

  async listKeys(ref: BucketRef, page: { prefix?: string; limit: number; cursor?: string }): Promise<KeyPage> {
    const bucket = await this.getBucket(ref);
    return this.options.store.listKeys(current(bucket), { ...page, nowSeconds: this.options.now() / 1000 });
  }

  private newGeneration(): string {
    return Buffer.from(this.options.randomBytes(GENERATION_BYTES)).toString('hex');
  }

  private enqueueSweep(bucket: Bucket): Promise<void> {
    const task = { ...current(bucket), settleUntil: this.options.now() + this.options.settleMs };
    return this.options.sweeps.enqueue(task, FIRST_SWEEP_DELAY_SECONDS);
  }
}

const current = (bucket: Bucket): GenerationRef => ({ accountId: bucket.accountId, name: bucket.name, generation: bucket.generation });
