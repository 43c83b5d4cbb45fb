import type { BlobStore } from '../../domain/objects/types.js';
import { portOnFirstCall } from '../lazy.js';
import type { AwsClients } from './clients.js';

/**
 * The objects bucket, for the objects function, loaded with the S3 client and its presigner by
 * the first call that touches bytes: store requests, listings, HEAD and conditional refusals are
 * answered from the table alone, and the S3 client is over 100 KB of the bundle's init. See
 * `sfn-on-first-use.ts` for the bundle's side.
 */
export const s3BlobStoreOnFirstUse = (bucket: string, aws: AwsClients): BlobStore =>
  portOnFirstCall(async () => (await import('./first-use/s3.js')).blobStore(bucket, aws), {
    put: true, get: true, delete: true, downloadUrl: true, head: true, uploadUrl: true, startMultipart: true, partUrl: true, completeMultipart: true, abortMultipart: true, listGeneration: true, deleteMany: true,
  });
