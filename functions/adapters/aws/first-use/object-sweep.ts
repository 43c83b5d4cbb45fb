/** Loaded by the sweeper with its first object store's task: the S3 client and the objects catalog, one chunk of the bundle. */
import type { SweepTarget } from '../../../domain/kv/sweeper.js';
import type { AwsClients } from '../clients.js';
import { dynamoClient } from '../clients/dynamo.js';
import { s3Client } from '../clients/s3.js';
import { DynamoObjectCatalog } from '../dynamo-object-catalog.js';
import { ObjectGenerationSweep } from '../object-generation-sweep.js';
import { S3BlobStore } from '../s3-blob-store.js';

export const objectGenerationSweep = (table: string, bucket: string, aws: AwsClients): SweepTarget =>
  new ObjectGenerationSweep(new DynamoObjectCatalog(dynamoClient(aws), table), new S3BlobStore(s3Client(aws), bucket));
