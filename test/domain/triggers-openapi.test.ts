import { describe, expect, it } from 'vitest';
import { ROUTES } from '../../functions/manifest.js';
import { buildOpenApiDocument } from '../../functions/openapi/document.js';

const document = buildOpenApiDocument();
const operation = (method: string, path: string) => document.paths[path][method];
const receiver = operation('post', '/webhooks/{webhook_id}');

describe('webhook triggers in the OpenAPI document', () => {
  it.each([
    ['post', '/triggers', ['201', '400', '401', '415', '500']],
    ['get', '/triggers', ['200', '400', '401', '500']],
    ['get', '/triggers/{id}', ['200', '401', '404', '500']],
    ['patch', '/triggers/{id}', ['200', '400', '401', '404', '409', '415', '500']],
    ['delete', '/triggers/{id}', ['204', '401', '404', '409', '500']],
    ['post', '/triggers/{id}/regenerate-url', ['200', '401', '404', '409', '500']],
    ['post', '/triggers/{id}/regenerate-api-key', ['200', '400', '401', '404', '409', '500']],
    ['get', '/triggers/{id}/executions', ['200', '400', '401', '404', '500']],
    ['post', '/webhooks/{webhook_id}', ['200', '400', '401', '404', '405', '413', '415', '500', '502', '503', '504']],
  ])('%s %s documents every status it answers', (method, path, statuses) => {
    expect(Object.keys(operation(method, path).responses).sort()).toEqual(statuses);
  });

  it('every trigger route has a description', () => {
    for (const route of ROUTES.filter((r) => r.fn === 'triggers' || r.fn === 'webhook')) {
      const method = route.method === 'ANY' ? 'post' : route.method.toLowerCase();
      expect(operation(method, route.path).description, route.operationId).toEqual(expect.any(String));
    }
  });

  it('the receiver takes JSON, urlencoded and multipart bodies', () => {
    expect(Object.keys(receiver.requestBody.content).sort()).toEqual(['application/json', 'application/x-www-form-urlencoded', 'multipart/form-data']);
  });

  it('the receiver takes the API key as the api_key query parameter or the X-Api-Key header, and no gateway credentials', () => {
    expect(receiver.parameters).toEqual(expect.arrayContaining([
      expect.objectContaining({ name: 'api_key', in: 'query' }),
      expect.objectContaining({ name: 'X-Api-Key', in: 'header' }),
    ]));
    expect(receiver.security).toEqual([]);
  });

  it('the receiver\'s 200 covers accepted, ignored, duplicate, challenge and flow output', () => {
    const variants = receiver.responses['200'].content['application/json'].schema.oneOf.map((v: { title: string }) => v.title);
    expect(variants).toEqual(['accepted', 'ignored', 'duplicate', 'challenge', 'flow output']);
  });

  it('the receiver\'s 405 documents Allow: POST', () => {
    expect(receiver.responses['405'].headers.allow.schema.const).toBe('POST');
  });

  it('says x-api-key is withheld from the flow, and how stale the receiver\'s cache may be', () => {
    expect(receiver.description).toContain('`X-Api-Key` withheld');
    expect(receiver.description).toContain('TRIGGER_CACHE_TTL_MS');
  });

  it('says regenerate-api-key with protection off is 400', () => {
    const regenerate = operation('post', '/triggers/{id}/regenerate-api-key');
    expect(regenerate.responses['400'].description).toContain('protection is off');
  });

  it('a trigger never has a secret or key hash field; api_key appears only where a key is generated', () => {
    const read = operation('get', '/triggers/{id}').responses['200'].content['application/json'].schema.properties.data;
    expect(JSON.stringify(read)).not.toMatch(/"(secret|secret_sealed|api_key_hash|api_key)"/);
    const created = operation('post', '/triggers').responses['201'].content['application/json'].schema.properties.data;
    expect(created.properties.api_key).toBeDefined();
  });

  it('executions list their documented shape, with limit and cursor', () => {
    const list = operation('get', '/triggers/{id}/executions');
    const item = list.responses['200'].content['application/json'].schema.properties.data.properties.executions.items;
    expect(item.required).toEqual(['event_id', 'received_at', 'status', 'attempts']);
    expect(item.properties.status.enum).toEqual(['queued', 'running', 'succeeded', 'failed', 'ignored', 'duplicate']);
    expect(list.parameters.map((p: { name: string }) => p.name)).toEqual(['id', 'limit', 'cursor']);
  });

  it('create requires only flow and refuses unknown fields', () => {
    const schema = operation('post', '/triggers').requestBody.content['application/json'].schema;
    expect(schema.required).toEqual(['flow']);
    expect(schema.additionalProperties).toBe(false);
  });
});
