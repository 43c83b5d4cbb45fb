import { ROUTES, TAGS, type RouteSpec } from '../manifest.js';
import { accountsDocs } from './accounts.js';
import { apiKeysDocs } from './api-keys.js';
import { kvDocs } from './kv.js';
import { objectsDocs } from './objects.js';
import { searchDocs } from './search.js';
import { streamsDocs } from './streams.js';
import { systemDocs } from './system.js';
import { triggerStatsDocs } from './trigger-stats.js';
import { triggersDocs } from './triggers.js';
import { errorBody, named, namedSchemas, type OperationDoc, type Schema } from './types.js';
import { ERROR_STATUS } from '../shared/errors.js';
// The release this code is: the document's version is the package's, so an app can tell which
// CHANGELOG.md entry it is talking to. esbuild inlines the JSON (this chunk loads with the first `/openapi.json`).
import packageJson from '../../package.json' with { type: 'json' };
import { SUMMARIES } from './summaries.js';

const OPERATION_DOCS: Record<string, OperationDoc> = { ...systemDocs, ...apiKeysDocs, ...kvDocs, ...objectsDocs, ...streamsDocs, ...searchDocs, ...accountsDocs, ...triggersDocs, ...triggerStatsDocs };

/** The route's path parameters, each with what its operation's docs say about it. */
const pathParameters = (route: RouteSpec, doc: OperationDoc | undefined) =>
  [...route.path.matchAll(/\{([A-Za-z_]+)\+?\}/g)].map((m) => ({
    name: m[1], in: 'path', required: true, schema: { type: 'string' },
    ...doc?.parameters?.find((p) => p.in === 'path' && p.name === m[1]),
  }));

/** `{key+}` is API Gateway's greedy parameter; OpenAPI only knows `{key}`. */
const openApiPath = (path: string) => path.replace(/\{([A-Za-z_]+)\+\}/g, '{$1}');

const withSchemas = (content: Record<string, Schema>) =>
  Object.fromEntries(Object.entries(content).map(([mediaType, schema]) => [mediaType, { schema }]));

/** A key route's query form (`…ByKey`) runs its path form's action, and shares its bodies' names. */
const actionOf = (route: RouteSpec) => route.action ?? route.operationId;
const pascal = (operationId: string) => operationId[0]!.toUpperCase() + operationId.slice(1);

/**
 * A body's schema, named in `components/schemas` unless it already is one or is raw bytes or text
 * (`type: string`: nothing to name), so a generated client has a type to import for every request
 * and answer body. `{"data": X}` with X named is `XResponse`, shared by every operation answering
 * it; any other is named after its operation (`ListKVBucketsResponse`, `PublishMessagesRequest`).
 */
function namedBody(schema: Schema, name: string): Schema {
  if (schema.$ref !== undefined || schema.type === 'string') return schema;
  const data = (schema.properties as Record<string, Schema> | undefined)?.data;
  const onlyData = Object.keys(schema.properties ?? {}).length === 1 && typeof data?.$ref === 'string';
  return named(onlyData ? `${(data.$ref as string).split('/').pop()}Response` : name, schema);
}

/** Each body of `content` named (see `namedBody`); a second JSON-like media type gets its own name. */
const namedContent = (content: Record<string, Schema>, name: string) =>
  Object.fromEntries(Object.entries(content).map(([mediaType, schema], i) => [mediaType, namedBody(schema, i === 0 ? name : `${name}${MEDIA_SUFFIX[mediaType] ?? i}`)]));

const MEDIA_SUFFIX: Record<string, string> = { 'application/x-www-form-urlencoded': 'Form', 'multipart/form-data': 'Multipart' };

/** Declared on exactly the operations the route table flags `idempotent` (functions/domain/idempotency.ts). */
const IDEMPOTENCY_KEY_PARAMETER = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description: 'Send a new unique key (a UUID) with each request you may retry: a retry with the same key, credential and body within 24 hours gets the first 2xx answer again (with `Idempotent-Replayed: true`) instead of doing it twice.',
  schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x20-\\x7e]+$' },
};

/** Where an operation is documented: the path clients call, which is the route's unless the route must be wider. */
export const documentedPath = (route: RouteSpec): string => openApiPath(route.documentedPath ?? route.path);

function operation(route: RouteSpec) {
  const doc = OPERATION_DOCS[route.operationId];
  const security = { none: [], bearer: [{ bearerAuth: [] }], api_key: [{ apiKeyAuth: [] }], gateway: [{ bearerAuth: [] }, { apiKeyAuth: [] }] }[route.auth];
  const responses: Record<string, unknown> = {};
  const successes = Object.keys(doc?.responses ?? {}).filter((status) => status.startsWith('2'));
  for (const [status, response] of Object.entries(doc?.responses ?? { '200': { description: 'Success' } })) {
    // Success bodies are named; an operation's second, different success body carries its status in its name.
    const name = `${pascal(actionOf(route))}Response${successes.indexOf(status) > 0 ? status : ''}`;
    const content = response.content && (status.startsWith('2') ? namedContent(response.content, name) : response.content);
    responses[status] = { description: response.description, headers: response.headers && Object.fromEntries(Object.entries(response.headers).map(([n, s]) => [n, { schema: s }])), content: content && withSchemas(content) };
  }
  if (route.idempotent) {
    // `Idempotent-Replayed: true` comes only on a replay, so it is described with the parameter, not declared
    // as a success header (a declared one is sent on every success: the contract test holds the document to that).
    const conflict = responses['409'] as { description: string } | undefined;
    const codes = '`idempotency_key_reused`: the key came with another request in the last 24 hours; `idempotency_key_in_flight` (with `Retry-After`): a request with the key is still running.';
    responses['409'] = conflict ? { ...conflict, description: `${conflict.description} ${codes}` } : { description: codes, content: withSchemas(errorBody('').content) };
  }
  if (route.auth !== 'none') responses['401'] ??= { description: 'unauthorized', content: withSchemas(errorBody('').content) };
  if (route.scope) responses['403'] ??= { description: `forbidden: the credential lacks the \`${route.scope}\` scope`, content: withSchemas(errorBody('').content) };
  responses['500'] ??= { description: 'internal_error', content: withSchemas(errorBody('').content) };
  // A 4xx always says what to fix: its body is the `Error` shape with `message` required.
  for (const [status, response] of Object.entries(responses) as [string, { content?: Record<string, { schema: { $ref?: string } }> }][]) {
    for (const media of Object.values(status.startsWith('4') ? response.content ?? {} : {})) {
      if (media.schema.$ref === '#/components/schemas/Error') media.schema = { $ref: '#/components/schemas/ClientError' };
    }
  }
  return {
    operationId: route.operationId,
    summary: SUMMARIES[route.operationId],
    description: doc?.description,
    deprecated: doc?.deprecated,
    tags: [route.tag],
    security,
    // The scope an API key needs (a user's token has every scope but `admin`, and `admin` in the administrators' group).
    ...(route.scope && { 'x-required-scope': route.scope }),
    parameters: [...pathParameters(route, doc), ...(doc?.parameters ?? []).filter((p) => p.in !== 'path'), ...(route.idempotent ? [IDEMPOTENCY_KEY_PARAMETER] : [])],
    requestBody: doc?.requestBody && { required: doc.requestBody.required ?? true, content: withSchemas(namedContent(doc.requestBody.content, `${pascal(actionOf(route))}Request`)) },
    responses,
  };
}

/**
 * The OpenAPI 3.1 description served at `/openapi.json`, generated from the route table, with
 * `serverUrl` as its one server (`/` by default: wherever the document was fetched from).
 */
export function buildOpenApiDocument(serverUrl = '/') {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of ROUTES) {
    // The receiver is routed with ANY so it can answer 405 itself; POST is its only operation.
    const method = route.method === 'ANY' ? 'post' : route.method.toLowerCase();
    (paths[documentedPath(route)] ??= {})[method] = operation(route);
  }
  return JSON.parse(JSON.stringify({
    openapi: '3.1.0',
    info: { title: 'Flowgate gateway and flow webhook triggers', version: packageJson.version },
    servers: [{ url: serverUrl }],
    tags: Object.values(TAGS).map((name) => ({ name })),
    paths,
    components: {
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
        apiKeyAuth: { type: 'apiKey', in: 'header', name: 'X-Api-Key' },
      },
      schemas: {
        ...namedSchemas(),
        // Every code an answer's `error` can be, with its status: the one error type's list (functions/shared/errors.ts).
        ErrorCode: {
          type: 'string',
          enum: Object.keys(ERROR_STATUS),
          description: Object.entries(ERROR_STATUS).map(([code, status]) => `\`${code}\` ${status}`).join(', '),
        },
        Error: {
          type: 'object',
          required: ['error'],
          properties: {
            error: { $ref: '#/components/schemas/ErrorCode', description: 'What went wrong. Each operation lists, by status, the codes it can answer. New codes may be added in a minor release: treat an unknown one by its status.' },
            message: { type: 'string', description: 'Always on a 4xx (see `ClientError`): what to fix. A 5xx has none (`unavailable` may say when to retry).' },
          },
        },
        // Every 4xx: `message` says what is wrong with the request and what to send instead; where saying
        // more would tell a guesser which check failed (a credential, a signature, a code, another
        // account's resource), it is one fixed line per code.
        ClientError: {
          type: 'object',
          required: ['error', 'message'],
          properties: {
            error: { $ref: '#/components/schemas/ErrorCode', description: 'What went wrong. Each operation lists, by status, the codes it can answer. New codes may be added in a minor release: treat an unknown one by its status.' },
            message: { type: 'string', minLength: 1, description: 'What is wrong with the request and what to send instead, for people; match on `error`, not on these words.' },
          },
        },
      },
    },
  }));
}

/** Stands in for the server URL in the prebuilt JSON; `.invalid` never resolves (RFC 2606). */
const SERVER_URL_MARKER = 'https://server-url.invalid';

/**
 * The document as JSON text for any server URL. The document is built and serialised once; each
 * call only splices the URL in, so serving it per request costs a string concatenation.
 */
export function openApiJsonRenderer(): (serverUrl: string) => string {
  const parts = JSON.stringify(buildOpenApiDocument(SERVER_URL_MARKER)).split(JSON.stringify(SERVER_URL_MARKER));
  if (parts.length !== 2) throw new Error(`the OpenAPI document must hold ${SERVER_URL_MARKER} exactly once, as its server URL`);
  const [head, tail] = parts as [string, string];
  return (serverUrl) => head + JSON.stringify(serverUrl) + tail;
}
