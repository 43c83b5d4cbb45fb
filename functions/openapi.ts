import { ROUTES, TAGS, type RouteSpec } from './manifest.js';

type Schema = Record<string, unknown>;

const errorSchema: Schema = { type: 'object', required: ['error'], properties: { error: { type: 'string' } } };
const errorResponse = (description: string) => ({ description, content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } });

const COMMON_ERRORS: Record<string, ReturnType<typeof errorResponse>> = {
  '400': errorResponse('validation_error'),
  '401': errorResponse('unauthorized'),
  '404': errorResponse('not_found'),
  '500': errorResponse('internal_error'),
};

const pathParameters = (route: RouteSpec) =>
  [...route.path.matchAll(/\{([A-Za-z_]+)\+?\}/g)].map((m) => ({ name: m[1], in: 'path', required: true, schema: { type: 'string' } }));

/** `{key+}` is API Gateway's greedy parameter; OpenAPI only knows `{key}`. */
const openApiPath = (path: string) => path.replace(/\{([A-Za-z_]+)\+\}/g, '{$1}');

function operation(route: RouteSpec) {
  const security = route.auth === 'none' ? [] : route.auth === 'bearer' ? [{ bearerAuth: [] }] : [{ bearerAuth: [] }, { apiKeyAuth: [] }];
  return {
    operationId: route.operationId,
    summary: route.summary,
    tags: [route.tag],
    security,
    parameters: pathParameters(route),
    responses: { '200': { description: 'Success' }, ...COMMON_ERRORS },
  };
}

/** The OpenAPI 3.1 description served at `/openapi.json`, generated from the route table. */
export function buildOpenApiDocument() {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of ROUTES) {
    const methods = route.method === 'ANY' ? ['post'] : [route.method.toLowerCase()];
    for (const method of methods) (paths[openApiPath(route.path)] ??= {})[method] = operation(route);
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Flowgate gateway and flow webhook triggers', version: '1.0.0' },
    servers: [{ url: '{base_url}', variables: { base_url: { default: 'http://127.0.0.1:3000' } } }],
    tags: Object.values(TAGS).map((name) => ({ name })),
    paths,
    components: {
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
        apiKeyAuth: { type: 'apiKey', in: 'header', name: 'X-Api-Key' },
      },
      schemas: { Error: errorSchema },
    },
  };
}
