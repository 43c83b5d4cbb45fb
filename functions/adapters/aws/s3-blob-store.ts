import {
  AbortMultipartUploadCommand, CompleteMultipartUploadCommand, CreateMultipartUploadCommand, DeleteObjectCommand, DeleteObjectsCommand, GetObjectCommand,
  HeadObjectCommand, ListObjectsV2Command, PutObjectCommand, S3ServiceException, UploadPartCommand, type S3Client,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { BlobStore, SignedUrl, StoreGeneration, StoredBytes, UploadedPart } from '../../domain/objects/types.js';
import { AppError, notFound } from '../../shared/errors.js';

/** Where an object's bytes are: `<store id>/<generation>/<key>`; the account never appears in it. */
export const objectKey = (at: StoreGeneration, key: string): string => `${at.id}/${at.generation}/${key}`;
/** The prefix of everything a store's generation holds (what a sweep deletes). */
export const generationPrefix = (at: StoreGeneration): string => `${at.id}/${at.generation}/`;

/**
 * Headers a presigned PUT binds. The presigner leaves `content-type` out of the signature unless
 * told (`S3RequestPresigner.prepareRequest`), and signs the rest of what the command sets; without
 * these the URL signs only `host`, and takes any size and type, again and again, for its lifetime.
 */
const BOUND_UPLOAD_HEADERS = new Set(['content-type', 'content-length', 'if-none-match']);
/** A part binds its size only: its type is the upload's, set when it started (the SDK's default part type would make clients send it). */
const BOUND_PART_HEADERS = new Set(['content-length']);

export class S3BlobStore implements BlobStore {
  constructor(private readonly client: S3Client, private readonly bucket: string, private readonly now: () => number = Date.now) {}

  async put(at: StoreGeneration, key: string, body: { bytes: Uint8Array; contentType: string; metadata: Record<string, string> }): Promise<string> {
    const { ETag } = await this.client.send(new PutObjectCommand({
      Bucket: this.bucket, Key: objectKey(at, key), Body: body.bytes, ContentType: body.contentType, Metadata: body.metadata, IfNoneMatch: '*',
    }));
    return ETag!;
  }

  /**
   * Signs a command into a URL, and says when it really stops working: SigV4 URLs made with
   * temporary credentials (a Lambda's role) die when the credentials do, whatever `X-Amz-Expires`
   * says. Credentials from the environment carry no expiry (`lambda-credentials.ts`): then the
   * asked lifetime is all that is known.
   */
  private async sign(expiresInSeconds: number, presign: (options: { expiresIn: number; signableHeaders?: Set<string> }) => Promise<string>, signableHeaders?: Set<string>): Promise<SignedUrl> {
    const credentials = await this.client.config.credentials();
    const asked = Math.floor(this.now() / 1000) + expiresInSeconds;
    const expiresAt = credentials.expiration ? Math.min(asked, Math.floor(credentials.expiration.getTime() / 1000)) : asked;
    const url = await presign({ expiresIn: expiresInSeconds, ...(signableHeaders && { signableHeaders }) });
    return { url, expiresAt };
  }

  async get(at: StoreGeneration, key: string, range?: string): Promise<StoredBytes> {
    try {
      const result = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: objectKey(at, key), Range: range }));
      const bytes = await result.Body!.transformToByteArray();
      return result.ContentRange ? { bytes, contentRange: result.ContentRange } : { bytes };
    } catch (error) {
      if (error instanceof S3ServiceException && error.name === 'InvalidRange') throw new AppError('range_not_satisfiable', 'range outside the object');
      // The catalog said it exists: bytes missing now means a delete raced this read.
      if (error instanceof S3ServiceException && error.name === 'NoSuchKey') throw notFound('object', 'object bytes gone');
      throw error;
    }
  }

  async delete(at: StoreGeneration, key: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: objectKey(at, key) }));
  }

  downloadUrl(at: StoreGeneration, key: string, expiresInSeconds: number): Promise<SignedUrl> {
    const command = new GetObjectCommand({ Bucket: this.bucket, Key: objectKey(at, key) });
    return this.sign(expiresInSeconds, (options) => getSignedUrl(this.client, command, options));
  }

  async head(at: StoreGeneration, key: string): Promise<{ size: number; etag: string; contentType: string } | undefined> {
    try {
      const result = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: objectKey(at, key) }));
      return { size: result.ContentLength!, etag: result.ETag!, contentType: result.ContentType ?? '' };
    } catch (error) {
      if (error instanceof S3ServiceException && (error.name === 'NotFound' || error.name === 'NoSuchKey')) return undefined;
      throw error;
    }
  }

  uploadUrl(at: StoreGeneration, key: string, upload: { contentType: string; size: number }, expiresInSeconds: number): Promise<SignedUrl> {
    const command = new PutObjectCommand({ Bucket: this.bucket, Key: objectKey(at, key), ContentType: upload.contentType, ContentLength: upload.size, IfNoneMatch: '*' });
    return this.sign(expiresInSeconds, (options) => getSignedUrl(this.client, command, options), BOUND_UPLOAD_HEADERS);
  }

  async startMultipart(at: StoreGeneration, key: string, contentType: string, metadata: Record<string, string>): Promise<string> {
    const { UploadId } = await this.client.send(new CreateMultipartUploadCommand({ Bucket: this.bucket, Key: objectKey(at, key), ContentType: contentType, Metadata: metadata }));
    return UploadId!;
  }

  partUrl(at: StoreGeneration, key: string, multipartId: string, part: { partNumber: number; size: number }, expiresInSeconds: number): Promise<SignedUrl> {
    const command = new UploadPartCommand({ Bucket: this.bucket, Key: objectKey(at, key), UploadId: multipartId, PartNumber: part.partNumber, ContentLength: part.size });
    return this.sign(expiresInSeconds, (options) => getSignedUrl(this.client, command, options), BOUND_PART_HEADERS);
  }

  async completeMultipart(at: StoreGeneration, key: string, multipartId: string, parts: UploadedPart[]): Promise<void> {
    try {
      await this.client.send(new CompleteMultipartUploadCommand({
        Bucket: this.bucket, Key: objectKey(at, key), UploadId: multipartId, IfNoneMatch: '*',
        MultipartUpload: { Parts: parts.map((part) => ({ PartNumber: part.partNumber, ETag: part.etag })) },
      }));
    } catch (error) {
      // The name is the upload's own and only its completion writes there: bytes already at it are
      // this upload's, assembled by an earlier call whose answer was lost.
      if (error instanceof S3ServiceException && error.name === 'PreconditionFailed') return;
      // The parts as the client reported them do not make an object (a missing, small or misnamed part).
      if (error instanceof S3ServiceException && (error.$metadata.httpStatusCode ?? 500) < 500) {
        throw new AppError('validation_error', `multipart complete: ${error.name}`, undefined, 'the parts do not match what was uploaded: every part, in order, with the ETag its PUT answered');
      }
      throw error;
    }
  }

  async abortMultipart(at: StoreGeneration, key: string, multipartId: string): Promise<void> {
    try {
      await this.client.send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: objectKey(at, key), UploadId: multipartId }));
    } catch (error) {
      if (error instanceof S3ServiceException && error.name === 'NoSuchUpload') return;
      throw error;
    }
  }

  async listGeneration(at: StoreGeneration, page: { after?: string; limit: number }): Promise<{ keys: string[]; last?: string }> {
    const prefix = generationPrefix(at);
    const result = await this.client.send(new ListObjectsV2Command({
      Bucket: this.bucket, Prefix: prefix, MaxKeys: page.limit, ...(page.after !== undefined && { StartAfter: prefix + page.after }),
    }));
    const keys = (result.Contents ?? []).map((object) => object.Key!.slice(prefix.length));
    return { keys, last: result.IsTruncated ? keys.at(-1) : undefined };
  }

  async deleteMany(at: StoreGeneration, keys: string[]): Promise<void> {
    if (keys.length === 0) return;
    const { Errors = [] } = await this.client.send(new DeleteObjectsCommand({
      Bucket: this.bucket, Delete: { Objects: keys.map((key) => ({ Key: objectKey(at, key) })), Quiet: true },
    }));
    // Failed keys throw, so the message is retried from the same position.
    if (Errors.length > 0) throw new Error(`S3 kept ${Errors.length} of ${keys.length} objects: ${Errors[0]!.Code}`);
  }
}
