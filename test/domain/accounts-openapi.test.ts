import { describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '../../functions/openapi/document.js';

const document = buildOpenApiDocument();
const operation = (path: string) => document.paths[path].post;

describe('accounts in the OpenAPI document', () => {
  it.each([
    ['/accounts/totp-registration', ['200', '401', '409', '500']],
    ['/accounts/confirm-totp-registration', ['200', '400', '401', '409', '415', '429', '500']],
    ['/accounts/recovery-codes/verify', ['200', '400', '401', '415', '429', '500']],
  ])('POST %s documents every status it answers', (path, statuses) => {
    expect(Object.keys(operation(path).responses).sort()).toEqual(statuses);
  });

  it.each(['/accounts/confirm-totp-registration', '/accounts/recovery-codes/verify'])(
    'POST %s documents Retry-After on 429',
    (path) => expect(operation(path).responses['429'].headers['retry-after']).toBeDefined(),
  );

  it('requires code and secret as strings to confirm', () => {
    const schema = operation('/accounts/confirm-totp-registration').requestBody.content['application/json'].schema;
    expect(schema.required).toEqual(['code', 'secret']);
    expect(schema.properties.code.type).toBe('string');
    expect(schema.properties.secret.type).toBe('string');
  });

  it('says the factor is keyed by the token\'s sub and takes no API key', () => {
    for (const path of ['/accounts/totp-registration', '/accounts/confirm-totp-registration', '/accounts/recovery-codes/verify']) {
      expect(operation(path).description).toContain('`sub`');
      expect(operation(path).security).toEqual([{ bearerAuth: [] }]);
    }
  });
});
