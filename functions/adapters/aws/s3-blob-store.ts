import { DeleteObjectCommand, GetObjectCommand, PutObjectCommand, S3ServiceException, type S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { BlobStore, StoreGeneration, StoredBytes } from '../../domain/objects/types.js';
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
}
