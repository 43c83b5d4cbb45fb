import { readFileSync } from 'node:fs';
import { Validator } from '@seriousme/openapi-schema-validator';
import { describe, expect, it } from 'vitest';
import { ROUTES, TAGS } from '../../functions/manifest.js';
import { documentedPath } from '../../functions/openapi/document.js';
import { SUMMARIES } from '../../functions/openapi/summaries.js';
import { ERROR_STATUS } from '../../functions/shared/errors.js';
import { jsonSchemaValidator, openApiDocument as document, type JsonSchema } from '../support/openapi.js';

const documented = Object.entries(document.paths as Record<string, Record<string, { operationId: string }>>).flatMap(([path, methods]) =>
  Object.entries(methods).map(([method, operation]) => ({ path, method, operationId: operation.operationId })),
);

describe('the OpenAPI document and the route table', () => {
  it('every route has a one-line summary, and every summary a route (kept out of the route table, which every bundle loads)', () => {
    expect(ROUTES.filter((route) => !SUMMARIES[route.operationId]?.trim()).map((route) => route.operationId)).toEqual([]);
    expect(Object.keys(SUMMARIES).filter((id) => !ROUTES.some((route) => route.operationId === id))).toEqual([]);
    for (const route of ROUTES) expect(document.paths[documentedPath(route)]?.[route.method === 'ANY' ? 'post' : route.method.toLowerCase()]?.summary, route.operationId).toBe(SUMMARIES[route.operationId]);
  });

  it('documents every route of the route table', () => {
    for (const route of ROUTES) {
      const method = route.method === 'ANY' ? 'post' : route.method.toLowerCase();
      expect(document.paths[documentedPath(route)]?.[method]?.operationId, `${route.method} ${route.path}`).toBe(route.operationId);
    }
  });

  it('documents nothing the route table does not serve', () => {
    const served = new Set(ROUTES.map((r) => r.operationId));
    expect(documented.filter((d) => !served.has(d.operationId))).toEqual([]);
    expect(documented).toHaveLength(ROUTES.length);
  });

  it('gives every operation a unique id, a tag it declares, and responses beyond a bare 200', () => {
    const tags = new Set(document.tags.map((t: { name: string }) => t.name));
    expect(new Set(documented.map((d) => d.operationId)).size).toBe(documented.length);
    for (const { path, method } of documented) {
      const operation = document.paths[path][method];
      expect(tags.has(operation.tags[0]), operation.operationId).toBe(true);
      expect(Object.keys(operation.responses).length, operation.operationId).toBeGreaterThan(1);
    }
  });

  it('is OpenAPI 3.1, versioned as the package (the release CHANGELOG.md names), with the required tags and both security schemes', () => {
    expect(document.openapi).toBe('3.1.0');
    expect(document.info.version).toBe(JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version);
    expect(document.tags.map((t: { name: string }) => t.name)).toEqual(expect.arrayContaining([TAGS.kv, TAGS.mfa, TAGS.triggers]));
    expect(document.components.securitySchemes).toEqual({
      bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
      apiKeyAuth: { type: 'apiKey', in: 'header', name: 'X-Api-Key' },
    });
  });

  it('declares the credentials each route accepts as the route table says', () => {
    for (const route of ROUTES) {
      const method = route.method === 'ANY' ? 'post' : route.method.toLowerCase();
      const security = document.paths[documentedPath(route)][method].security;
      const expected = { none: [], bearer: [{ bearerAuth: [] }], api_key: [{ apiKeyAuth: [] }], gateway: [{ bearerAuth: [] }, { apiKeyAuth: [] }] }[route.auth];
      expect(security, route.operationId).toEqual(expected);
    }
  });

  it('documents the presigned GET where it is served, POST …/objects/{key}/url, not at the object\'s own path', () => {
    expect(document.paths['/storage/objects/{store}/objects/{key}/url']?.post?.operationId).toBe('createObjectUrl');
    expect(document.paths['/storage/objects/{store}/objects/{key}'].post).toBeUndefined();
  });

  it('names the shapes a client imports, each used by $ref, and lists every error code', () => {
    const names = ['Trigger', 'TriggerInput', 'TriggerPatch', 'Delivery', 'DeliveryDetail', 'Bucket', 'BucketInput', 'Key', 'ObjectStore', 'ObjectStoreInput', 'ObjectInfo', 'ObjectUrl', 'Upload', 'UploadInput',
      'Stream', 'StreamInput', 'Message', 'DeliveredMessage', 'Consumer', 'ConsumerInput', 'Factor', 'Factors', 'RecoveryCodes', 'MfaEvent', 'TotpRegistration', 'TotpProof', 'ApiKey', 'NewApiKey', 'ApiKeyEvent', 'Error', 'ErrorCode'];
    expect(Object.keys(document.components.schemas)).toEqual(expect.arrayContaining(names));
    const text = JSON.stringify(document);
    for (const name of names.filter((n) => n !== 'ErrorCode')) expect(text, name).toContain(`"$ref":"#/components/schemas/${name}"`);
    expect(document.components.schemas.ErrorCode.enum).toEqual(expect.arrayContaining(['validation_error', 'mfa_required', 'precondition_failed', 'range_not_satisfiable', 'too_many_attempts']));
  });

  it("names every operation's request body and success body: a $ref to components/schemas, unless raw bytes or text", () => {
    type Media = Record<string, { schema: JsonSchema }>;
    const inline: string[] = [];
    for (const [path, methods] of Object.entries(document.paths as Record<string, Record<string, { requestBody?: { content: Media }; responses: Record<string, { content?: Media }> }>>)) {
      for (const [method, operation] of Object.entries(methods)) {
        const bodies: [string, Media | undefined][] = [['request', operation.requestBody?.content], ...Object.entries(operation.responses).filter(([status]) => status.startsWith('2')).map(([status, r]): [string, Media | undefined] => [status, r.content])];
        for (const [which, content] of bodies) {
          for (const [mediaType, { schema }] of Object.entries(content ?? {})) {
            if (schema.$ref === undefined && schema.type !== 'string') inline.push(`${method.toUpperCase()} ${path} ${which} ${mediaType}`);
          }
        }
      }
    }
    expect(inline).toEqual([]);
  });

  it('declares Idempotency-Key and its 409s on exactly the operations the route table flags idempotent', () => {
    for (const route of ROUTES) {
      const method = route.method === 'ANY' ? 'post' : route.method.toLowerCase();
      const operation = document.paths[documentedPath(route)][method];
      const declares = operation.parameters.some((p: { name: string; in: string }) => p.in === 'header' && p.name === 'Idempotency-Key');
      expect(declares, route.operationId).toBe(route.idempotent === true);
      if (!route.idempotent) continue;
      expect(route.method, route.operationId).toBe('POST');
      expect(operation.responses['409'].description, route.operationId).toContain('idempotency_key_reused');
      expect(operation.parameters.find((p: { name: string }) => p.name === 'Idempotency-Key').description).toContain('Idempotent-Replayed: true');
    }
    expect(ROUTES.filter((r) => r.idempotent).map((r) => r.operationId).sort()).toEqual(['completeObjectUpload', 'createApiKey', 'createObjectUpload', 'createTrigger', 'publishMessages',
      'regenerateTriggerApiKey', 'regenerateTriggerUrl', 'replayTriggerExecution', 'replayTriggerExecutions', 'rotateTriggerSigningSecret']);
  });

  it("Error.error is the ErrorCode enum, which lists exactly the one error type's codes", () => {
    expect(document.components.schemas.Error.properties.error.$ref).toBe('#/components/schemas/ErrorCode');
    expect(document.components.schemas.ErrorCode.enum).toEqual(Object.keys(ERROR_STATUS));
  });

  it('every $ref points at a schema that exists', () => {
    const refs = [...JSON.stringify(document).matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)].map((m) => m[1]!);
    for (const ref of refs) expect(document.components.schemas[ref], ref).toBeDefined();
  });

  it('is a valid OpenAPI 3.1 document, as the specification\'s own JSON Schema checks it', async () => {
    const result = await new Validator().validate(structuredClone(document));
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('every schema in it is valid JSON Schema 2020-12, uses only known keywords, and resolves its references', () => {
    const ajv = jsonSchemaValidator();
    ajv.addKeyword({ keyword: 'components' }); // lets `#/components/...` resolve inside the wrapper below
    const schemas = schemasOf(document);
    expect(schemas.length).toBeGreaterThan(ROUTES.length);
    for (const [where, schema] of schemas) {
      expect(() => ajv.compile({ components: document.components, $defs: { it: schema }, $ref: '#/$defs/it' }), where).not.toThrow();
    }
  });
});

/** Every schema object of the document, with where it is. */
function schemasOf(openApi: typeof document): [string, JsonSchema][] {
  type Media = Record<string, { schema: JsonSchema }>;
  type Operation = {
    parameters?: { name: string; schema: JsonSchema }[];
    requestBody?: { content: Media };
    responses: Record<string, { content?: Media; headers?: Record<string, { schema: JsonSchema }> }>;
  };
  const found: [string, JsonSchema][] = Object.entries(openApi.components.schemas as Record<string, JsonSchema>).map(([name, schema]) => [`components ${name}`, schema]);
  for (const [path, methods] of Object.entries(openApi.paths as Record<string, Record<string, Operation>>)) {
    for (const [method, operation] of Object.entries(methods)) {
      const at = `${method} ${path}`;
      for (const parameter of operation.parameters ?? []) found.push([`${at} parameter ${parameter.name}`, parameter.schema]);
      for (const [type, media] of Object.entries(operation.requestBody?.content ?? {})) found.push([`${at} body ${type}`, media.schema]);
      for (const [status, response] of Object.entries(operation.responses)) {
        for (const [type, media] of Object.entries(response.content ?? {})) found.push([`${at} ${status} ${type}`, media.schema]);
        for (const [name, header] of Object.entries(response.headers ?? {})) found.push([`${at} ${status} header ${name}`, header.schema]);
      }
    }
  }
  return found;
}
