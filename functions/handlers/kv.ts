import { randomBytes } from 'node:crypto';
import type { AwsClients } from '../adapters/aws/clients.js';
import { dynamoClient } from '../adapters/aws/clients/dynamo.js';
import { DynamoKvStore } from '../adapters/aws/dynamo-kv-store.js';
import { sqsSweepQueueOnFirstUse } from '../adapters/aws/sqs-on-first-use.js';
import { DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT } from '../domain/kv/limits.js';
import { KvService } from '../domain/kv/service.js';
import { settleSecondsFor } from '../domain/kv/sweep-task.js';
import type { Bucket, BucketRef } from '../domain/kv/types.js';
import { contentTypeOf, parseBucketConfig, parseValueTtl, validateBucketName, validateKey, validatePrefix } from '../domain/kv/validation.js';
import { AppError } from '../shared/errors.js';
import { FUNCTIONS } from '../manifest.js';
import type { Authenticator } from '../domain/authenticator.js';
import type { Settings } from '../settings.js';
import { createHttpHandler, type RouteRequest } from '../shared/handler.js';
import { created, header, json, jsonObjectBody, keyParam, limitParam, noContent, ok, pathParam, queryParam, rawBody, type HttpEvent } from '../shared/http.js';
import { createGatewayAuthenticator } from './gateway-auth.js';

const bucketOf = ({ event, principal }: RouteRequest): BucketRef =>
  ({ accountId: principal.accountId, name: validateBucketName(pathParam(event, 'bucket')) });

/**
 * A value's key: `?key=` on `…/value` (the form that survives single encoding), or `…/keys/{key+}`
 * encoded twice. `also`: the other query parameters the route takes (`ttl_seconds` on a put).
 */
const keyOf = (event: HttpEvent, also: readonly string[] = []): string => validateKey(keyParam(event, '/storage/kv/{bucket}/value', '', also));

/** The query parameter of a put that gives the value its own lifetime. */
const VALUE_TTL_PARAMETER = 'ttl_seconds';

/** `If-None-Match: *` on a bucket's PUT: create only (409 if it exists); any other value is 400. */
function createOnly(event: HttpEvent): boolean {
  const ifNoneMatch = header(event, 'if-none-match')?.trim();
  if (ifNoneMatch !== undefined && ifNoneMatch !== '*') {
    throw new AppError('validation_error', 'If-None-Match', undefined, 'If-None-Match takes only * (create the bucket only if it does not exist).');
  }
  return ifNoneMatch === '*';
}

const bucketResource = (bucket: Bucket) => ({
  name: bucket.name,
  description: bucket.config.description,
  ttl_seconds: bucket.config.ttlSeconds,
  max_value_bytes: bucket.config.maxValueBytes,
  created_at: bucket.createdAt,
});

/** The kv function's routes over one `KvService`; exported so tests can build it over other stores. */
export const createKvHandler = (service: KvService, authenticator: Authenticator) => createHttpHandler('kv', {
  async listKVBuckets({ event, principal }) {
    const page = { limit: limitParam(event, DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT), cursor: queryParam(event, 'cursor') };
    const { buckets, nextCursor } = await service.listBuckets(principal.accountId, page);
    return ok({ buckets: buckets.map(bucketResource), next_cursor: nextCursor });
  },
  async createKVBucket(request) {
    const ref = bucketOf(request);
    const config = parseBucketConfig(jsonObjectBody(request.event, { optional: true }));
    const { bucket, created: isNew } = await service.putBucket(ref, config, { ifNoneMatch: createOnly(request.event) });
    return isNew ? created(bucketResource(bucket)) : ok(bucketResource(bucket));
  },
  getKVBucket: async (request) => ok(bucketResource(await service.getBucket(bucketOf(request)))),
  async deleteKVBucket(request) {
    await service.deleteBucket(bucketOf(request));
    return noContent();
  },
  async purgeKVBucket(request) {
    const bucket = bucketOf(request);
    await service.purgeBucket(bucket);
    return json(200, { message: `Bucket '${bucket.name}' purged; its configuration is unchanged and the removed data is reclaimed in the background.` });
  },
  async listKVKeys(request) {
    const { event } = request;
    const bucket = bucketOf(request);
    const page = { prefix: validatePrefix(queryParam(event, 'prefix')), limit: limitParam(event, DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT), cursor: queryParam(event, 'cursor') };
    const { keys, nextCursor } = await service.listKeys(bucket, page);
    return ok({ keys, next_cursor: nextCursor });
  },
  async putKVValue(request) {
    const { event } = request;
    const bucket = bucketOf(request);
    const key = keyOf(event, [VALUE_TTL_PARAMETER]);
    const ttlSeconds = parseValueTtl(queryParam(event, VALUE_TTL_PARAMETER));
    const revision = await service.putValue(bucket, key, { bytes: rawBody(event), contentType: contentTypeOf(header(event, 'content-type')), ttlSeconds });
    return ok({ key, revision });
  },
  async getKVValue(request) {
    const value = await service.getValue(bucketOf(request), keyOf(request.event));
    // Base64 keeps binary values byte-exact through API Gateway; nosniff keeps browsers to the stored type.
    return {
      statusCode: 200,
      headers: { 'content-type': value.contentType, 'x-content-type-options': 'nosniff' },
      body: Buffer.from(value.bytes).toString('base64'),
      isBase64Encoded: true,
    };
  },
  async deleteKVValue(request) {
    await service.deleteValue(bucketOf(request), keyOf(request.event));
    return noContent();
  },
}, authenticator);

export function composeKv(settings: Settings, aws: AwsClients) {
  const service = new KvService({
    store: new DynamoKvStore(dynamoClient(aws), settings.kvTable, { indexOnRead: true }),
    // Only a purge sends to the sweep queue: the SQS client loads on the first.
    sweeps: sqsSweepQueueOnFirstUse(settings.kvSweepQueueUrl, aws),
    now: Date.now,
    randomBytes,
    settleMs: (settings.kvSweepSettleSeconds ?? settleSecondsFor(FUNCTIONS.kv.timeoutSeconds)) * 1000,
  });
  return createKvHandler(service, createGatewayAuthenticator(settings, aws));
}
