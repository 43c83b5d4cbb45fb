import { AppError } from '../../shared/errors.js';
import { expiresAtFor } from '../kv/service.js';
import { MAX_OBJECT_SIZE_BYTES, MAX_WRITE_ATTEMPTS, MULTIPART_PART_BYTES, UPLOAD_ID_BYTES, UPLOAD_LIFETIME_SECONDS, UPLOAD_URL_EXPIRY_SECONDS } from './limits.js';
import { checkCondition, type ObjectServiceOptions, type WriteCondition } from './service.js';
import type { ObjectInfo, Store, StoreRef, Upload, UploadedPart } from './types.js';
import { releaseUsage, reserveUsage } from './usage.js';
import { isAllowedContentType } from './validation.js';

export interface NewUpload {
  key: string;
  size: number;
  contentType: string;
  metadata: Record<string, string>;
  /** Decided when the upload completes; checked at creation too, before a byte is sent. */
  condition?: WriteCondition;
}

/** Where the client sends the bytes: one PUT, or one PUT per part (numbered from 1, each `partSize` but the last). */
export type UploadTarget =
  | { upload: Upload; url: string; expiresAt: number }
  | { upload: Upload; parts: { partNumber: number; size: number; url: string }[]; partSize: number; expiresAt: number };

const refused = (code: 'payload_too_large' | 'validation_error' | 'conflict', message: string) => new AppError(code, message, undefined, message);

/**
 * Uploads straight to S3 through presigned URLs, for objects larger than the API carries.
 *
 * The size is declared when the upload is created and reserved in the store's usage then, so
 * `max_object_size` and `max_bytes` hold before a byte is sent. The bytes land at the object's
 * own key; completing the upload HEADs them and records the object in the catalog only when their
 * size is the declared one. Bytes of another size are removed, with whatever the key held before
 * (S3 replaced it as they landed), and the reservation is given back. Aborting gives it back too.
 *
 *   create: reserve size ─ record upload ─ URLs
 *   client:                                 PUT bytes (or parts)
 *   complete: claim upload (delete it) ─ [assemble parts] ─ HEAD ─ size matches? ─ record object
 *                                                                  └ no: remove bytes, release ─ 400/413
 */
export class ObjectUploads {
  constructor(
    private readonly options: ObjectServiceOptions,
    private readonly getStore: (ref: StoreRef) => Promise<Store>,
    /** `ObjectExpiry.arm`: every upload, and every object of a store with a TTL, is in a pass's reach once written. */
    private readonly armExpiry: (store: Store, expiresAt: number) => Promise<void>,
  ) {}

  async create(ref: StoreRef, request: NewUpload): Promise<UploadTarget> {
    const store = await this.getStore(ref);
    const { config } = store;
    if (request.size > config.maxObjectSize) throw refused('payload_too_large', `the store's max_object_size is ${config.maxObjectSize} bytes`);
    if (request.size > MAX_OBJECT_SIZE_BYTES) throw refused('payload_too_large', `objects are at most ${MAX_OBJECT_SIZE_BYTES} bytes`);
    if (!isAllowedContentType(request.contentType, config.allowedContentTypes)) {
      throw refused('validation_error', `the store accepts only ${config.allowedContentTypes!.join(', ')}`);
    }
    const { catalog, blobs } = this.options;
    if (request.condition) checkCondition(request.condition, await catalog.getObject(store, request.key), this.options.now());
    const nowSeconds = Math.floor(this.options.now() / 1000);
    const delta = { objects: 0, bytes: request.size };
    await reserveUsage(catalog, store, delta);
    try {
      const multipart = request.size > MULTIPART_PART_BYTES;
      const upload: Upload = {
        id: Buffer.from(this.options.randomBytes(UPLOAD_ID_BYTES)).toString('hex'),
        ...request,
        ...(multipart && { multipartId: await blobs.startMultipart(store, request.key, request.contentType, request.metadata) }),
        expiresAt: nowSeconds + UPLOAD_LIFETIME_SECONDS,
      };
      if (!(await catalog.createUpload(store, upload))) throw new AppError('unavailable', 'upload id taken');
      // An upload never completed nor aborted gives its reservation back when the pass after its lifetime drops it.
      await this.armExpiry(store, upload.expiresAt);
      const expiresAt = nowSeconds + UPLOAD_URL_EXPIRY_SECONDS;
      if (!upload.multipartId) return { upload, url: await blobs.uploadUrl(store, request.key, request.contentType, UPLOAD_URL_EXPIRY_SECONDS), expiresAt };
      const count = Math.ceil(request.size / MULTIPART_PART_BYTES);
      const parts = await Promise.all(Array.from({ length: count }, async (_, index) => ({
        partNumber: index + 1,
        size: Math.min(MULTIPART_PART_BYTES, request.size - index * MULTIPART_PART_BYTES),
        url: await blobs.partUrl(store, request.key, upload.multipartId!, index + 1, UPLOAD_URL_EXPIRY_SECONDS),
      })));
      return { upload, parts, partSize: MULTIPART_PART_BYTES, expiresAt };
    } catch (error) {
      await releaseUsage(catalog, store, delta);
      throw error;
    }
  }

  /** Records what the upload's URLs brought, if it is the size declared. `parts` are required for a multipart upload. */
  async complete(ref: StoreRef, id: string, parts: UploadedPart[] | undefined): Promise<ObjectInfo> {
    const store = await this.getStore(ref);
    const { catalog, blobs } = this.options;
    const upload = await this.openUpload(store, id);
    if (upload.condition) await this.refuseUnlessCondition(store, upload);
    if (upload.multipartId) {
      if (!parts) throw refused('validation_error', 'parts is required to complete a multipart upload');
      // Assembled before the upload is claimed: parts that S3 refuses leave it open for another try.
      await blobs.completeMultipart(store, upload.key, upload.multipartId, parts);
    }
    const landed = await blobs.head(store, upload.key);
    if (!landed) throw refused('conflict', 'nothing has been uploaded to the URL yet');
    if (!(await catalog.deleteUpload(store, id))) throw new AppError('not_found', 'no such upload');
    if (landed.size !== upload.size) {
      await this.removeLanded(store, upload);
      throw refused(landed.size > upload.size ? 'payload_too_large' : 'validation_error', `the upload declared ${upload.size} bytes and ${landed.size} arrived: nothing is stored`);
    }
    const nowMs = this.options.now();
    const info: ObjectInfo = {
      key: upload.key, size: upload.size, etag: landed.etag, contentType: upload.contentType, metadata: upload.metadata,
      lastModified: new Date(nowMs).toISOString(),
      ...(store.config.ttlSeconds !== null && { expiresAt: expiresAtFor(nowMs, store.config.ttlSeconds) }),
    };
    for (let attempt = 0; attempt < MAX_WRITE_ATTEMPTS; attempt++) {
      const stored = await catalog.getObject(store, upload.key);
      if (upload.condition) {
        try {
          checkCondition(upload.condition, stored, nowMs);
        } catch (error) {
          // The key changed between the check above and now: what this upload landed is not kept.
          await this.removeLanded(store, upload);
          throw error;
        }
      }
      if (!(await catalog.putObject(store, info, stored))) continue;
      // The upload's size was reserved at creation; what the key held before is given back.
      if (stored) await releaseUsage(catalog, store, { objects: 0, bytes: stored.size });
      else await catalog.adjustUsage(store, store, { objects: 1, bytes: 0 }, null);
      if (info.expiresAt !== undefined) await this.armExpiry(store, info.expiresAt);
      return info;
    }
    throw new AppError('unavailable', 'the key kept changing during the upload');
  }

  /** Drops an open upload and gives its reservation back; bytes a single PUT already landed are removed. */
  async abort(ref: StoreRef, id: string): Promise<void> {
    const store = await this.getStore(ref);
    const upload = await this.openUpload(store, id);
    if (!(await this.options.catalog.deleteUpload(store, id))) throw new AppError('not_found', 'no such upload');
    await this.dropClaimed(store, upload);
  }

  /**
   * Undoes an upload whose catalog entry this caller has deleted (an abort, or the expiry pass
   * after the upload's lifetime): its parts are dropped, bytes a single PUT landed are removed,
   * and its reservation is given back.
   */
  async dropClaimed(store: Store, upload: Upload): Promise<void> {
    if (upload.multipartId) {
      await this.options.blobs.abortMultipart(store, upload.key, upload.multipartId);
      await releaseUsage(this.options.catalog, store, { objects: 0, bytes: upload.size });
      return;
    }
    const landed = await this.options.blobs.head(store, upload.key);
    const stored = await this.options.catalog.getObject(store, upload.key);
    if (landed && landed.etag !== stored?.etag) await this.removeLanded(store, upload);
    else await releaseUsage(this.options.catalog, store, { objects: 0, bytes: upload.size });
  }

  /**
   * Refuses the completion (409/412) when the upload's condition no longer holds, before parts are
   * assembled: a multipart upload is then dropped with the key's object untouched. A single PUT has
   * already replaced the key's bytes, so that object is removed with them, as when an upload is refused
   * for its size; the condition checked at creation is what keeps it from landing on an object it must not.
   */
  private async refuseUnlessCondition(store: Store, upload: Upload): Promise<void> {
    try {
      checkCondition(upload.condition!, await this.options.catalog.getObject(store, upload.key), this.options.now());
    } catch (error) {
      if (await this.options.catalog.deleteUpload(store, upload.id)) await this.dropClaimed(store, upload);
      throw error;
    }
  }

  private async openUpload(store: Store, id: string): Promise<Upload> {
    const upload = await this.options.catalog.getUpload(store, id);
    if (!upload || upload.expiresAt <= this.options.now() / 1000) throw new AppError('not_found', 'no such upload');
    return upload;
  }

  /**
   * Removes bytes an upload landed at its key, and the object the key held before (S3 replaced
   * its bytes), giving back the upload's reservation and that object's usage.
   */
  private async removeLanded(store: Store, upload: Upload): Promise<void> {
    const { catalog, blobs } = this.options;
    const stored = await catalog.getObject(store, upload.key);
    if (stored && (await catalog.deleteObject(store, stored))) await releaseUsage(catalog, store, { objects: 1, bytes: stored.size });
    await blobs.delete(store, upload.key);
    await releaseUsage(catalog, store, { objects: 0, bytes: upload.size });
  }
}
