import type { Clock } from '../clock.js';
import type { SweepQueue } from '../kv/sweep-task.js';
import type { RandomBytes } from '../random-bytes.js';

/** A store's configuration; it survives purges unchanged. */
export interface StoreConfig {
  description: string | null;
  /** Total bytes the store may hold; `null`: no limit. */
  maxBytes: number | null;
  /** The largest object accepted. */
  maxObjectSize: number;
  /** Lifetime of objects in seconds; `null`: objects do not expire. */
  ttlSeconds: number | null;
  /** Media types (`type/subtype` or `type/*`) objects may have; `null`: any. */
  allowedContentTypes: string[] | null;
}

/** A store of one account. */
export interface StoreRef {
  accountId: string;
  name: string;
}

/** Where a store's objects live now: `<id>/<generation>/` in the bucket, `OBJECT#<id>#<generation>` in the table. */
export interface StoreGeneration {
  id: string;
  generation: string;
}

export interface Store extends StoreRef, StoreGeneration {
  config: StoreConfig;
  /** ISO 8601. */
  createdAt: string;
  /** What the current generation holds, counted as objects are written and deleted. */
  usage: { objects: number; bytes: number };
  /** Epoch seconds at which an expiry pass is due (`./expiry.ts`); undefined: none is pending. */
  expiryDue?: number;
}

/** What the table keeps of an object: enough to list it, check a condition, and count usage. */
export interface ObjectInfo {
  key: string;
  size: number;
  /** S3's entity tag, quoted as S3 and HTTP write it. */
  etag: string;
  contentType: string;
  metadata: Record<string, string>;
  /** ISO 8601. */
  lastModified: string;
  /** Epoch seconds from which the object reads as missing; undefined: never. */
  expiresAt?: number;
  /** The catalog's count of writes to the key, which its compare-and-swap checks; set by the catalog. */
  revision?: number;
  /**
   * The name of the bytes in the generation (`blobNameOf`): every write lands at a name of its own,
   * and the catalog entry that wins the key says which bytes are served. Undefined: written before
   * names were per write, at the key itself.
   */
  blob?: string;
}

/** Where an object's bytes are in its generation: the write's own name, or the key for objects written before. */
export const blobNameOf = (info: Pick<ObjectInfo, 'key' | 'blob'>): string => info.blob ?? info.key;

/** A presigned URL and when it stops working, in epoch seconds (it may be sooner than asked: `BlobStore`). */
export interface SignedUrl {
  url: string;
  expiresAt: number;
}

export interface StorePage {
  stores: Store[];
  nextCursor: string | null;
}

export interface ObjectPage {
  objects: ObjectInfo[];
  /** Keys' common prefixes up to the delimiter, when one was given. */
  prefixes: string[];
  nextCursor: string | null;
}

/**
 * Stores and what they hold, in the table (`DynamoObjectCatalog`). The catalog is the truth of
 * which objects exist: conditional writes, listings and usage are read from it, never from S3.
 */
export interface ObjectCatalog {
  /** false when the account already has a store of that name. */
  createStore(store: Store): Promise<boolean>;
  getStore(ref: StoreRef): Promise<Store | undefined>;
  listStores(accountId: string, page: { limit: number; cursor?: string }): Promise<StorePage>;
  /** Deletes the store if it is still at `expected`; false otherwise. Its objects are left to the sweeper. */
  deleteStore(ref: StoreRef, expected: StoreGeneration): Promise<boolean>;
  /** Moves the store to generation `next` with its usage at zero, if it is still at `expected`; false otherwise. */
  swapGeneration(ref: StoreRef, expected: StoreGeneration, next: string): Promise<boolean>;
  /** Deletes the catalog entries of these keys in a generation (the sweeper). */
  deleteEntries(at: StoreGeneration, keys: string[]): Promise<void>;
  /**
   * Adds `delta` to the store's usage if it is still at `at` and, when `maxBytes` is given and
   * bytes grow, the result stays within it; false otherwise.
   */
  adjustUsage(ref: StoreRef, at: StoreGeneration, delta: { objects: number; bytes: number }, maxBytes: number | null): Promise<boolean>;

  /** Sets the store's `expiryDue` to `dueSeconds` if none is pending or the pending one is later; false otherwise. */
  armExpiry(ref: StoreRef, at: StoreGeneration, dueSeconds: number): Promise<boolean>;
  /** Clears `expiryDue` if it is still `dueSeconds` (the pass due then has started). */
  disarmExpiry(ref: StoreRef, at: StoreGeneration, dueSeconds: number): Promise<void>;
  /** Every object entry of a generation, expired ones too, in key order, a page at a time (the expiry pass). */
  scanObjects(at: StoreGeneration, page: { after?: string; limit: number }): Promise<{ objects: ObjectInfo[]; last?: string }>;
  /** Every open upload of a generation, expired ones too (the expiry pass). */
  scanUploads(at: StoreGeneration): Promise<Upload[]>;

  getObject(at: StoreGeneration, key: string): Promise<ObjectInfo | undefined>;
  /** Writes `info` if the key still holds `expected` (by etag), or nothing when `expected` is undefined; false otherwise. */
  putObject(at: StoreGeneration, info: ObjectInfo, expected: ObjectInfo | undefined): Promise<boolean>;
  /** Deletes the key if it still holds `expected`; false otherwise. */
  deleteObject(at: StoreGeneration, expected: ObjectInfo): Promise<boolean>;
  /** Records an open upload (its size already reserved in the store's usage); false when the id is taken. */
  createUpload(at: StoreGeneration, upload: Upload): Promise<boolean>;
  getUpload(at: StoreGeneration, id: string): Promise<Upload | undefined>;
  /**
   * Closes the upload if it is still open (true for exactly one of concurrent completes and aborts)
   * and answers when its URLs can no longer write (`urlExpiresAt`) plus `marginSeconds`: the entry
   * stays closed until then, for the pass that removes bytes its URL may still bring (`ObjectExpiry`).
   */
  closeUpload(at: StoreGeneration, id: string, marginSeconds: number): Promise<number | undefined>;
  /** Moves an open upload's `urlExpiresAt` later (new URLs); false when it is no longer open. */
  extendUpload(at: StoreGeneration, id: string, urlExpiresAt: number): Promise<boolean>;
  /** Forgets a closed upload whose URLs cannot write any more. */
  forgetUpload(at: StoreGeneration, id: string): Promise<void>;
  /** Objects in key order, expired ones left out; with a delimiter, keys sharing a prefix up to it are one entry. */
  listObjects(at: StoreGeneration, page: { prefix?: string; delimiter?: string; limit: number; cursor?: string; nowSeconds: number }): Promise<ObjectPage>;
}

/** An upload straight to S3 through presigned URLs, open until completed or aborted. */
export interface Upload {
  id: string;
  key: string;
  /** Declared at creation and reserved in the store's usage; the bytes that land must match it. */
  size: number;
  contentType: string;
  metadata: Record<string, string>;
  /** The name its bytes land at (`ObjectInfo.blob`), the upload's own: nothing else is ever written there. */
  blob: string;
  /** S3's multipart upload id; undefined: one presigned PUT. */
  multipartId?: string;
  /** `If-None-Match: *` / `If-Match` given when the upload was created: checked then, and decided when it completes. */
  condition?: { ifNoneMatch?: boolean; ifMatch?: string };
  /** Epoch seconds after which an open upload is dropped. */
  expiresAt: number;
  /** Epoch seconds until which URLs made for it may write (URLs made later move it on, never past `expiresAt`). */
  urlExpiresAt: number;
  /** Set once completed, aborted or dropped: epoch seconds from which its URLs can write nothing and the entry goes. */
  sweepAt?: number;
}

/** A part of a multipart upload as the client reports it: its number and the ETag S3 answered. */
export interface UploadedPart {
  partNumber: number;
  etag: string;
}

export interface StoredBytes {
  bytes: Uint8Array;
  /** `bytes first-last/size` when a range was read. */
  contentRange?: string;
}

/** The bytes of objects (`S3BlobStore`), at `<store id>/<generation>/<key>` in one bucket. */
export interface BlobStore {
  /** Writes the bytes at a name that must hold nothing yet (S3's `If-None-Match: *`) and returns S3's etag. */
  put(at: StoreGeneration, key: string, body: { bytes: Uint8Array; contentType: string; metadata: Record<string, string> }): Promise<string>;
  /** The bytes, or a range of them (`bytes=…` as HTTP writes it); `range_not_satisfiable` when outside. */
  get(at: StoreGeneration, key: string, range?: string): Promise<StoredBytes>;
  delete(at: StoreGeneration, key: string): Promise<void>;
  /**
   * A presigned GET of the object that works for `expiresInSeconds`, or less: a URL dies with the
   * credentials that signed it, and `expiresAt` says when that is, when the credentials say.
   */
  downloadUrl(at: StoreGeneration, key: string, expiresInSeconds: number): Promise<SignedUrl>;
  /** Size, etag and type of what is at the key now (what landed through a presigned URL); undefined when nothing. */
  head(at: StoreGeneration, key: string): Promise<{ size: number; etag: string; contentType: string } | undefined>;
  /**
   * A presigned PUT of the whole object that binds what it writes: `Content-Type`, `Content-Length`
   * and `If-None-Match: *` are signed, so it writes once, exactly `size` bytes of that type.
   */
  uploadUrl(at: StoreGeneration, key: string, upload: { contentType: string; size: number }, expiresInSeconds: number): Promise<SignedUrl>;
  /** Starts a multipart upload and returns S3's upload id. */
  startMultipart(at: StoreGeneration, key: string, contentType: string, metadata: Record<string, string>): Promise<string>;
  /** A presigned PUT of one part (numbered from 1), its `Content-Length` signed: exactly `size` bytes. */
  partUrl(at: StoreGeneration, key: string, multipartId: string, part: { partNumber: number; size: number }, expiresInSeconds: number): Promise<SignedUrl>;
  /** Assembles the parts into the object, if the name holds nothing yet; `validation_error` when S3 refuses the parts as given. */
  completeMultipart(at: StoreGeneration, key: string, multipartId: string, parts: UploadedPart[]): Promise<void>;
  /** Drops the parts of an unfinished multipart upload; nothing when the upload is already gone. */
  abortMultipart(at: StoreGeneration, key: string, multipartId: string): Promise<void>;
  /** Up to `limit` keys of the generation after `after`, in key order; `last` is undefined when none are left (the sweeper). */
  listGeneration(at: StoreGeneration, page: { after?: string; limit: number }): Promise<{ keys: string[]; last?: string }>;
  /** Deletes these keys' bytes, up to 1,000 (the sweeper). */
  deleteMany(at: StoreGeneration, keys: string[]): Promise<void>;
}

/**
 * What the object stores' use cases run over: the two ports above, the sweep queue every kind of
 * store shares, and the clock and randomness, injected. `ObjectService`, `ObjectUploads` and
 * `ObjectExpiry` all take it, so none of them points back at another for its dependencies.
 */
export interface ObjectServiceOptions {
  catalog: ObjectCatalog;
  blobs: BlobStore;
  /** The sweep queue every kind of store shares (`../kv/sweep-task.ts`). */
  sweeps: SweepQueue;
  /** See `SweepTask.settleUntil`: `objectsSettleSeconds(…)` in production. */
  settleMs: number;
  now: Clock;
  randomBytes: RandomBytes;
  /** Expiry passes fall on multiples of this many seconds (`ObjectExpiry`); 300 when unset. */
  expirySweepSeconds?: number;
}
