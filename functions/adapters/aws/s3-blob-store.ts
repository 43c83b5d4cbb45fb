import {
  AbortMultipartUploadCommand, CompleteMultipartUploadCommand, CreateMultipartUploadCommand, DeleteObjectCommand, DeleteObjectsCommand, GetObjectCommand,
  HeadObjectCommand, ListObjectsV2Command, PutObjectCommand, S3ServiceException, UploadPartCommand, type S3Client,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { BlobStore, StoreGeneration, StoredBytes, UploadedPart } from '../../domain/objects/types.js';
import { AppError } from '../../shared/errors.js';

/** Where an object's bytes are: `<store id>/<generation>/<key>`; the account never appears in it. */
export const objectKey = (at: StoreGeneration, key: string): string => `${at.id}/${at.generation}/${key}`;
/** The prefix of everything a store's generation holds (what a sweep deletes). */
export const generationPrefix = (at: StoreGeneration): string => `${at.id}/${at.generation}/`;

export class S3BlobStore implements BlobStore {
  constructor(private readonly client: S3Client, private readonly bucket: string) {}

  async put(at: StoreGeneration, key: string, body: { bytes: Uint8Array; contentType: string; metadata: Record<string, string> }): Promise<string> {
    const { ETag } = await this.client.send(new PutObjectCommand({
      Bucket: this.bucket, Key: objectKey(at, key), Body: body.bytes, ContentType: body.contentType, Metadata: body.metadata,
    }));
    return ETag!;
  }

  async get(at: StoreGeneration, key: string, range?: string): Promise<StoredBytes> {
    try {
      const result = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: objectKey(at, key), Range: range }));
      const bytes = await result.Body!.transformToByteArray();
      return result.ContentRange ? { bytes, contentRange: result.ContentRange } : { bytes };
    } catch (error) {
      if (error instanceof S3ServiceException && error.name === 'InvalidRange') throw new AppError('range_not_satisfiable', 'range outside the object');
      // The catalog said it exists: bytes missing now means a delete raced this read.
      if (error instanceof S3ServiceException && error.name === 'NoSuchKey') throw new AppError('not_found', 'object bytes gone');
      throw error;
    }
  }

  async delete(at: StoreGeneration, key: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: objectKey(at, key) }));
  }

  downloadUrl(at: StoreGeneration, key: string, expiresInSeconds: number): Promise<string> {
    return getSignedUrl(this.client, new GetObjectCommand({ Bucket: this.bucket, Key: objectKey(at, key) }), { expiresIn: expiresInSeconds });
  }

  async head(at: StoreGeneration, key: string): Promise<{ size: number; etag: string } | undefined> {
    try {
      const result = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: objectKey(at, key) }));
      return { size: result.ContentLength!, etag: result.ETag! };
    } catch (error) {
      if (error instanceof S3ServiceException && (error.name === 'NotFound' || error.name === 'NoSuchKey')) return undefined;
      throw error;
    }
  }

  uploadUrl(at: StoreGeneration, key: string, contentType: string, expiresInSeconds: number): Promise<string> {
    // Content-Type is a signed header: the upload cannot land as a type the store does not allow.
    return getSignedUrl(this.client, new PutObjectCommand({ Bucket: this.bucket, Key: objectKey(at, key), ContentType: contentType }), { expiresIn: expiresInSeconds });
  }

  async startMultipart(at: StoreGeneration, key: string, contentType: string, metadata: Record<string, string>): Promise<string> {
    const { UploadId } = await this.client.send(new CreateMultipartUploadCommand({ Bucket: this.bucket, Key: objectKey(at, key), ContentType: contentType, Metadata: metadata }));
    return UploadId!;
  }

  partUrl(at: StoreGeneration, key: string, multipartId: string, partNumber: number, expiresInSeconds: number): Promise<string> {
    return getSignedUrl(this.client, new UploadPartCommand({ Bucket: this.bucket, Key: objectKey(at, key), UploadId: multipartId, PartNumber: partNumber }), { expiresIn: expiresInSeconds });
  }

  async completeMultipart(at: StoreGeneration, key: string, multipartId: string, parts: UploadedPart[]): Promise<void> {
    try {
      await this.client.send(new CompleteMultipartUploadCommand({
        Bucket: this.bucket, Key: objectKey(at, key), UploadId: multipartId,
        MultipartUpload: { Parts: parts.map((part) => ({ PartNumber: part.partNumber, ETag: part.etag })) },
      }));
    } catch (error) {
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
