import type { DataOf, Transport } from '../http.js';
import { paginate, type ListOptions } from '../paging.js';
import type { Bucket, BucketInput, Key } from '../types.js';

/** What a value can be written from; a string is sent as UTF-8 text. */
export type ValueBody = string | Uint8Array | ArrayBuffer | Blob;

/** KV buckets and their values. Keys go in `?key=`, so every key a bucket accepts round-trips. */
export class KvView {
  constructor(private readonly http: Transport) {}

  /** Every bucket of the account (`listKVBuckets`), page after page. */
  listBuckets(options: ListOptions = {}): AsyncGenerator<Bucket> {
    return paginate(async (cursor) => {
      const data = await this.http.data('listKVBuckets', { query: { limit: options.pageSize, cursor }, signal: options.signal });
      return { items: data.buckets, next: data.next_cursor };
    });
  }

  /** Creates a bucket, or changes its configuration when it exists (`createKVBucket`); `ifNoneMatch: '*'` only creates. */
  createBucket(bucket: string, input: BucketInput = {}, options: { ifNoneMatch?: '*' } = {}): Promise<Bucket> {
    return this.http.data('createKVBucket', { path: { bucket }, json: input, headers: { 'if-none-match': options.ifNoneMatch } });
  }

  /** One bucket's configuration (`getKVBucket`). */
  getBucket(bucket: string): Promise<DataOf<'getKVBucket'>> {
    return this.http.data('getKVBucket', { path: { bucket } });
  }

  /** Deletes a bucket and its values (`deleteKVBucket`). */
  async deleteBucket(bucket: string): Promise<void> {
    await this.http.call('deleteKVBucket', { path: { bucket } });
  }

  /** Deletes every value and keeps the bucket (`purgeKVBucket`). */
  purgeBucket(bucket: string): Promise<{ message: string }> {
    return this.http.call('purgeKVBucket', { path: { bucket } }).then((r) => r.json() as Promise<{ message: string }>);
  }

  /** Every key of the bucket, in byte order, each once (`listKVKeys`, following `cursor`). */
  keys(bucket: string, options: ListOptions & { prefix?: string } = {}): AsyncGenerator<string> {
    return paginate(async (cursor) => {
      const data = await this.http.data('listKVKeys', { path: { bucket }, query: { prefix: options.prefix, limit: options.pageSize, cursor }, signal: options.signal });
      return { items: data.keys, next: data.next_cursor };
    });
  }

  /** Writes a value (`putKVValueByKey`); `ttlSeconds` overrides the bucket's lifetime for this value. */
  put(bucket: string, key: string, value: ValueBody, options: { contentType?: string; ttlSeconds?: number } = {}): Promise<Key> {
    const contentType = options.contentType ?? (typeof value === 'string' ? 'text/plain; charset=utf-8' : 'application/octet-stream');
    return this.http.data('putKVValueByKey', { path: { bucket }, query: { key, ttl_seconds: options.ttlSeconds }, body: value, headers: { 'content-type': contentType } });
  }

  /** A value's bytes (`getKVValueByKey`); a key that holds none is a 404 `not_found` {@link FlowgateError}. */
  async get(bucket: string, key: string): Promise<Uint8Array> {
    const response = await this.http.call('getKVValueByKey', { path: { bucket }, query: { key } });
    return new Uint8Array(await response.arrayBuffer());
  }

  /** A value as UTF-8 text. */
  async getString(bucket: string, key: string): Promise<string> {
    return new TextDecoder().decode(await this.get(bucket, key));
  }

  /** Deletes a value (`deleteKVValueByKey`). */
  async delete(bucket: string, key: string): Promise<void> {
    await this.http.call('deleteKVValueByKey', { path: { bucket }, query: { key } });
  }
}
