import {
  DEFAULT_LIST_LIMIT,
  DOWNLOAD_URL_EXPIRY_SECONDS,
  MAX_ALLOWED_CONTENT_TYPES,
  MAX_DESCRIPTION_BYTES,
  MAX_INLINE_OBJECT_BYTES,
  MAX_LIST_LIMIT,
  MAX_METADATA_BYTES,
  MAX_OBJECT_KEY_BYTES,
  MAX_OBJECT_SIZE_BYTES,
  MAX_URL_EXPIRY_SECONDS,
  MULTIPART_PART_BYTES,
  STORE_NAME_PATTERN,
  UPLOAD_LIFETIME_SECONDS,
  UPLOAD_URL_EXPIRY_SECONDS,
} from '../domain/objects/limits.js';
import { keyParameter, keyRouteDocs, PURGED } from './kv.js';
import { dataBody, errorBody, named, pageParameters, type OperationDocs, type Schema } from './types.js';

const SCOPE = "Stores belong to the caller's account; a store of another account answers 404 like a missing one.";
const KEY_RULES =
  `Keys are 1 to ${MAX_OBJECT_KEY_BYTES} UTF-8 bytes after URL decoding (S3's 1,024 less the store id and generation ` +
  'in front of it), without control characters or `.`/`..` path segments; `/` is allowed.';
const objectKeyParameter = { ...keyParameter, description: `${keyParameter.description} ${KEY_RULES}` };

const storeSchema: Schema = named('ObjectStore', {
  type: 'object',
  required: ['name', 'description', 'max_bytes', 'max_object_size', 'ttl_seconds', 'allowed_content_types', 'created_at', 'objects', 'bytes'],
  properties: {
    name: { type: 'string', pattern: STORE_NAME_PATTERN.source },
    description: { type: ['string', 'null'] },
    max_bytes: { type: ['integer', 'null'], minimum: 1, description: 'Most the objects may hold together; null: no limit.' },
    max_object_size: { type: 'integer', minimum: 1, maximum: MAX_OBJECT_SIZE_BYTES },
    ttl_seconds: { type: ['integer', 'null'], minimum: 1, description: 'Lifetime of objects; null: objects do not expire.' },
    allowed_content_types: { type: ['array', 'null'], items: { type: 'string' }, description: 'Media types objects may have; null: any.' },
    created_at: { type: 'string', format: 'date-time' },
    objects: { type: 'integer', minimum: 0, description: 'Objects the store holds (expired ones count until deleted).' },
    bytes: { type: 'integer', minimum: 0, description: 'Bytes the store holds, what `max_bytes` is checked against.' },
  },
});

const configSchema: Schema = named('ObjectStoreInput', {
  type: 'object',
  additionalProperties: false,
  properties: {
    description: { type: ['string', 'null'], description: `At most ${MAX_DESCRIPTION_BYTES} UTF-8 bytes.` },
    max_bytes: { type: ['integer', 'null'], minimum: 1, description: 'A write that would take the store past this is 413; nothing is stored.' },
    max_object_size: { type: ['integer', 'null'], minimum: 1, maximum: MAX_OBJECT_SIZE_BYTES, description: `Largest object; default and ceiling ${MAX_OBJECT_SIZE_BYTES} bytes (S3's single PUT).` },
    ttl_seconds: { type: ['integer', 'null'], minimum: 1, description: 'An object expires this long after its write; from then on it reads, lists and deletes as missing.' },
    allowed_content_types: {
      type: ['array', 'null'], minItems: 1, maxItems: MAX_ALLOWED_CONTENT_TYPES, items: { type: 'string', examples: ['image/png', 'image/*'] },
      description: 'Lower-case media types, `type/subtype` or `type/*`; a write of another type is 400.',
    },
  },
});

const objectSchema: Schema = named('ObjectInfo', {
  type: 'object',
  required: ['key', 'size', 'etag', 'content_type', 'last_modified', 'metadata'],
  properties: {
    key: { type: 'string' },
    size: { type: 'integer', minimum: 0 },
    etag: { type: 'string', description: "S3's entity tag, quoted; what `If-Match` compares with." },
    content_type: { type: 'string' },
    last_modified: { type: 'string', format: 'date-time' },
    metadata: { type: 'object', additionalProperties: { type: 'string' }, description: 'The `x-meta-*` headers of the write, by name.' },
  },
});

const badStore = errorBody(`validation_error: the store name does not match \`${STORE_NAME_PATTERN.source}\`.`);
const badKey = errorBody(`validation_error: the store name or the key is not valid. ${KEY_RULES}`);
const missingStore = errorBody("not_found: no such store in the caller's account.");
const missingKey = errorBody("not_found: no such store in the caller's account, or no such key (an expired object is missing).");
const objectHeaders: Record<string, Schema> = {
  etag: { type: 'string' },
  'last-modified': { type: 'string' },
  'x-meta-*': { type: 'string', description: 'Each metadata entry of the write.' },
};

export const objectsDocs: OperationDocs = {
  listObjectStores: {
    description: "The caller's object stores in name order, with their configuration and usage.",
    parameters: pageParameters('Stores', { max: MAX_LIST_LIMIT, default: DEFAULT_LIST_LIMIT }),
    responses: { '200': dataBody('A page of stores', { type: 'object', required: ['stores', 'next_cursor'], properties: { stores: { type: 'array', items: storeSchema }, next_cursor: { type: ['string', 'null'] } } }), '400': errorBody('validation_error: bad `limit` or cursor.') },
  },
  createObjectStore: {
    description: `Creates an object store. The body is optional; every field is optional and other fields are refused. ${SCOPE}`,
    requestBody: { required: false, content: { 'application/json': configSchema } },
    responses: {
      '201': dataBody('The new store', storeSchema),
      '400': errorBody('validation_error: bad store name, unknown field, or a field out of range.'),
      '409': errorBody('already_exists: the account already has a store of this name.'),
      '415': errorBody('unsupported_media_type: a body must be `application/json`.'),
    },
  },
  getObjectStore: {
    description: `The store's configuration, and what it holds (\`objects\`, \`bytes\`). ${SCOPE}`,
    responses: { '200': dataBody('The store', storeSchema), '400': badStore, '404': missingStore },
  },
  deleteObjectStore: {
    description:
      'Deletes the store and every object in it: one small write whatever it holds, after which the store and its objects ' +
      'read 404 and the name is free. The bytes are removed from S3 in the background (see `purgeObjectStore`); open ' +
      `uploads die with it. ${SCOPE}`,
    responses: { '204': { description: 'Deleted' }, '400': badStore, '404': missingStore, '503': errorBody('unavailable: the store kept being purged meanwhile; retry.') },
  },
  purgeObjectStore: {
    description:
      'Removes every object and keeps the configuration. The purge is one small atomic write whatever the store holds: the ' +
      "store moves to a new generation with its usage at zero, so every earlier object reads 404 and listings are empty, while " +
      'objects written after the response are kept. The old generation (bytes in S3 and catalog entries) is reclaimed in ' +
      'the background by the sweeper the KV buckets use; its passes repeat until upload URLs made before the purge have ' +
      `expired (${UPLOAD_URL_EXPIRY_SECONDS} s), so bytes they bring later are reclaimed too. Open uploads of the old generation ` +
      `can no longer be completed (404). Concurrent purges both succeed. ${SCOPE}`,
    responses: {
      '200': { description: 'Purged', content: { 'application/json': PURGED } },
      '400': badStore,
      '404': missingStore,
      '503': errorBody('unavailable: the sweep could not be scheduled; nothing was removed, retry.'),
    },
  },
  listObjects: {
    description: `Objects of the store in key order (UTF-8 byte order), expired ones left out. ${SCOPE}`,
    parameters: [
      { name: 'prefix', in: 'query', description: 'Only keys starting with this text.', schema: { type: 'string' } },
      { name: 'delimiter', in: 'query', description: 'One character (`/`): keys with it after the prefix are listed once, as their common prefix up to it, in `prefixes`.', schema: { type: 'string', maxLength: 1 } },
      ...pageParameters('Objects and prefixes', { max: MAX_LIST_LIMIT, default: DEFAULT_LIST_LIMIT }),
    ],
    responses: {
      '200': dataBody('A page of objects', {
        type: 'object',
        required: ['objects', 'prefixes', 'next_cursor'],
        properties: {
          objects: { type: 'array', items: objectSchema },
          prefixes: { type: 'array', items: { type: 'string' } },
          next_cursor: { type: ['string', 'null'], description: 'Pass as `cursor` for the next page; `null` on the last page.' },
        },
      }),
      '400': errorBody('validation_error: bad store name, prefix, delimiter, `limit` or cursor.'),
      '404': missingStore,
    },
  },
  ...keyRouteDocs({ putObject: {
    parameters: [
      objectKeyParameter,
      { name: 'if-none-match', in: 'header', description: '`*`: write only if the key holds no object (409 otherwise).', schema: { type: 'string', const: '*' } },
      { name: 'if-match', in: 'header', description: 'An etag: write only if the key holds an object with it (412 otherwise).', schema: { type: 'string' } },
      { name: 'x-meta-*', in: 'header', description: `User metadata: names of lower-case letters, digits, \`-\`, \`_\`; printable ASCII values; ${MAX_METADATA_BYTES} bytes in all.`, schema: { type: 'string' } },
    ],
    description:
      `Writes the request body as the object, with the request's \`Content-Type\` (default \`application/octet-stream\`). ` +
      `Through the API a body is at most ${MAX_INLINE_OBJECT_BYTES} bytes: Lambda carries 6 MB per invocation and API ` +
      'Gateway hands binary bodies over in base64, 4 bytes for every 3. Conditions are decided by a conditional write ' +
      `of the object's catalog entry, not by S3. ${SCOPE}`,
    requestBody: { required: false, content: { '*/*': { type: 'string', contentMediaType: 'application/octet-stream' } } },
    responses: {
      '200': { ...dataBody('Stored', objectSchema), headers: { etag: { type: 'string' } } },
      '400': errorBody(`validation_error: bad store name, key or metadata, or a content type the store does not allow. ${KEY_RULES}`),
      '404': missingStore,
      '409': errorBody('already_exists: `If-None-Match: *` and the key holds an object; conflict: the store was purged or deleted during the write.'),
      '412': errorBody('precondition_failed: `If-Match` does not name the stored etag, or the key holds no object.'),
      '413': errorBody(`payload_too_large: over the store's \`max_object_size\`, over its \`max_bytes\`, or over ${MAX_INLINE_OBJECT_BYTES} bytes.`),
      '503': errorBody('unavailable: other writes to the key kept winning; retry.'),
    },
  },
  getObject: {
    parameters: [objectKeyParameter, { name: 'range', in: 'header', description: 'One range: `bytes=first-last`, `bytes=first-` or `bytes=-suffix`; others are ignored.', schema: { type: 'string' } }],
    description:
      `The object's bytes with its content type, etag and metadata. An object over ${MAX_INLINE_OBJECT_BYTES} bytes is ` +
      `a 307 to a presigned S3 URL that works for ${DOWNLOAD_URL_EXPIRY_SECONDS} s (send \`Range\` there). ${SCOPE}`,
    responses: {
      '200': { description: 'The object', headers: objectHeaders, content: { '*/*': { type: 'string', contentMediaType: 'application/octet-stream' } } },
      '206': { description: 'The range', headers: { ...objectHeaders, 'content-range': { type: 'string' } }, content: { '*/*': { type: 'string', contentMediaType: 'application/octet-stream' } } },
      '307': { description: 'Too large to answer inline: fetch it from `Location`.', headers: { location: { type: 'string', format: 'uri' } } },
      '400': badKey,
      '404': missingKey,
      '416': errorBody('range_not_satisfiable: the range starts past the end.'),
    },
  },
  headObject: {
    parameters: [objectKeyParameter],
    description: `The headers \`GET\` answers, with \`Content-Length\`, and no body. ${SCOPE}`,
    responses: { '200': { description: 'The object exists', headers: { ...objectHeaders, 'content-length': { type: 'string' } } }, '400': badKey, '404': missingKey },
  },
  deleteObject: {
    parameters: [objectKeyParameter],
    description: `Deletes one object and gives its bytes back to the store's usage. An expired object is removed too and answers 404. ${SCOPE}`,
    responses: { '204': { description: 'Deleted' }, '400': badKey, '404': missingKey, '503': errorBody('unavailable: other writes to the key kept winning; retry.') },
  },
  createObjectUrl: {
    parameters: [{ ...objectKeyParameter, description: `${objectKeyParameter.description} The path ends in \`/url\` after the key (API Gateway's greedy parameter must end a route, so its route is \`POST …/objects/{key+}\` and the function takes the \`/url\` off).` }],
    description:
      `A presigned S3 GET of the object, for a browser or a client to fetch directly (\`Range\` works there). The URL names ` +
      `the object's own path in the bucket and nothing else: edited to another key, S3 refuses it (403). ${SCOPE}`,
    requestBody: { required: false, content: { 'application/json': { type: 'object', additionalProperties: false, properties: { expires_in: { type: 'integer', minimum: 1, maximum: MAX_URL_EXPIRY_SECONDS, default: DOWNLOAD_URL_EXPIRY_SECONDS, description: 'Seconds the URL works.' } } } } },
    responses: {
      '200': dataBody('The URL', named('ObjectUrl', { type: 'object', required: ['url', 'method', 'expires_at', 'object'], properties: { url: { type: 'string', format: 'uri' }, method: { const: 'GET' }, expires_at: { type: 'string', format: 'date-time', description: 'When the URL stops working: `expires_in` from now, or sooner when the credentials that signed it expire first.' }, object: objectSchema } })),
      '400': errorBody(`validation_error: bad store name or key, or \`expires_in\` not 1-${MAX_URL_EXPIRY_SECONDS}.`),
      '404': errorBody('not_found: no such store or key, or the path does not end in `/url`.'),
    },
  } }, KEY_RULES),
  createObjectUpload: {
    parameters: [
      { name: 'if-none-match', in: 'header', description: '`*`: the upload completes only if the key then holds no object (409 here, before a byte is sent, if it already does).', schema: { type: 'string', const: '*' } },
      { name: 'if-match', in: 'header', description: 'An etag (or `*`): the upload completes only if the key then holds an object with it (412 here if it does not already).', schema: { type: 'string' } },
    ],
    description:
      'Starts an upload straight to S3, for objects larger than the API carries. The size is declared here and counted in the ' +
      "store's usage at once, so `max_object_size` and `max_bytes` are checked before a byte is sent (413). " +
      `Up to ${MULTIPART_PART_BYTES} bytes the answer is one presigned \`url\`: PUT the bytes there with the \`headers\` given ` +
      '(`Content-Type` and `If-None-Match: *` are signed, and so is `Content-Length`: the URL takes exactly `size` bytes of that type, once; ' +
      `anything else is S3's 403 or 412). Above it, \`parts\`: PUT each part's bytes (\`part_size\` each, the last smaller, each part's size signed) to its ` +
      'URL, keep the `ETag` each answers, and complete with them. URLs work until `expires_at`: at most ' +
      `${UPLOAD_URL_EXPIRY_SECONDS} s, sooner if the credentials that signed them expire first; \`POST …/uploads/{id}/urls\` gives new ones. ` +
      `An upload neither completed nor aborted is forgotten after ${UPLOAD_LIFETIME_SECONDS} s, ` +
      'and S3 drops its parts after a day. Until it is completed the object does not exist: the bytes land at a name of the upload\'s own, never at the key\'s current bytes. ' +
      '`If-None-Match: *` and `If-Match` are given here, checked at once, and decided again when the upload completes (the catalog\'s ' +
      `compare-and-swap, as for a direct write). ${SCOPE}`,
    requestBody: {
      required: true,
      content: {
        'application/json': named('UploadInput', {
          type: 'object', required: ['key', 'size'], additionalProperties: false,
          properties: {
            key: { type: 'string', description: KEY_RULES },
            size: { type: 'integer', minimum: 0, maximum: MAX_OBJECT_SIZE_BYTES, description: 'Exactly the bytes that will be sent.' },
            content_type: { type: 'string', default: 'application/octet-stream' },
            metadata: { type: 'object', additionalProperties: { type: 'string' }, description: `As \`x-meta-*\` headers of a direct write: names of lower-case letters, digits, \`-\`, \`_\`; ${MAX_METADATA_BYTES} bytes in all.` },
          },
        }),
      },
    },
    responses: {
      '201': dataBody('Where to send the bytes', named('Upload', {
        type: 'object',
        required: ['id', 'key', 'size', 'content_type', 'metadata', 'expires_at', 'method'],
        properties: {
          id: { type: 'string', pattern: '^[0-9a-f]{32}$' },
          key: { type: 'string' }, size: { type: 'integer' }, content_type: { type: 'string' }, metadata: { type: 'object', additionalProperties: { type: 'string' } },
          expires_at: { type: 'string', format: 'date-time', description: 'When the URLs stop working.' },
          method: { const: 'PUT' },
          url: { type: 'string', format: 'uri', description: 'One PUT of the whole object (small uploads).' },
          headers: { type: 'object', additionalProperties: { type: 'string' }, description: 'Headers the PUT to `url` must carry.' },
          part_size: { type: 'integer', const: MULTIPART_PART_BYTES },
          parts: { type: 'array', items: { type: 'object', required: ['part_number', 'size', 'url'], properties: { part_number: { type: 'integer', minimum: 1 }, size: { type: 'integer' }, url: { type: 'string', format: 'uri' } } } },
        },
      })),
      '400': errorBody(`validation_error: bad store name, key, size or metadata, or a content type the store does not allow. ${KEY_RULES}`),
      '404': missingStore,
      '409': errorBody('already_exists: `If-None-Match: *` and the key holds an object; conflict: the store was purged or deleted meanwhile.'),
      '412': errorBody('precondition_failed: `If-Match` does not name the stored etag, or the key holds no object.'),
      '413': errorBody("payload_too_large: over the store's `max_object_size`, over its `max_bytes` (open uploads count), or over S3's 5 GiB."),
    },
  },
  completeObjectUpload: {
    parameters: [{ name: 'id', in: 'path', description: 'The upload id.', schema: { type: 'string' } }],
    description:
      'Stores what the upload sent: S3 assembles the parts (multipart), the function reads the size and type that landed, and the object ' +
      "is recorded only if they are the ones declared. Otherwise the bytes are removed and the reservation " +
      "is given back (413 when more arrived, 400 when fewer or another type). Nothing sent yet is 409 and leaves the upload open. A condition given when the upload was " +
      'created is decided here: refused, the upload is dropped and the key keeps its object. A key\'s earlier object is replaced; ' +
      `its bytes are given back to the store's usage. ${SCOPE}`,
    requestBody: {
      required: false,
      content: { 'application/json': { type: 'object', additionalProperties: false, properties: { parts: { type: 'array', description: 'Required for a multipart upload: every part, with the `ETag` its PUT answered.', items: { type: 'object', required: ['part_number', 'etag'], properties: { part_number: { type: 'integer', minimum: 1, maximum: 10000 }, etag: { type: 'string' } } } } } } },
    },
    responses: {
      '200': { ...dataBody('Stored', objectSchema), headers: { etag: { type: 'string' } } },
      '400': errorBody('validation_error: fewer bytes arrived than declared (removed); `parts` missing or not what was uploaded (the upload stays open).'),
      '404': errorBody('not_found: no such store, or no such open upload (completed, aborted or expired).'),
      '409': errorBody('conflict: nothing has been sent to the upload URL yet; already_exists: the upload was created with `If-None-Match: *` and the key now holds an object (the upload is dropped).'),
      '412': errorBody('precondition_failed: the upload was created with `If-Match` and the key no longer holds that etag (the upload is dropped).'),
      '413': errorBody('payload_too_large: more bytes arrived than declared (removed).'),
      '503': errorBody('unavailable: other writes to the key kept winning; retry.'),
    },
  },
  abortObjectUpload: {
    parameters: [{ name: 'id', in: 'path', description: 'The upload id.', schema: { type: 'string' } }],
    description: "Drops an open upload and gives its reserved bytes back. Parts sent are dropped, and bytes a single PUT already landed are removed; the key's object is untouched. " + SCOPE,
    responses: { '204': { description: 'Aborted' }, '400': badStore, '404': errorBody('not_found: no such store, or no such open upload.') },
  },
  refreshObjectUploadUrls: {
    parameters: [{ name: 'id', in: 'path', description: 'The upload id.', schema: { type: 'string' } }],
    description:
      'New URLs for an open upload, as its creation answered them (`url` and `headers`, or every part\'s URL), working until the new `expires_at`: ' +
      `${UPLOAD_URL_EXPIRY_SECONDS} s from now or less (the signing credentials' expiry, the upload's own lifetime). For a large upload that outlasts its first URLs: ` +
      'send the parts not sent yet to their new URLs (a part sent again replaces itself), then complete with every part. ' + SCOPE,
    requestBody: { required: false, content: { 'application/json': { type: 'object', additionalProperties: false, properties: {} } } },
    responses: {
      '200': dataBody('Where to send the bytes', { type: 'object', required: ['id', 'key', 'size', 'expires_at', 'method'], properties: { id: { type: 'string' }, key: { type: 'string' }, size: { type: 'integer' }, expires_at: { type: 'string', format: 'date-time' }, method: { const: 'PUT' }, url: { type: 'string', format: 'uri' }, headers: { type: 'object', additionalProperties: { type: 'string' } }, part_size: { type: 'integer' }, parts: { type: 'array', items: { type: 'object', required: ['part_number', 'size', 'url'], properties: { part_number: { type: 'integer' }, size: { type: 'integer' }, url: { type: 'string', format: 'uri' } } } } } }),
      '400': badStore,
      '404': errorBody('not_found: no such store, or no such open upload (completed, aborted or expired).'),
    },
  },
};
