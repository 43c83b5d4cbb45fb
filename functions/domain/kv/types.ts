/** A bucket's configuration; it survives purges unchanged. */
export interface BucketConfig {
  description: string | null;
  /** Default lifetime of values in seconds; `null`: values do not expire. */
  ttlSeconds: number | null;
  maxValueBytes: number;
}

/** A bucket of one account. */
export interface BucketRef {
  accountId: string;
  name: string;
}

/**
 * One generation of a bucket's data. Values live under the bucket's current generation; a purge
 * moves the bucket to a fresh random generation, and the old one is reclaimed in the background.
 */
export interface GenerationRef extends BucketRef {
  generation: string;
}

export interface Bucket extends BucketRef {
  config: BucketConfig;
  /** ISO 8601. */
  createdAt: string;
  generation: string;
}

export interface NewValue {
  bytes: Uint8Array;
  contentType: string;
  /** Epoch seconds from which the value reads as missing; undefined: never. */
  expiresAt?: number;
}

export interface StoredValue extends NewValue {
  revision: number;
}

export interface KeyPage {
  keys: string[];
  /** Opaque; `null` on the last page. */
  nextCursor: string | null;
}

export interface BucketPage {
  buckets: Bucket[];
  /** Opaque; `null` on the last page. */
  nextCursor: string | null;
}

/** Storage of buckets and their values (`DynamoKvStore`). Reads are strongly consistent. */
export interface KvStore {
  /** false when the account already has a bucket of that name. */
  createBucket(bucket: Bucket): Promise<boolean>;
  /** Replaces an existing bucket's configuration (name, created_at and generation stay); undefined when there is none. */
  updateConfig(ref: BucketRef, config: BucketConfig): Promise<Bucket | undefined>;
  getBucket(ref: BucketRef): Promise<Bucket | undefined>;
  /** The account's buckets in name order; may lag a bucket created or deleted a moment ago. */
  listBuckets(accountId: string, page: { limit: number; cursor?: string }): Promise<BucketPage>;
  /** Moves the bucket to generation `next` if it is still at `expected`; false otherwise (moved, or gone). */
  swapGeneration(ref: BucketRef, expected: string, next: string): Promise<boolean>;
  /** Deletes the bucket if it is still at generation `expected`; false otherwise (moved, or gone). */
  deleteBucket(ref: BucketRef, expected: string): Promise<boolean>;

  /** Writes a value and returns its new revision (1 for a new key), in one atomic write. */
  putValue(at: GenerationRef, key: string, value: NewValue): Promise<number>;
  getValue(at: GenerationRef, key: string): Promise<StoredValue | undefined>;
  /** false when there was no value, or it had expired by `nowSeconds`. */
  deleteValue(at: GenerationRef, key: string, nowSeconds: number): Promise<boolean>;
  /** Keys in byte order, values expired by `nowSeconds` left out (a page may hold fewer than `limit`). */
  listKeys(at: GenerationRef, page: { prefix?: string; limit: number; cursor?: string; nowSeconds: number }): Promise<KeyPage>;

  /** For the sweeper: up to `limit` keys of a generation after `after`; `last` is set while more may follow. */
  scanGeneration(at: GenerationRef, page: { after?: string; limit: number }): Promise<{ keys: string[]; last?: string }>;
  /** For the sweeper: deletes these keys of a generation (idempotent). */
  deleteFromGeneration(at: GenerationRef, keys: string[]): Promise<void>;
}
