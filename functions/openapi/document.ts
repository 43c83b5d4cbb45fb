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
import { errorBody, namedSchemas, type OperationDoc, type Schema } from './types.js';
import { ERROR_STATUS } from '../shared/errors.js';
// The release this code is: the document's version is the package's, so an app can tell which
// CHANGELOG.md entry it is talking to. esbuild inlines the JSON (this chunk loads with the first `/openapi.json`).
import packageJson from '../../package.json' with { type: 'json' };

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

/** Where an operation is documented: the path clients call, which is the route's unless the route must be wider. */
export const documentedPath = (route: RouteSpec): string => openApiPath(route.documentedPath ?? route.path);

function operation(route: RouteSpec) {
  const doc = OPERATION_DOCS[route.operationId];
  const security = { none: [], bearer: [{ bearerAuth: [] }], api_key: [{ apiKeyAuth: [] }], gateway: [{ bearerAuth: [] }, { apiKeyAuth: [] }] }[route.auth];
  const responses: Record<string, unknown> = {};
  for (const [status, response] of Object.entries(doc?.responses ?? { '200': { description: 'Success' } })) {
    responses[status] = { description: response.description, headers: response.headers && Object.fromEntries(Object.entries(response.headers).map(([n, s]) => [n, { schema: s }])), content: response.content && withSchemas(response.content) };
  }
  if (route.auth !== 'none') responses['401'] ??= { description: 'unauthorized', content: withSchemas(errorBody('').content) };
  if (route.scope) responses['403'] ??= { description: `forbidden: the credential lacks the \`${route.scope}\` scope`, content: withSchemas(errorBody('').content) };
  responses['500'] ??= { description: 'internal_error', content: withSchemas(errorBody('').content) };
  return {
    operationId: route.operationId,
    summary: route.summary,
    description: doc?.description,
    deprecated: doc?.deprecated,
    tags: [route.tag],
    security,
    // The scope an API key needs (a user's token has every scope but `admin`, and `admin` in the administrators' group).
    ...(route.scope && { 'x-required-scope': route.scope }),
    parameters: [...pathParameters(route, doc), ...(doc?.parameters ?? []).filter((p) => p.in !== 'path')],
    requestBody: doc?.requestBody && { required: doc.requestBody.required ?? true, content: withSchemas(doc.requestBody.content) },
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
        // Every code an answer's `error` can be, with its status. Not yet `Error.error`'s type: api-smart-diff
        // (test/upgrades/api-compatibility.test.ts) reads a first enum on an answer's field as a breaking change of every operation.
        ErrorCode: {
          type: 'string',
          enum: Object.keys(ERROR_STATUS),
          description: Object.entries(ERROR_STATUS).map(([code, status]) => `\`${code}\` ${status}`).join(', '),
        },
        Error: {
          type: 'object',
          required: ['error'],
          properties: {
            error: { type: 'string', description: 'What went wrong: one of `ErrorCode`. Each operation lists, by status, the codes it can answer.' },
            message: { type: 'string', description: 'With some `validation_error`s (a trigger\'s `signature`): which field is wrong, and why.' },
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
