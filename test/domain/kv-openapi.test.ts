import { describe, expect, it } from 'vitest';
import { ROUTES } from '../../functions/manifest.js';
import { buildOpenApiDocument } from '../../functions/openapi/document.js';

const document = buildOpenApiDocument();
const operation = (method: string, path: string) => document.paths[path.replace('{key+}', '{key}')][method.toLowerCase()];
const kvRoutes = ROUTES.filter((route) => route.fn === 'kv');

describe('KV operations in /openapi.json', () => {
  it.each(kvRoutes.map((r) => [r.operationId, r.method, r.path]))('%s documents its success, 400, 401, 404 (but creation) and 500', (id, method, path) => {
    const statuses = Object.keys(operation(method, path).responses);
    expect(statuses.some((s) => s.startsWith('2'))).toBe(true);
    expect(statuses).toEqual(expect.arrayContaining(id === 'createKVBucket' ? ['400', '401', '500'] : ['400', '401', '404', '500']));
  });

  it('the purge answers 200 with a top-level message, and 400, 401, 404, 500 in the error shape', () => {
    const { responses } = operation('DELETE', '/storage/kv/{bucket}/purge');
    expect(responses['200'].content['application/json'].schema.properties).toEqual({ message: { type: 'string', description: 'Confirmation text' } });
    for (const status of ['400', '401', '404', '500']) {
      expect(responses[status].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Error' });
    }
  });

  it('bucket creation documents 409 already_exists and refuses unknown configuration fields', () => {
    const create = operation('PUT', '/storage/kv/{bucket}');
    expect(create.responses['409']).toBeDefined();
    expect(create.requestBody.content['application/json'].schema.additionalProperties).toBe(false);
  });

  it('writing a value documents 413 payload_too_large', () =>
    expect(operation('PUT', '/storage/kv/{bucket}/keys/{key+}').responses['413']).toBeDefined());

  it('listing documents limit 1 to 1000, default 100', () => {
    const limit = operation('GET', '/storage/kv/{bucket}/keys').parameters.find((p: { name: string }) => p.name === 'limit');
    expect(limit.schema).toMatchObject({ minimum: 1, maximum: 1000, default: 100 });
  });
});
