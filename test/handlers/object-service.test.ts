import { randomBytes } from 'node:crypto';
import { CompleteMultipartUploadCommand, CreateMultipartUploadCommand, PutObjectCommand, S3Client, UploadPartCommand } from '@aws-sdk/client-s3';
import { CreateQueueCommand } from '@aws-sdk/client-sqs';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { DynamoObjectCatalog, objectsPk, uploadsPk } from '../../functions/adapters/aws/dynamo-object-catalog.js';
import { S3BlobStore } from '../../functions/adapters/aws/s3-blob-store.js';
import { SqsSweepQueue } from '../../functions/adapters/aws/sqs-sweep-queue.js';
import type { SweepTask } from '../../functions/domain/kv/sweep-task.js';
import { CATALOG_TTL_GRACE_SECONDS, LATE_UPLOAD_SWEEP_MARGIN_SECONDS, UPLOAD_URL_EXPIRY_SECONDS } from '../../functions/domain/objects/limits.js';
import { ObjectService } from '../../functions/domain/objects/service.js';
import type { Store, StoreConfig, StoreRef } from '../../functions/domain/objects/types.js';
import { LOCAL_AWS_ENV, LOCAL_OBJECTS_BUCKET } from '../../local/engines.js';
import { useEngines } from '../support/engines.js';

/** The object service over the embedded engines (dynalite, s3rver, local SQS), its clock pinned so a test can move past URL lifetimes. */
const local = useEngines();
let catalog: DynamoObjectCatalog;
let s3: S3Client;
let queueUrl: string;

beforeAll(async () => {
  catalog = new DynamoObjectCatalog(local.dynamo, local.engines.env.KV_TABLE!);
  s3 = new S3Client({
    region: LOCAL_AWS_ENV.AWS_REGION, endpoint: local.engines.env.AWS_ENDPOINT_URL_S3, forcePathStyle: true, requestChecksumCalculation: 'WHEN_REQUIRED',
    credentials: { accessKeyId: LOCAL_AWS_ENV.AWS_ACCESS_KEY_ID, secretAccessKey: LOCAL_AWS_ENV.AWS_SECRET_ACCESS_KEY },
  });
  queueUrl = (await local.sqs.send(new CreateQueueCommand({ QueueName: 'object-service-sweeps' }))).QueueUrl!;
});

let counter = 0;
const config: StoreConfig = { description: null, maxBytes: null, maxObjectSize: 10 * 1024 ** 2, ttlSeconds: null, allowedContentTypes: null };

/** A service whose clock reads `clock.ms`, and a fresh store in it. */
async function setup(storeConfig: StoreConfig = config) {
  const clock = { ms: Date.now() };
  const blobs = new S3BlobStore(s3, LOCAL_OBJECTS_BUCKET, () => clock.ms);
  const service = new ObjectService({
    catalog, blobs, sweeps: new SqsSweepQueue(local.sqs, queueUrl), settleMs: 1000, now: () => clock.ms, randomBytes, expirySweepSeconds: 1,
  });
  const ref: StoreRef = { accountId: `acct-${++counter}`, name: `store-${counter}` };
  await service.createStore(ref, storeConfig);
  const store = async (): Promise<Store> => service.getStore(ref);
  /** Runs the store's expiry pass now, as the sweeper would once it is due. */
  const expiryPass = async () => {
    const at = await store();
    const task: SweepTask = { kind: 'object_expiry', accountId: ref.accountId, name: ref.name, objectStoreId: at.id, generation: at.generation, settleUntil: Math.floor(clock.ms / 1000) * 1000 };
    return service.expiry.run(task, { remainingMs: () => 60_000 });
  };
  return { clock, blobs, service, ref, store, expiryPass };
}

describe('object service on the embedded engines', () => {
  it('a presigned PUT sent again after its object is deleted lands on bytes nobody serves, and the pass after its URL expires deletes them', async () => {
    const { clock, blobs, service, ref, store, expiryPass } = await setup();
    const target = await service.uploads.create(ref, { key: 'late', size: 3, contentType: 'text/plain', metadata: {} });
    if (!('url' in target)) throw new Error('expected a single PUT');
    const send = (body: string) => fetch(target.url, { method: 'PUT', headers: { 'content-type': 'text/plain', 'if-none-match': '*' }, body });
    expect((await send('one')).status).toBe(200);
    // Write once: the URL cannot replace what it wrote.
    expect((await send('two')).status).toBe(412);
    const info = await service.uploads.complete(ref, target.upload.id, undefined);
    expect(info.blob).toBe(target.upload.blob);
    await service.deleteObject(ref, 'late');
    // The URL still works for its hour: what it writes now is at the upload's own name, served by no entry.
    expect((await send('три')).status).toBe(403); // another size: the signed Content-Length refuses it
    expect((await send('two')).status).toBe(200);
    expect(await blobs.head(await store(), target.upload.blob)).toMatchObject({ size: 3 });
    await expect(service.getObject(ref, 'late')).rejects.toMatchObject({ code: 'not_found' });
    expect((await store()).usage).toEqual({ objects: 0, bytes: 0 });
    // Before the URL has expired the pass leaves the upload's entry, for it may still write.
    await expiryPass();
    expect((await catalog.getUpload(await store(), target.upload.id))?.sweepAt).toBe(target.upload.urlExpiresAt + LATE_UPLOAD_SWEEP_MARGIN_SECONDS);
    clock.ms = (target.upload.urlExpiresAt + LATE_UPLOAD_SWEEP_MARGIN_SECONDS + 1) * 1000;
    await expiryPass();
    expect(await blobs.head(await store(), target.upload.blob)).toBeUndefined();
    expect(await catalog.getUpload(await store(), target.upload.id)).toBeUndefined();
  });

  it("a completed upload's bytes are kept by the pass after its URLs expire, and an aborted one's late bytes are deleted", async () => {
    const { clock, blobs, service, ref, store, expiryPass } = await setup();
    const create = async (key: string) => {
      const target = await service.uploads.create(ref, { key, size: 3, contentType: 'text/plain', metadata: {} });
      if (!('url' in target)) throw new Error('expected a single PUT');
      const send = () => fetch(target.url, { method: 'PUT', headers: { 'content-type': 'text/plain', 'if-none-match': '*' }, body: 'abc' });
      return { target, send };
    };
    const kept = await create('kept');
    expect((await kept.send()).status).toBe(200);
    await service.uploads.complete(ref, kept.target.upload.id, undefined);
    const aborted = await create('aborted');
    await service.uploads.abort(ref, aborted.target.upload.id);
    expect((await aborted.send()).status).toBe(200);
    expect((await store()).usage).toEqual({ objects: 1, bytes: 3 });
    clock.ms += (UPLOAD_URL_EXPIRY_SECONDS + LATE_UPLOAD_SWEEP_MARGIN_SECONDS + 1) * 1000;
    await expiryPass();
    expect(await blobs.head(await store(), aborted.target.upload.blob)).toBeUndefined();
    expect(Buffer.from((await service.getObject(ref, 'kept') as { body: { bytes: Uint8Array } }).body.bytes).toString()).toBe('abc');
    expect((await store()).usage).toEqual({ objects: 1, bytes: 3 });
  });

  it('catalog entries carry the TTL attribute a week after their expiry, so the product pass gives the usage back first', async () => {
    const { service, ref, store } = await setup({ ...config, ttlSeconds: 60 });
    const info = await service.putObject(ref, 'k', { bytes: Buffer.from('v'), contentType: 'text/plain', metadata: {} });
    const target = await service.uploads.create(ref, { key: 'u', size: 1, contentType: 'text/plain', metadata: {} });
    const at = await store();
    const item = async (pk: string, sk: string) => (await local.dynamo.send(new GetCommand({ TableName: local.engines.env.KV_TABLE!, Key: { pk, sk } }))).Item!;
    const objectItem = await item(objectsPk(at), 'k');
    expect(objectItem.live_until).toBe(info.expiresAt);
    expect(objectItem.expires_at).toBe(info.expiresAt! + CATALOG_TTL_GRACE_SECONDS);
    const uploadItem = await item(uploadsPk(at), target.upload.id);
    expect(uploadItem.live_until).toBe(target.upload.expiresAt);
    expect(uploadItem.expires_at).toBe(target.upload.expiresAt + CATALOG_TTL_GRACE_SECONDS);
    // Read back, the entry expires at its own time, not the TTL's.
    expect((await catalog.getObject(at, 'k'))?.expiresAt).toBe(info.expiresAt);
  });

  it('an entry whose bytes are missing (a crash between the two writes) reads 404, is removed, and its usage is given back', async () => {
    const { blobs, service, ref, store } = await setup();
    const info = await service.putObject(ref, 'lost', { bytes: Buffer.from('gone'), contentType: 'text/plain', metadata: {} });
    await service.putObject(ref, 'kept', { bytes: Buffer.from('here'), contentType: 'text/plain', metadata: {} });
    await blobs.delete(await store(), info.blob!);
    expect((await store()).usage).toEqual({ objects: 2, bytes: 8 });
    await expect(service.getObject(ref, 'lost')).rejects.toMatchObject({ code: 'not_found' });
    expect(await catalog.getObject(await store(), 'lost')).toBeUndefined();
    expect((await store()).usage).toEqual({ objects: 1, bytes: 4 });
    expect((await service.listObjects(ref, { limit: 10 })).objects.map((o) => o.key)).toEqual(['kept']);
  });

  it('URLs answer when they really stop working: the signing credentials\' expiry when it comes before the time asked', async () => {
    const now = Date.now();
    const expiring = new S3Client({
      region: LOCAL_AWS_ENV.AWS_REGION, endpoint: local.engines.env.AWS_ENDPOINT_URL_S3, forcePathStyle: true, requestChecksumCalculation: 'WHEN_REQUIRED',
      credentials: { accessKeyId: LOCAL_AWS_ENV.AWS_ACCESS_KEY_ID, secretAccessKey: LOCAL_AWS_ENV.AWS_SECRET_ACCESS_KEY, sessionToken: 'session', expiration: new Date(now + 600_000) },
    });
    const blobs = new S3BlobStore(expiring, LOCAL_OBJECTS_BUCKET, () => now);
    const at = { id: 'a'.repeat(32), generation: 'b'.repeat(32) };
    expect((await blobs.downloadUrl(at, 'k', 3600)).expiresAt).toBe(Math.floor(now / 1000) + 600);
    expect((await blobs.downloadUrl(at, 'k', 60)).expiresAt).toBe(Math.floor(now / 1000) + 60);
    expect((await blobs.uploadUrl(at, 'k', { contentType: 'text/plain', size: 1 }, 3600)).expiresAt).toBe(Math.floor(now / 1000) + 600);
    expect((await blobs.partUrl(at, 'k', 'upload', { partNumber: 1, size: 1 }, 3600)).expiresAt).toBe(Math.floor(now / 1000) + 600);
  });

  it("s3rver, patched (patches/s3rver+3.7.1+002+conditional-writes.patch), keeps S3's If-None-Match: * on PutObject and CompleteMultipartUpload: one of concurrent writers wins, the rest are 412", async () => {
    const key = `conditional/${++counter}`;
    const put = (body: string) => s3.send(new PutObjectCommand({ Bucket: LOCAL_OBJECTS_BUCKET, Key: key, Body: body, IfNoneMatch: '*' }));
    const results = await Promise.allSettled(Array.from({ length: 8 }, (_, i) => put(`writer ${i}`)));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const r of results.filter((r) => r.status === 'rejected')) expect((r as PromiseRejectedResult).reason).toMatchObject({ name: 'PreconditionFailed', $metadata: { httpStatusCode: 412 } });
    const multipart = async () => {
      const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: LOCAL_OBJECTS_BUCKET, Key: key }));
      const { ETag } = await s3.send(new UploadPartCommand({ Bucket: LOCAL_OBJECTS_BUCKET, Key: key, UploadId, PartNumber: 1, Body: 'part' }));
      return s3.send(new CompleteMultipartUploadCommand({ Bucket: LOCAL_OBJECTS_BUCKET, Key: key, UploadId, IfNoneMatch: '*', MultipartUpload: { Parts: [{ PartNumber: 1, ETag }] } }));
    };
    await expect(multipart()).rejects.toMatchObject({ name: 'PreconditionFailed' });
    // Without the condition, a write replaces as S3's does.
    await s3.send(new PutObjectCommand({ Bucket: LOCAL_OBJECTS_BUCKET, Key: key, Body: 'unconditional' }));
  });

  it('completing a multipart upload again after its answer was lost finds its bytes already assembled and records them', async () => {
    const { blobs, service, ref, store } = await setup();
    const size = 5 * 1024 * 1024 + 3;
    const target = await service.uploads.create(ref, { key: 'big', size, contentType: 'application/octet-stream', metadata: {} });
    if (!('parts' in target)) throw new Error('expected a multipart upload');
    const bytes = randomBytes(size);
    const parts = [];
    let offset = 0;
    for (const part of target.parts) {
      const sent = await fetch(part.url, { method: 'PUT', body: bytes.subarray(offset, offset + part.size) });
      expect(sent.status).toBe(200);
      parts.push({ partNumber: part.partNumber, etag: sent.headers.get('etag')! });
      offset += part.size;
    }
    // S3 assembled the parts, then the function died before recording the object.
    await blobs.completeMultipart(await store(), target.upload.blob, target.upload.multipartId!, parts);
    const info = await service.uploads.complete(ref, target.upload.id, parts);
    expect(info).toMatchObject({ key: 'big', size, blob: target.upload.blob });
    expect((await store()).usage).toEqual({ objects: 1, bytes: size });
  });
});
