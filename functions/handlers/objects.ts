import { randomBytes } from 'node:crypto';
import type { AwsClients } from '../adapters/aws/clients.js';
import { dynamoClient } from '../adapters/aws/clients/dynamo.js';
import { DynamoObjectCatalog } from '../adapters/aws/dynamo-object-catalog.js';
import { s3BlobStoreOnFirstUse } from '../adapters/aws/s3-on-first-use.js';
import { onFirstUse } from '../adapters/lazy.js';
import type { Authenticator } from '../domain/authenticator.js';
import { contentTypeOf } from '../domain/kv/validation.js';
import { DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT } from '../domain/objects/limits.js';
import type { WriteCondition } from '../domain/objects/conditions.js';
import { ObjectService, objectsSettleSeconds } from '../domain/objects/service.js';
import { sqsSweepQueueOnFirstUse } from '../adapters/aws/sqs-on-first-use.js';
import { FUNCTIONS } from '../manifest.js';
import type { ObjectInfo, Store, StoreRef } from '../domain/objects/types.js';
import type { UploadTarget } from '../domain/objects/uploads.js';
import { metadataFrom, parseStoreConfig, validateDelimiter, validateObjectKey, validateObjectPrefix, validateStoreName } from '../domain/objects/validation.js';
import type { Settings } from '../settings.js';
import { createHttpHandler, type HandlerOptions, type RouteRequest } from '../shared/handler.js';
import { idempotencyOnFirstUse } from '../adapters/aws/idempotency-on-first-use.js';
import { created, header, json, jsonObjectBody, keyParam, limitParam, noContent, ok, pathParam, queryParam, rawBody, type HttpEvent, type HttpResult } from '../shared/http.js';
import { AppError } from '../shared/errors.js';
import { createGatewayAuthenticator } from './gateway-auth.js';

/**
 * The upload and URL request parsers load with the first request that needs them, not at init:
 * the function's init bundle is held under 300 KB (test/infra/bundle-credentials.test.ts), and most
 * requests read or write an object.
 */
const uploadRequests = onFirstUse(() => import('../domain/objects/upload-requests.js'));

const storeOf = ({ event, principal }: RouteRequest): StoreRef =>
  ({ accountId: principal.accountId, name: validateStoreName(pathParam(event, 'store')) });
/** An object's key: `?key=` on `…/object` (the form that survives single encoding), or `…/objects/{key+}` encoded twice. */
const keyOf = (event: HttpEvent, suffix?: '/url'): string =>
  validateObjectKey(keyParam(event, `/storage/objects/{store}/object${suffix ?? ''}`, suffix));

const storeResource = (store: Store) => ({
  name: store.name,
  description: store.config.description,
  max_bytes: store.config.maxBytes,
  max_object_size: store.config.maxObjectSize,
  ttl_seconds: store.config.ttlSeconds,
  allowed_content_types: store.config.allowedContentTypes,
  created_at: store.createdAt,
  objects: store.usage.objects,
  bytes: store.usage.bytes,
});

const objectResource = (info: ObjectInfo) => ({
  key: info.key,
  size: info.size,
  etag: info.etag,
  content_type: info.contentType,
  last_modified: info.lastModified,
  metadata: info.metadata,
});

/** The headers that describe an object, on GET and HEAD alike. */
const objectHeaders = (info: ObjectInfo): Record<string, string> => ({
  'content-type': info.contentType,
  etag: info.etag,
  'last-modified': new Date(info.lastModified).toUTCString(),
  'accept-ranges': 'bytes',
  // Stored bytes are never run as the console's script: the browser keeps to the stored type.
  'x-content-type-options': 'nosniff',
  ...Object.fromEntries(Object.entries(info.metadata).map(([name, value]) => [`x-meta-${name}`, value])),
});

/** One `bytes=first-last`, `bytes=first-` or `bytes=-suffix` range; anything else is ignored, as HTTP allows. */
const SINGLE_RANGE = /^bytes=(?:\d{1,15}-\d{0,15}|-\d{1,15})$/;
const rangeOf = (event: HttpEvent): string | undefined => {
  const range = header(event, 'range')?.trim();
  return range && SINGLE_RANGE.test(range) ? range : undefined;
};

/** The objects function's routes over one `ObjectService`; exported so tests can build it over other stores. */
export const createObjectsHandler = (service: ObjectService, authenticator: Authenticator, options: HandlerOptions = {}) => createHttpHandler('objects', {
  async listObjectStores({ event, principal }) {
    const page = { limit: limitParam(event, DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT), cursor: queryParam(event, 'cursor') };
    const { stores, nextCursor } = await service.listStores(principal.accountId, page);
    return ok({ stores: stores.map(storeResource), next_cursor: nextCursor });
  },
  createObjectStore: async (request) =>
    created(storeResource(await service.createStore(storeOf(request), parseStoreConfig(jsonObjectBody(request.event, { optional: true }))))),
  getObjectStore: async (request) => ok(storeResource(await service.getStore(storeOf(request)))),
  async purgeObjectStore(request) {
    const store = storeOf(request);
    await service.purgeStore(store);
    return json(200, { message: `Store '${store.name}' purged; its configuration is unchanged and the removed objects are reclaimed in the background.` });
  },
  async deleteObjectStore(request) {
    await service.deleteStore(storeOf(request));
    return noContent();
  },
  async listObjects(request) {
    const { event } = request;
    const page = {
      prefix: validateObjectPrefix(queryParam(event, 'prefix')),
      delimiter: validateDelimiter(queryParam(event, 'delimiter')),
      limit: limitParam(event, DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT),
      cursor: queryParam(event, 'cursor'),
    };
    const { objects, prefixes, nextCursor } = await service.listObjects(storeOf(request), page);
    return ok({ objects: objects.map(objectResource), prefixes, next_cursor: nextCursor });
  },
  async putObject(request) {
    const { event } = request;
    const store = storeOf(request);
    const key = keyOf(event);
    const object = { bytes: rawBody(event), contentType: contentTypeOf(header(event, 'content-type')), metadata: metadataFrom(event.headers ?? {}) };
    const info = await service.putObject(store, key, object, conditionOf(event));
    return json(200, { data: objectResource(info) }, { etag: info.etag });
  },
  async getObject(request): Promise<HttpResult> {
    const read = await service.getObject(storeOf(request), keyOf(request.event), rangeOf(request.event));
    if ('redirect' in read) return { statusCode: 307, headers: { location: read.redirect, 'cache-control': 'no-store' }, body: '' };
    const { info, body } = read;
    const headers = objectHeaders(info);
    if (body.contentRange) headers['content-range'] = body.contentRange;
    // Base64 keeps binary bytes exact through API Gateway.
    return {
      statusCode: body.contentRange ? 206 : 200,
      headers,
      body: Buffer.from(body.bytes).toString('base64'),
      isBase64Encoded: true,
    };
  },
  async headObject(request) {
    const info = await service.headObject(storeOf(request), keyOf(request.event));
    return { statusCode: 200, headers: { ...objectHeaders(info), 'content-length': String(info.size) }, body: '' };
  },
  async createObjectUrl(request) {
    // `…/object/url?key=`, or `…/objects/{key}/url`, whose greedy parameter holds `{key}/url`.
    const key = keyOf(request.event, '/url');
    const expiresIn = (await uploadRequests()).parseUrlRequest(jsonObjectBody(request.event, { optional: true }));
    const { info, url, expiresAt } = await service.objectUrl(storeOf(request), key, expiresIn);
    return ok({ url, method: 'GET', expires_at: expiresAt, object: objectResource(info) });
  },
  async createObjectUpload(request) {
    const condition = conditionOf(request.event);
    const target = await service.uploads.create(storeOf(request), { ...(await uploadRequests()).parseNewUpload(jsonObjectBody(request.event)), ...((condition.ifNoneMatch || condition.ifMatch !== undefined) && { condition }) });
    return created(uploadResource(target));
  },
  async refreshObjectUploadUrls(request) {
    const unknown = Object.keys(jsonObjectBody(request.event, { optional: true }));
    if (unknown.length > 0) throw new AppError('validation_error', 'unknown fields', undefined, `unknown fields: ${unknown.join(', ')}`);
    return ok(uploadResource(await service.uploads.refresh(storeOf(request), (await uploadRequests()).validateUploadId(pathParam(request.event, 'id')))));
  },
  async completeObjectUpload(request) {
    const { parseCompletion, validateUploadId } = await uploadRequests();
    const parts = parseCompletion(jsonObjectBody(request.event, { optional: true }));
    const info = await service.uploads.complete(storeOf(request), validateUploadId(pathParam(request.event, 'id')), parts);
    return json(200, { data: objectResource(info) }, { etag: info.etag });
  },
  async abortObjectUpload(request) {
    await service.uploads.abort(storeOf(request), (await uploadRequests()).validateUploadId(pathParam(request.event, 'id')));
    return noContent();
  },
  async deleteObject(request) {
    await service.deleteObject(storeOf(request), keyOf(request.event));
    return noContent();
  },
}, authenticator, {}, options);

/** An upload and where to send its bytes; a single PUT must send the headers its URL signs. */
const uploadResource = (target: UploadTarget) => {
  const { upload } = target;
  return {
    id: upload.id, key: upload.key, size: upload.size, content_type: upload.contentType, metadata: upload.metadata,
    expires_at: new Date(target.expiresAt * 1000).toISOString(),
    ...('url' in target
      ? { method: 'PUT', url: target.url, headers: { 'content-type': upload.contentType, 'if-none-match': '*' } }
      : { method: 'PUT', part_size: target.partSize, parts: target.parts.map((part) => ({ part_number: part.partNumber, size: part.size, url: part.url })) }),
  };
};

/** `If-None-Match: *` and `If-Match: <etag>` of a write or an upload; any other `If-None-Match` is 400. */
function conditionOf(event: HttpEvent): WriteCondition {
  const ifMatch = header(event, 'if-match')?.trim();
  const ifNoneMatch = header(event, 'if-none-match')?.trim();
  if (ifNoneMatch !== undefined && ifNoneMatch !== '*') throw new AppError('validation_error', 'If-None-Match', undefined, 'If-None-Match takes only *');
  return { ifNoneMatch: ifNoneMatch === '*', ...(ifMatch !== undefined && { ifMatch }) };
}

export function composeObjects(settings: Settings, aws: AwsClients) {
  const service = new ObjectService({
    catalog: new DynamoObjectCatalog(dynamoClient(aws), settings.kvTable),
    // The S3 client loads with the first request that reads or writes bytes.
    blobs: s3BlobStoreOnFirstUse(settings.objectsBucket, aws),
    // Only a purge or a store delete sends to the sweep queue: the SQS client loads on the first.
    sweeps: sqsSweepQueueOnFirstUse(settings.kvSweepQueueUrl, aws),
    settleMs: (settings.kvSweepSettleSeconds ?? objectsSettleSeconds(FUNCTIONS.objects.timeoutSeconds)) * 1000,
    now: Date.now,
    randomBytes,
    expirySweepSeconds: settings.objectExpirySweepSeconds,
  });
  return createObjectsHandler(service, createGatewayAuthenticator(settings, aws), { idempotency: idempotencyOnFirstUse(settings.kvTable, aws) });
}
