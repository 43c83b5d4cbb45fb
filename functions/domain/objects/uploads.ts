import { AppError, notFound } from '../../shared/errors.js';
import { expiresAtFor } from '../kv/service.js';
import { BLOB_ID_BYTES, LATE_UPLOAD_SWEEP_MARGIN_SECONDS, MAX_OBJECT_SIZE_BYTES, MAX_WRITE_ATTEMPTS, MULTIPART_PART_BYTES, UPLOAD_ID_BYTES, UPLOAD_LIFETIME_SECONDS, UPLOAD_URL_EXPIRY_SECONDS } from './limits.js';
import { checkCondition, type WriteCondition } from './conditions.js';
import { blobNameOf, type ObjectInfo, type ObjectServiceOptions, type Store, type StoreRef, type Upload, type UploadedPart } from './types.js';
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

/**
 * Where the client sends the bytes: one PUT, or one PUT per part (numbered from 1, each `partSize`
 * but the last). `expiresAt` (epoch seconds) is when the URLs stop working, which may be sooner
 * than `UPLOAD_URL_EXPIRY_SECONDS` (the credentials that signed them expire first).
 */
export type UploadTarget =
  | { upload: Upload; url: string; expiresAt: number }
  | { upload: Upload; parts: { partNumber: number; size: number; url: string }[]; partSize: number; expiresAt: number };

/** The parts of an upload of `size` bytes: number and size of each. */
const partsOf = (size: number) => Array.from({ length: Math.ceil(size / MULTIPART_PART_BYTES) }, (_, index) => ({
  partNumber: index + 1,
  size: Math.min(MULTIPART_PART_BYTES, size - index * MULTIPART_PART_BYTES),
}));

const refused = (code: 'payload_too_large' | 'validation_error' | 'conflict', message: string) => new AppError(code, message, undefined, message);

/**
 * Uploads straight to S3 through presigned URLs, for objects larger than the API carries.
 *
 * The size is declared when the upload is created and reserved in the store's usage then, so
 * `max_object_size` and `max_bytes` hold before a byte is sent, and the URLs bind it: S3 checks
 * the signed `Content-Length` (each part's, for multipart) and `Content-Type`, and `If-None-Match: *`
 * makes a single PUT write once. The bytes land at a name of the upload's own (`Upload.blob`),
 * never at the key's current bytes: completing the upload HEADs them and records the object in
 * the catalog (the compare-and-swap every write uses) only when their size and type are the
 * declared ones. Aborting, or a refused completion, deletes them and gives the reservation back.
 *
 * A URL still works after the upload is closed, until it expires: once deleted, the upload's name
 * could be written again (the object completed then deleted or replaced, or the upload aborted).
 * So a closed upload's entry stays until its URLs have expired, and the expiry pass then deletes
 * whatever is at its name unless the key's entry names it: a late write is never served, and
 * never left uncounted past the URLs' lifetime.
 *
 *   create: reserve size ─ record upload ─ URLs (size, type, write-once signed)
 *   client:                                 PUT bytes (or parts) to the upload's own name
 *   complete: close upload ─ [assemble parts] ─ HEAD ─ size, type match? ─ swap entry ─ delete replaced bytes
 *                                                  └ no: delete bytes, release ─ 400/413
 *   pass after the URLs expire: bytes at the name and no entry names them? delete ─ forget upload
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
      const blob = this.randomHex(BLOB_ID_BYTES);
      const multipart = request.size > MULTIPART_PART_BYTES;
      const upload: Upload = {
        id: this.randomHex(UPLOAD_ID_BYTES),
        ...request,
        blob,
        ...(multipart && { multipartId: await blobs.startMultipart(store, blob, request.contentType, request.metadata) }),
        expiresAt: nowSeconds + UPLOAD_LIFETIME_SECONDS,
        urlExpiresAt: nowSeconds + UPLOAD_URL_EXPIRY_SECONDS,
      };
      if (!(await catalog.createUpload(store, upload))) throw new AppError('unavailable', 'upload id taken');
      // An upload never completed nor aborted gives its reservation back when the pass after its lifetime drops it.
      await this.armExpiry(store, upload.expiresAt);
      return await this.sign(store, upload, UPLOAD_URL_EXPIRY_SECONDS);
    } catch (error) {
      await releaseUsage(catalog, store, delta);
      throw error;
    }
  }

  /**
   * Fresh URLs for an open upload (a large upload can outlast its first URLs): the upload's
   * `urlExpiresAt` moves on first, so the pass after it waits for these too. Never past the upload's lifetime.
   */
  async refresh(ref: StoreRef, id: string): Promise<UploadTarget> {
    const store = await this.getStore(ref);
    const upload = await this.openUpload(store, id);
    const nowSeconds = Math.floor(this.options.now() / 1000);
    const urlExpiresAt = Math.min(nowSeconds + UPLOAD_URL_EXPIRY_SECONDS, upload.expiresAt);
    if (urlExpiresAt <= nowSeconds || !(await this.options.catalog.extendUpload(store, id, urlExpiresAt))) throw notFound('upload');
    return this.sign(store, { ...upload, urlExpiresAt }, urlExpiresAt - nowSeconds);
  }

  private async sign(store: Store, upload: Upload, expiresInSeconds: number): Promise<UploadTarget> {
    const { blobs } = this.options;
    if (!upload.multipartId) {
      const { url, expiresAt } = await blobs.uploadUrl(store, upload.blob, { contentType: upload.contentType, size: upload.size }, expiresInSeconds);
      return { upload, url, expiresAt };
    }
    const parts = await Promise.all(partsOf(upload.size).map(async (part) => ({ ...part, signed: await blobs.partUrl(store, upload.blob, upload.multipartId!, part, expiresInSeconds) })));
    return {
      upload,
      parts: parts.map(({ partNumber, size, signed }) => ({ partNumber, size, url: signed.url })),
      partSize: MULTIPART_PART_BYTES,
      expiresAt: Math.min(...parts.map((part) => part.signed.expiresAt)),
    };
  }

  /** Records what the upload's URLs brought, if it is the size and type declared. `parts` are required for a multipart upload. */
  async complete(ref: StoreRef, id: string, parts: UploadedPart[] | undefined): Promise<ObjectInfo> {
    const store = await this.getStore(ref);
    const { catalog, blobs } = this.options;
    const upload = await this.openUpload(store, id);
    if (upload.condition) await this.refuseUnlessCondition(store, upload);
    if (upload.multipartId) {
      if (!parts) throw refused('validation_error', 'parts is required to complete a multipart upload');
      // Assembled before the upload is closed: parts that S3 refuses leave it open for another try.
      await blobs.completeMultipart(store, upload.blob, upload.multipartId, parts);
    }
    const landed = await blobs.head(store, upload.blob);
    if (!landed) throw refused('conflict', 'nothing has been uploaded to the URL yet');
    if (!(await this.close(store, upload))) throw notFound('upload');
    if (landed.size !== upload.size) {
      await this.discard(store, upload);
      throw refused(landed.size > upload.size ? 'payload_too_large' : 'validation_error', `the upload declared ${upload.size} bytes and ${landed.size} arrived: nothing is stored`);
    }
    if (landed.contentType !== upload.contentType) {
      await this.discard(store, upload);
      throw refused('validation_error', `the upload declared ${upload.contentType} and ${landed.contentType || 'no type'} arrived: nothing is stored`);
    }
    const nowMs = this.options.now();
    const info: ObjectInfo = {
      key: upload.key, size: upload.size, etag: landed.etag, contentType: upload.contentType, metadata: upload.metadata,
      lastModified: new Date(nowMs).toISOString(), blob: upload.blob,
      ...(store.config.ttlSeconds !== null && { expiresAt: expiresAtFor(nowMs, store.config.ttlSeconds) }),
    };
    for (let attempt = 0; attempt < MAX_WRITE_ATTEMPTS; attempt++) {
      const stored = await catalog.getObject(store, upload.key);
      if (upload.condition) {
        try {
          checkCondition(upload.condition, stored, nowMs);
        } catch (error) {
          // The key changed between the check above and now: what this upload landed is not kept.
          await this.discard(store, upload);
          throw error;
        }
      }
      if (!(await catalog.putObject(store, info, stored))) continue;
      // The upload's size was reserved at creation; what the key held before is given back, and its bytes deleted.
      if (stored) {
        await releaseUsage(catalog, store, { objects: 0, bytes: stored.size });
        await blobs.delete(store, blobNameOf(stored));
      } else {
        await catalog.adjustUsage(store, store, { objects: 1, bytes: 0 }, null);
      }
      if (info.expiresAt !== undefined) await this.armExpiry(store, info.expiresAt);
      return info;
    }
    await this.discard(store, upload);
    throw new AppError('unavailable', 'the key kept changing during the upload');
  }

  /** Drops an open upload and gives its reservation back; bytes already sent are deleted. */
  async abort(ref: StoreRef, id: string): Promise<void> {
    const store = await this.getStore(ref);
    const upload = await this.openUpload(store, id);
    if (!(await this.close(store, upload))) throw notFound('upload');
    await this.discard(store, upload);
  }

  /**
   * Closes the upload (true for exactly one caller) and arms the pass after its URLs expire,
   * which deletes whatever they brought late (`sweepLate`).
   */
  async close(store: Store, upload: Upload): Promise<boolean> {
    const sweepAt = await this.options.catalog.closeUpload(store, upload.id, LATE_UPLOAD_SWEEP_MARGIN_SECONDS);
    if (sweepAt === undefined) return false;
    await this.armExpiry(store, sweepAt);
    return true;
  }

  /**
   * Undoes an upload this caller has closed (an abort, a refused completion, or the expiry pass
   * after the upload's lifetime): its parts are dropped, bytes it landed are deleted (its name is
   * its own), and its reservation is given back.
   */
  async discard(store: Store, upload: Upload): Promise<void> {
    const { blobs, catalog } = this.options;
    if (upload.multipartId) await blobs.abortMultipart(store, upload.blob, upload.multipartId);
    // An unfinished multipart upload made before names were per upload has nothing at its name (the key) that is its own.
    if (!(upload.multipartId && upload.blob === upload.key)) await blobs.delete(store, upload.blob);
    await releaseUsage(catalog, store, { objects: 0, bytes: upload.size });
  }

  /**
   * A closed upload whose URLs have expired: bytes at its name are deleted unless the key's entry
   * names them (the completed object), and the upload is forgotten. Nothing can write there any more.
   */
  async sweepLate(store: Store, upload: Upload): Promise<void> {
    const { blobs, catalog } = this.options;
    const stored = await catalog.getObject(store, upload.key);
    if (!stored || blobNameOf(stored) !== upload.blob) {
      if (upload.multipartId) await blobs.abortMultipart(store, upload.blob, upload.multipartId);
      await blobs.delete(store, upload.blob);
    }
    await catalog.forgetUpload(store, upload.id);
  }

  /**
   * Refuses the completion (409/412) when the upload's condition no longer holds, before parts are
   * assembled: the upload is dropped and the key's object is untouched (the upload's bytes were never at it).
   */
  private async refuseUnlessCondition(store: Store, upload: Upload): Promise<void> {
    try {
      checkCondition(upload.condition!, await this.options.catalog.getObject(store, upload.key), this.options.now());
    } catch (error) {
      if (await this.close(store, upload)) await this.discard(store, upload);
      throw error;
    }
  }

  private async openUpload(store: Store, id: string): Promise<Upload> {
    const upload = await this.options.catalog.getUpload(store, id);
    if (!upload || upload.sweepAt !== undefined || upload.expiresAt <= this.options.now() / 1000) throw notFound('upload');
    return upload;
  }

  private randomHex(bytes: number): string {
    return Buffer.from(this.options.randomBytes(bytes)).toString('hex');
  }
}
