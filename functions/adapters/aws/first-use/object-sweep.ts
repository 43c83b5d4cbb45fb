/** Loaded by the sweeper with its first object store's task: the S3 client and the objects catalog, one chunk of the bundle. */
import { randomBytes } from 'node:crypto';
import type { SweepQueue } from '../../../domain/kv/sweep-task.js';
import type { ObjectExpiry } from '../../../domain/objects/expiry.js';
import { ObjectService } from '../../../domain/objects/service.js';
import type { SweepTarget } from '../../../domain/kv/sweeper.js';
import type { AwsClients } from '../clients.js';
import { dynamoClient } from '../clients/dynamo.js';
import { s3Client } from '../clients/s3.js';
import { DynamoObjectCatalog } from '../dynamo-object-catalog.js';
import { ObjectGenerationSweep } from '../object-generation-sweep.js';
import { S3BlobStore } from '../s3-blob-store.js';

export const objectGenerationSweep = (table: string, bucket: string, aws: AwsClients): SweepTarget =>
  new ObjectGenerationSweep(new DynamoObjectCatalog(dynamoClient(aws), table), new S3BlobStore(s3Client(aws), bucket));

/** The expiry passes of object stores (`ObjectExpiry`), on the same catalog and bucket. */
export const objectExpiry = (table: string, bucket: string, aws: AwsClients, sweeps: SweepQueue, expirySweepSeconds: number | undefined): ObjectExpiry =>
  new ObjectService({
    catalog: new DynamoObjectCatalog(dynamoClient(aws), table),
    blobs: new S3BlobStore(s3Client(aws), bucket),
    sweeps,
    // A pass never purges, so it never issues a generation sweep that would settle.
    settleMs: 0,
    now: Date.now,
    randomBytes,
    expirySweepSeconds,
  }).expiry;
