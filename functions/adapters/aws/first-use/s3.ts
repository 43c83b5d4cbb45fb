/** Loaded by `s3BlobStoreOnFirstUse`: the S3 client, its presigner and what uses them, one chunk of the bundle. */
import type { BlobStore } from '../../../domain/objects/types.js';
import type { AwsClients } from '../clients.js';
import { s3Client } from '../clients/s3.js';
import { S3BlobStore } from '../s3-blob-store.js';

export const blobStore = (bucket: string, aws: AwsClients): BlobStore => new S3BlobStore(s3Client(aws), bucket);
