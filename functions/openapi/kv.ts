import { BUCKET_NAME_PATTERN, DEFAULT_LIST_LIMIT, MAX_DESCRIPTION_BYTES, MAX_KEY_BYTES, MAX_LIST_LIMIT, MAX_VALUE_BYTES, MAX_VALUE_TTL_SECONDS, MIN_VALUE_TTL_SECONDS } from '../domain/kv/limits.js';
import { dataBody, errorBody, named, pageBody, pageParameters, type OperationDocs, type Schema } from './types.js';

const SCOPE = 'Buckets belong to the caller\'s account; a bucket of another account answers 404 like a missing one.';
const KEY_RULES =
  `Keys are 1 to ${MAX_KEY_BYTES} UTF-8 bytes after URL decoding, without control characters (C0, DEL, C1) and ` +
  'without `.` or `..` path segments (clients and proxies resolve those in a path before the request arrives). `/` is ' +
  'allowed: in the path form, the rest of the path after `/keys/` is the key.';

/** The key of a key route's query form (`…/value?key=`, `…/object?key=`): read as `functions/shared/http.ts` `keyParam` says. */
export const keyQueryParameter = {
  name: 'key',
  in: 'query' as const,
  required: true,
  description:
    'The key, percent-encoded once, as every URL library encodes a query value (`encodeURIComponent(key)`, ' +
    '`URLSearchParams`, `curl --data-urlencode`). Every key survives: `/`, `?`, `#`, `%`, `&`, `+` and non-ASCII ' +
    'text. A `+` sent as is means a space, as in any query string: a `+` in a key is `%2B`. `key` is the only ' +
    'parameter taken: another one (an `&` of the key sent unencoded), a second `key`, or a `%` not followed by ' +
    'percent-encoded UTF-8 is 400 with a message, never a guessed key. Responses and listings show keys as stored, unencoded.',
  schema: { type: 'string', minLength: 1 },
};

/** Why twice: see `apiGatewayPath` in local/api-gateway.ts. Object keys travel the same way (`./objects.ts`). */
export const keyParameter = {
  name: 'key',
  in: 'path' as const,
  description:
    'Prefer the query form of this route (`?key=`). Here the key is percent-encoded twice: ' +
    '`encodeURIComponent(encodeURIComponent(key))`, whole or per `/`-separated segment. API Gateway decodes the path ' +
    'once to route the request and once more before the function reads it, so a key encoded only once loses ' +
    'everything from a `?` on, with nothing left for the function to see, and has each `%XX` in it decoded as well ' +
    '(`100%41` arrives as `100A`; a `%` without two hex digits after it is 400). A key without `%` or `?` may be ' +
    'encoded once; both forms name the same key. These routes take no query string: one means the URL was cut at a ' +
    '`?` that may belong to the key, and is 400 naming the query form. Responses and listings show keys as stored, unencoded.',
  schema: { type: 'string', minLength: 1 },
};

/**
 * The docs of a key route's two forms from the path form's: the query form (`<id>ByKey`, the key
 * in `?key=`) leads; the path form is marked deprecated, kept for existing callers.
 */
export function keyRouteDocs(docs: OperationDocs, keyRules = ''): OperationDocs {
  const queryKey = keyRules ? { ...keyQueryParameter, description: `${keyQueryParameter.description} ${keyRules}` } : keyQueryParameter;
  const forms: OperationDocs = {};
  for (const [id, doc] of Object.entries(docs)) {
    const pathKey = doc.parameters?.find((p) => p.in === 'path' && p.name === 'key');
    const { '400': refused, ...responses } = doc.responses;
    forms[`${id}ByKey`] = {
      ...doc,
      parameters: doc.parameters?.map((p) => (p === pathKey ? queryKey : p)),
      responses: {
        ...responses,
        '400': { ...refused!, description: `${refused!.description} Also: \`key\` missing, repeated, not percent-encoded UTF-8, or another query parameter beside it (the message says which).` },
      },
    };
    forms[id] = {
      ...doc,
      deprecated: true,
      description: `${doc.description} Kept for existing callers: the same operation with the key in \`?key=\` survives the single encoding every client applies.`,
      responses: {
        ...responses,
        '400': { ...refused!, description: `${refused!.description} Also: a query string on this route (the URL was cut at a \`?\`; the message names the \`?key=\` form).` },
      },
    };
  }
  return forms;
}

const bucketSchema: Schema = named('Bucket', {
  type: 'object',
  required: ['name', 'description', 'ttl_seconds', 'max_value_bytes', 'created_at'],
  properties: {
    name: { type: 'string', pattern: BUCKET_NAME_PATTERN.source },
    description: { type: ['string', 'null'] },
    ttl_seconds: { type: ['integer', 'null'], minimum: 1, description: 'Default lifetime of values; null: values do not expire.' },
    max_value_bytes: { type: 'integer', minimum: 1, maximum: MAX_VALUE_BYTES },
    created_at: { type: 'string', format: 'date-time' },
  },
});

const configSchema: Schema = named('BucketInput', {
  type: 'object',
  additionalProperties: false,
  properties: {
    description: { type: ['string', 'null'], description: `At most ${MAX_DESCRIPTION_BYTES.toLocaleString('en-US')} UTF-8 bytes.` },
    ttl_seconds: {
      type: ['integer', 'null'], minimum: 1, maximum: Number.MAX_SAFE_INTEGER,
      description: 'A value expires at least this many seconds after it is written; from then on it reads, lists and deletes as missing.',
    },
    max_value_bytes: {
      type: ['integer', 'null'], minimum: 1, maximum: MAX_VALUE_BYTES,
      description: `Largest value accepted. Default and ceiling: ${MAX_VALUE_BYTES} bytes, what one DynamoDB item holds after the key and attributes.`,
    },
  },
});

/** A purge's answer (`{"message"}`, as the interface document fixes it), shared with the object stores. */
// Inline, not named: api-smart-diff 1.0.6 reports a media type's schema turned into a `$ref` as a removed `type` (a spurious break).
export const PURGED: Schema = { type: 'object', properties: { message: { type: 'string', description: 'Confirmation text' } } };

/** A put's own TTL (NATS KV's per-key TTL, Redis's `EX`): the one query parameter a key route takes beside `key`. */
const valueTtlParameter = {
  name: 'ttl_seconds',
  in: 'query' as const,
  required: false,
  description:
    `This value's lifetime in whole seconds, ${MIN_VALUE_TTL_SECONDS} to ${MAX_VALUE_TTL_SECONDS} (10 years), ` +
    'overriding the bucket\'s `ttl_seconds` (longer or shorter); left out, the bucket\'s applies. From then on the ' +
    'value reads, lists and deletes as missing, as with the bucket\'s TTL. At most once, on either form of the route ' +
    '(on the path form the query string may hold only `ttl_seconds`); reads and deletes take no `ttl_seconds`.',
  schema: { type: 'integer', minimum: MIN_VALUE_TTL_SECONDS, maximum: MAX_VALUE_TTL_SECONDS },
};

const badBucket = errorBody(`validation_error: the bucket name does not match \`${BUCKET_NAME_PATTERN.source}\`.`);
const badKey = errorBody(`validation_error: the bucket name or the key is not valid. ${KEY_RULES}`);
const missingBucket = errorBody('not_found: no such bucket in the caller\'s account.');
const missingKey = errorBody('not_found: no such bucket in the caller\'s account, or no such key (an expired value is missing).');
const sweepRefused = errorBody('unavailable: the background sweep could not be queued, so nothing was changed; retry.');

export const kvDocs: OperationDocs = {
  listKVBuckets: {
    description:
      'The caller\'s buckets in name order, with their configuration. The listing reads an index that follows writes ' +
      'within moments: a bucket created or deleted just before may not show yet.',
    parameters: pageParameters('Buckets', { max: MAX_LIST_LIMIT, default: DEFAULT_LIST_LIMIT }),
    responses: {
      '200': pageBody('A page of buckets', 'buckets', bucketSchema),
      '400': errorBody('validation_error: bad `limit` or cursor.'),
    },
  },

  createKVBucket: {
    description:
      'Creates a bucket (201), or replaces the configuration of the one there (200), as a stream\'s PUT does. The body ' +
      'is optional and is the whole configuration: every field is optional, a field left out takes its default (on an ' +
      'existing bucket too), and other fields are refused. Every setting can change; `name` (the path\'s) and ' +
      '`created_at` cannot be set (400 naming them). A change applies to writes from then on: stored values keep the ' +
      'expiry they were written with, and values over a lowered `max_value_bytes` stay readable. With ' +
      `\`If-None-Match: *\` the PUT only creates: an existing bucket is 409 and unchanged. ${SCOPE}`,
    parameters: [
      { name: 'if-none-match', in: 'header', description: '`*`: create only; 409 `already_exists` if the bucket exists.', schema: { type: 'string', const: '*' } },
    ],
    requestBody: { required: false, content: { 'application/json': configSchema } },
    responses: {
      '200': dataBody('The bucket with its new configuration', bucketSchema),
      '201': dataBody('The new bucket', bucketSchema),
      '400': errorBody('validation_error: bad bucket name, unknown field, `name` or `created_at` in the body, a field out of range (e.g. `max_value_bytes` above the ceiling), or `If-None-Match` other than `*`.'),
      '409': errorBody('already_exists: `If-None-Match: *` was sent and the account already has a bucket of this name.'),
      '415': errorBody('unsupported_media_type: a body must be `application/json`.'),
    },
  },

  getKVBucket: {
    description: `The bucket's configuration. ${SCOPE}`,
    responses: { '200': dataBody('The bucket', bucketSchema), '400': badBucket, '404': missingBucket },
  },

  deleteKVBucket: {
    description: `Deletes the bucket and all its values. The bucket is gone at once; its stored data is reclaimed in the background. ${SCOPE}`,
    responses: { '204': { description: 'Deleted' }, '400': badBucket, '404': missingBucket, '503': sweepRefused },
  },

  purgeKVBucket: {
    description:
      'Removes all data in the bucket and keeps its configuration. The purge is one small atomic write whatever the ' +
      'bucket holds: afterwards every earlier key reads 404 and listings are empty, while keys written after the ' +
      'response are kept. The removed data is reclaimed in the background. Concurrent purges both succeed. ' + SCOPE,
    responses: {
      '200': {
        description: 'Purged',
        content: { 'application/json': PURGED },
      },
      '400': badBucket,
      '404': missingBucket,
      '503': sweepRefused,
    },
  },

  listKVKeys: {
    description: `Keys of the bucket in key order (UTF-8 byte order), leaving out expired values; a page may hold fewer keys than \`limit\` while \`next_cursor\` is set. ${SCOPE}`,
    parameters: [
      { name: 'prefix', in: 'query', description: 'Only keys starting with this text.', schema: { type: 'string' } },
      ...pageParameters('Keys', { max: MAX_LIST_LIMIT, default: DEFAULT_LIST_LIMIT }),
    ],
    responses: {
      '200': pageBody('A page of keys', 'keys', { type: 'string' }),
      '400': errorBody('validation_error: bad bucket name, prefix, `limit` or cursor.'),
      '404': missingBucket,
    },
  },

  ...keyRouteDocs({ putKVValue: {
    parameters: [keyParameter, valueTtlParameter],
    description:
      'Writes the request body as the value, stored as bytes with the request\'s `Content-Type` (default ' +
      '`application/octet-stream`). The revision counts up with each write of the key, from 1. The value expires ' +
      '`ttl_seconds` (the query parameter) after this write, or else the bucket\'s `ttl_seconds` after it, or never; ' +
      `each write sets it afresh. ${KEY_RULES} ${SCOPE}`,
    requestBody: { required: false, content: { '*/*': { type: 'string', contentMediaType: 'application/octet-stream' } } },
    responses: {
      '200': dataBody('Stored', named('Key', {
        type: 'object',
        description: 'A key as written: its revision counts up with each write of it.',
        required: ['key', 'revision'],
        properties: { key: { type: 'string' }, revision: { type: 'integer', minimum: 1 } },
      })),
      '400': errorBody(`validation_error: the bucket name, the key or \`ttl_seconds\` is not valid. ${KEY_RULES}`),
      '404': missingBucket,
      '413': errorBody('payload_too_large: the value is larger than the bucket\'s `max_value_bytes`.'),
    },
  },

  getKVValue: {
    parameters: [keyParameter],
    description: `The value's bytes with the content type it was stored with. ${KEY_RULES} ${SCOPE}`,
    responses: {
      '200': { description: 'The value', content: { '*/*': { type: 'string', contentMediaType: 'application/octet-stream' } } },
      '400': badKey,
      '404': missingKey,
    },
  },

  deleteKVValue: {
    parameters: [keyParameter],
    description: `Deletes one value. ${KEY_RULES} ${SCOPE}`,
    responses: { '204': { description: 'Deleted' }, '400': badKey, '404': missingKey },
  } }),
};
