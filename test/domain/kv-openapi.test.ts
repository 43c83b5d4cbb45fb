import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT, MAX_VALUE_BYTES } from '../../functions/domain/kv/limits.js';
import { parseBucketConfig } from '../../functions/domain/kv/validation.js';
import { ROUTES } from '../../functions/manifest.js';
import { anyJsonValue, bmpText, documentAccepts, inlineRefs, validatorAccepts, nearValid, openApiDocument as document, overTheWire } from '../support/openapi.js';

const operation = (method: string, path: string) => document.paths[path.replace('{key+}', '{key}')][method.toLowerCase()];
const kvRoutes = ROUTES.filter((route) => route.fn === 'kv');

describe('KV operations in /openapi.json', () => {
  it.each(kvRoutes.map((r) => [r.operationId, r.method, r.path]))('%s documents its success, 400, 401, 404 (but creation) and 500', (id, method, path) => {
    const statuses = Object.keys(operation(method, path).responses);
    expect(statuses.some((s) => s.startsWith('2'))).toBe(true);
    // Creating a bucket and listing buckets name no existing bucket, so neither can be 404.
    expect(statuses).toEqual(expect.arrayContaining(id === 'createKVBucket' || id === 'listKVBuckets' ? ['400', '401', '500'] : ['400', '401', '404', '500']));
  });

  it('the purge answers 200 with a top-level message, and 400, 401, 404, 500 in the error shape (a 4xx with its message)', () => {
    const { responses } = operation('DELETE', '/storage/kv/{bucket}/purge');
    expect(inlineRefs(responses['200'].content['application/json'].schema).properties).toEqual({ message: { type: 'string', description: 'Confirmation text' } });
    for (const status of ['400', '401', '404']) {
      expect(responses[status].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/ClientError' });
    }
    expect(responses['500'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Error' });
  });

  it('bucket creation documents 409 already_exists and refuses unknown configuration fields', () => {
    const create = operation('PUT', '/storage/kv/{bucket}');
    expect(create.responses['409']).toBeDefined();
    expect(inlineRefs(create.requestBody.content['application/json'].schema).additionalProperties).toBe(false);
  });

  it('writing a value documents 413 payload_too_large', () =>
    expect(operation('PUT', '/storage/kv/{bucket}/keys/{key+}').responses['413']).toBeDefined());

  it('listing documents the limit the API takes: 1 to MAX_LIST_LIMIT, DEFAULT_LIST_LIMIT when absent', () => {
    const limit = operation('GET', '/storage/kv/{bucket}/keys').parameters.find((p: { name: string }) => p.name === 'limit');
    expect(limit.schema).toMatchObject({ minimum: 1, maximum: MAX_LIST_LIMIT, default: DEFAULT_LIST_LIMIT });
  });

  it('a bucket configuration the document calls valid is accepted, and one it calls invalid is refused', () => {
    const documented = documentAccepts('put', '/storage/kv/{bucket}');
    const accepted = validatorAccepts(parseBucketConfig);
    const positive = (max: number) => fc.oneof(fc.integer({ min: 1, max }), fc.constantFrom(1, max));
    // Descriptions stay well under the byte limit the document states only in words.
    const configurations = nearValid(
      {
        description: fc.oneof(fc.constant(null), bmpText({ maxLength: 100 })),
        ttl_seconds: fc.oneof(fc.constant(null), positive(Number.MAX_SAFE_INTEGER)),
        max_value_bytes: fc.oneof(fc.constant(null), positive(MAX_VALUE_BYTES)),
      },
      {
        required: [],
        edge: {
          description: anyJsonValue,
          ttl_seconds: fc.oneof(fc.constantFrom(0, -1, 1.5, 2 ** 53, 1e300), anyJsonValue),
          max_value_bytes: fc.oneof(fc.constantFrom(0, MAX_VALUE_BYTES + 1, 1.5, 2 ** 53), anyJsonValue),
        },
      },
    );
    fc.assert(
      fc.property(configurations, (candidate) => {
        const body = overTheWire(candidate);
        expect(accepted(body), JSON.stringify(body)).toBe(documented(body));
      }),
      { numRuns: 1000 },
    );
  });
});
