import { FlowgateError, errorFromResponse } from '../errors.js';
import type { BodyOf, DataOf, Transport } from '../http.js';
import { paginate, type ListOptions } from '../paging.js';
import type { ObjectInfo, ObjectStore, ObjectStoreInput, ObjectUrl, Upload } from '../types.js';
import { sourceOf, type UploadBody, type UploadSource } from '../upload-source.js';

/** Up to this many bytes an upload is one `PUT` through the API (the API carries 4 MiB a request). */
export const SINGLE_PUT_MAX_BYTES = 4 * 1024 * 1024;
/** Parts sent at once by default. */
export const DEFAULT_PART_CONCURRENCY = 4;
/** Tries of one part after its first, by default. */
export const DEFAULT_PART_RETRIES = 3;

export interface UploadProgress {
  /** Bytes the store has taken so far. */
  loaded: number;
  total: number;
  /** The part that just finished (multipart only). */
  part?: number;
}

export interface UploadOptions {
  contentType?: string;
  metadata?: Record<string, string>;
  /** Called after each part (or the single PUT) is stored. */
  onProgress?: (progress: UploadProgress) => void;
  /** The size of a `ReadableStream` body; without it the stream is read into memory first. */
  size?: number;
  /** Bodies up to this size go in one PUT through the API (default and most {@link SINGLE_PUT_MAX_BYTES}). */
  singlePutMaxBytes?: number;
  /** Parts in flight at once (default {@link DEFAULT_PART_CONCURRENCY}). */
  concurrency?: number;
  /** Tries of a failed part after its first (default {@link DEFAULT_PART_RETRIES}). */
  partRetries?: number;
  /** `'*'`: only if the key holds no object. */
  ifNoneMatch?: '*';
  /** Only if the key holds an object with this etag. */
  ifMatch?: string;
  signal?: AbortSignal;
}

export interface DownloadOptions {
  /** A byte range, `end` included (as HTTP has it), or a `Range` header value such as `bytes=-100`. */
  range?: { start: number; end?: number } | string;
  signal?: AbortSignal;
}

export interface ObjectDownload {
  /** 200 for the whole object, 206 for a range. */
  status: number;
  body: Uint8Array;
  contentType: string | null;
  etag: string | null;
  /** `bytes first-last/size` for a range. */
  contentRange: string | null;
  /** The `x-meta-*` headers written with the object, without the prefix. */
  metadata: Record<string, string>;
}

const metadataHeaders = (metadata: Record<string, string> = {}) =>
  Object.fromEntries(Object.entries(metadata).map(([name, value]) => [`x-meta-${name}`, value]));

const rangeHeader = (range: DownloadOptions['range']) =>
  range === undefined ? undefined : typeof range === 'string' ? range : `bytes=${range.start}-${range.end ?? ''}`;

/** Object stores and their objects. Keys go in `?key=`, so every key a store accepts round-trips. */
export class ObjectsView {
  constructor(private readonly http: Transport) {}

  /** Every store of the account (`listObjectStores`). */
  listStores(options: ListOptions = {}): AsyncGenerator<ObjectStore> {
    return paginate(async (cursor) => {
      const data = await this.http.data('listObjectStores', { query: { limit: options.pageSize, cursor }, signal: options.signal });
      return { items: data.stores, next: data.next_cursor };
    });
  }

  /** Creates a store (`createObjectStore`). */
  createStore(store: string, input: ObjectStoreInput = {}): Promise<DataOf<'createObjectStore'>> {
    return this.http.data('createObjectStore', { path: { store }, json: input });
  }

  /** A store's configuration and usage (`getObjectStore`). */
  getStore(store: string): Promise<DataOf<'getObjectStore'>> {
    return this.http.data('getObjectStore', { path: { store } });
  }

  /** Deletes a store and its objects (`deleteObjectStore`). */
  async deleteStore(store: string): Promise<void> {
    await this.http.call('deleteObjectStore', { path: { store } });
  }

  /** Deletes every object and keeps the store (`purgeObjectStore`). */
  purgeStore(store: string): Promise<unknown> {
    return this.http.call('purgeObjectStore', { path: { store } }).then((r) => r.json());
  }

  /** Every object of the store (`listObjects`); with `delimiter`, the common prefixes are left out (use `listPage`). */
  list(store: string, options: ListOptions & { prefix?: string } = {}): AsyncGenerator<ObjectInfo> {
    return paginate(async (cursor) => {
      const data = await this.http.data('listObjects', { path: { store }, query: { prefix: options.prefix, limit: options.pageSize, cursor }, signal: options.signal });
      return { items: data.objects, next: data.next_cursor };
    });
  }

  /** One page of `listObjects`, with `prefixes` when a `delimiter` is given. */
  listPage(store: string, query: NonNullable<import('../http.js').QueryOf<'listObjects'>> = {}): Promise<DataOf<'listObjects'>> {
    return this.http.data('listObjects', { path: { store }, query });
  }

  /** Writes an object of at most 4 MiB in one request (`putObjectByKey`); {@link upload} takes any size. */
  put(store: string, key: string, body: Uint8Array | ArrayBuffer | Blob | string, options: Pick<UploadOptions, 'contentType' | 'metadata' | 'ifMatch' | 'ifNoneMatch' | 'signal'> = {}): Promise<ObjectInfo> {
    return this.http.data('putObjectByKey', {
      path: { store },
      query: { key },
      body,
      signal: options.signal,
      headers: {
        'content-type': options.contentType ?? (typeof body === 'string' ? 'text/plain; charset=utf-8' : 'application/octet-stream'),
        'if-match': options.ifMatch,
        'if-none-match': options.ifNoneMatch,
        ...metadataHeaders(options.metadata),
      },
    });
  }

  /**
   * Stores `body` at `key`, whatever its size: one `PUT` through the API up to 4 MiB, else an
   * upload straight to S3 (`createObjectUpload`): one presigned PUT, or parts sent `concurrency` at
   * a time, a failed part sent again (with fresh URLs when they expired) before the upload is given
   * up and aborted. A string is a file's path (Node only).
   */
  async upload(store: string, key: string, body: UploadBody, options: UploadOptions = {}): Promise<ObjectInfo> {
    const source = await sourceOf(body, { size: options.size });
    try {
      const threshold = Math.min(options.singlePutMaxBytes ?? SINGLE_PUT_MAX_BYTES, SINGLE_PUT_MAX_BYTES);
      if (source.size <= threshold) {
        const info = await this.put(store, key, await source.read(0, source.size), options);
        options.onProgress?.({ loaded: source.size, total: source.size });
        return info;
      }
      return await this.uploadDirect(store, key, source, options);
    } finally {
      await source.close?.();
    }
  }

  private async uploadDirect(store: string, key: string, source: UploadSource, options: UploadOptions): Promise<ObjectInfo> {
    const input: BodyOf<'createObjectUpload'> = { key, size: source.size, content_type: options.contentType ?? 'application/octet-stream', metadata: options.metadata };
    let upload: Upload = await this.http.data('createObjectUpload', {
      path: { store }, json: input, signal: options.signal, headers: { 'if-match': options.ifMatch, 'if-none-match': options.ifNoneMatch },
    });
    try {
      let loaded = 0;
      const refresh = async () => {
        upload = { ...upload, ...(await this.http.data('refreshObjectUploadUrls', { path: { store, id: upload.id }, json: {}, signal: options.signal })) } as Upload;
      };
      if (upload.url) {
        const bytes = await source.read(0, source.size);
        await this.putPart(() => ({ url: upload.url!, headers: upload.headers ?? {} }), bytes, refresh, options);
        options.onProgress?.({ loaded: source.size, total: source.size });
        return await this.http.data('completeObjectUpload', { path: { store, id: upload.id }, json: {}, signal: options.signal });
      }
      const parts = upload.parts ?? [];
      const partSize = upload.part_size ?? 5 * 1024 * 1024;
      const etags: { part_number: number; etag: string }[] = [];
      let next = 0;
      // Bounded concurrency: each worker takes the next part in order and reads it at once, so a
      // stream is read front to back and at most `concurrency` parts are in memory.
      const worker = async () => {
        while (next < parts.length) {
          const index = next++;
          const { part_number: partNumber, size } = parts[index]!;
          const start = (partNumber - 1) * partSize;
          const bytes = await source.read(start, start + size);
          const etag = await this.putPart(() => {
            const part = upload.parts!.find((p) => p.part_number === partNumber)!;
            return { url: part.url, headers: {} };
          }, bytes, refresh, options);
          etags.push({ part_number: partNumber, etag });
          loaded += size;
          options.onProgress?.({ loaded, total: source.size, part: partNumber });
        }
      };
      const concurrency = Math.max(1, options.concurrency ?? DEFAULT_PART_CONCURRENCY);
      await Promise.all(Array.from({ length: Math.min(concurrency, parts.length) }, worker));
      etags.sort((a, b) => a.part_number - b.part_number);
      return await this.http.data('completeObjectUpload', { path: { store, id: upload.id }, json: { parts: etags }, signal: options.signal });
    } catch (error) {
      // Frees the size the upload reserved in the store's usage; the first error is the one to report.
      await this.http.call('abortObjectUpload', { path: { store, id: upload.id } }).catch(() => undefined);
      throw error;
    }
  }

  /** PUTs one part (or the whole object) to its presigned URL, trying again on a failure; returns its ETag. */
  private async putPart(target: () => { url: string; headers: Record<string, string> }, bytes: Uint8Array, refresh: () => Promise<void>, options: UploadOptions): Promise<string> {
    const retries = options.partRetries ?? DEFAULT_PART_RETRIES;
    for (let attempt = 0; ; attempt++) {
      const { url, headers } = target();
      let failure: FlowgateError;
      try {
        const response = await this.http.rawFetch(url, { method: 'PUT', headers, body: bytes as Uint8Array<ArrayBuffer>, signal: options.signal });
        if (response.ok) {
          await response.body?.cancel();
          return response.headers.get('etag') ?? '';
        }
        failure = await errorFromResponse(response, 'upload part');
        // S3's 403 on a presigned URL is most often an expired one: sign anew and try again.
        if (response.status === 403 && attempt < retries) await refresh();
      } catch (cause) {
        if (options.signal?.aborted) throw cause;
        failure = new FlowgateError({ status: 0, error: 'network_error', message: `upload part: ${(cause as Error)?.message ?? cause}`, cause });
      }
      if (attempt >= retries || (failure.status >= 400 && failure.status < 500 && failure.status !== 403 && failure.status !== 408 && failure.status !== 429)) throw failure;
      await new Promise((done) => setTimeout(done, Math.random() * Math.min(5000, 200 * 2 ** attempt)));
    }
  }

  /**
   * An object's bytes, or the `range` asked for (`getObjectByKey`). An object over 4 MiB is answered
   * with a redirect to a presigned S3 URL, which is fetched without the client's credential: fetch
   * would carry `X-Api-Key` (any header but `Authorization`) along a redirect to S3's origin.
   */
  async download(store: string, key: string, options: DownloadOptions = {}): Promise<ObjectDownload> {
    const range = rangeHeader(options.range);
    let response = await this.http.call('getObjectByKey', {
      path: { store }, query: { key }, headers: { range }, signal: options.signal, redirect: 'manual', accept: [301, 302, 303, 307, 308],
    });
    if (response.type === 'opaqueredirect') {
      // A browser hides a manual redirect's Location: ask for the presigned URL instead.
      response = await this.http.rawFetch((await this.createUrl(store, key)).url, { headers: range ? { range } : {}, signal: options.signal });
    } else if (response.status >= 300 && response.status < 400) {
      await response.body?.cancel();
      response = await this.http.rawFetch(new URL(response.headers.get('location') ?? '', this.http.baseUrl).href, { headers: range ? { range } : {}, signal: options.signal });
    }
    if (!response.ok) throw await errorFromResponse(response, 'getObjectByKey');
    const metadata: Record<string, string> = {};
    response.headers.forEach((value, name) => {
      if (name.startsWith('x-meta-')) metadata[name.slice('x-meta-'.length)] = value;
      // S3 answers the redirect with its own spelling of user metadata.
      else if (name.startsWith('x-amz-meta-')) metadata[name.slice('x-amz-meta-'.length)] ??= value;
    });
    return {
      status: response.status,
      body: new Uint8Array(await response.arrayBuffer()),
      contentType: response.headers.get('content-type'),
      etag: response.headers.get('etag'),
      contentRange: response.headers.get('content-range'),
      metadata,
    };
  }

  /** Whether the object exists, with its headers (`headObjectByKey`); `undefined` when it does not. */
  async head(store: string, key: string): Promise<{ size: number; contentType: string | null; etag: string | null } | undefined> {
    const response = await this.http.call('headObjectByKey', { path: { store }, query: { key }, accept: [404] });
    if (response.status === 404) return undefined;
    return { size: Number(response.headers.get('content-length')), contentType: response.headers.get('content-type'), etag: response.headers.get('etag') };
  }

  /** Deletes an object (`deleteObjectByKey`). */
  async delete(store: string, key: string): Promise<void> {
    await this.http.call('deleteObjectByKey', { path: { store }, query: { key } });
  }

  /** A presigned GET of the object (`createObjectUrlByKey`). */
  createUrl(store: string, key: string, options: { expiresIn?: number } = {}): Promise<ObjectUrl> {
    return this.http.data('createObjectUrlByKey', { path: { store }, query: { key }, json: { expires_in: options.expiresIn } });
  }

  /** Aborts an upload started with `createObjectUpload` (`abortObjectUpload`). */
  async abortUpload(store: string, id: string): Promise<void> {
    await this.http.call('abortObjectUpload', { path: { store, id } });
  }
}
