import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { generateRecoveryCodes, generateTotpSecret, isTotpCodeFormat } from '../../functions/domain/totp/index.js';
import { bmpText, documentedBodySchema, inlinedOpenApiDocument as document, schemaAccepts } from '../support/openapi.js';
import { totpCodeAt } from '../support/totp.js';

const operation = (path: string) => document.paths[path].post;

describe('accounts in the OpenAPI document', () => {
  it.each([
    ['/accounts/totp-registration', ['200', '401', '403', '409', '429', '500']],
    ['/accounts/confirm-totp-registration', ['200', '400', '401', '403', '409', '415', '429', '500']],
    ['/accounts/recovery-codes/verify', ['200', '400', '401', '415', '429', '500', '503']],
    ['/accounts/totp/verify', ['200', '400', '401', '415', '429', '500', '503']],
    ['/accounts/recovery-codes/regenerate', ['200', '401', '403', '404', '429', '500']],
  ])('POST %s documents every status it answers', (path, statuses) => {
    expect(Object.keys(operation(path).responses).sort()).toEqual(statuses);
  });

  it.each(['/accounts/confirm-totp-registration', '/accounts/recovery-codes/verify'])(
    'POST %s documents Retry-After on 429',
    (path) => expect(operation(path).responses['429'].headers['retry-after']).toBeDefined(),
  );

  it.each(['/accounts/totp/verify', '/accounts/recovery-codes/verify'])(
    'POST %s documents the 503 of a proof that could not be signed, with Retry-After and the code unspent',
    (path) => {
      expect(operation(path).responses['503'].headers['retry-after']).toBeDefined();
      expect(operation(path).responses['503'].description).toContain('not spent');
    },
  );

  it('requires code and secret as strings to confirm', () => {
    const schema = operation('/accounts/confirm-totp-registration').requestBody.content['application/json'].schema;
    expect(schema.required).toEqual(['code', 'secret']);
    expect(schema.properties.code.type).toBe('string');
    expect(schema.properties.secret.type).toBe('string');
  });

  it('says the factor is keyed by the token\'s sub and takes no API key', () => {
    for (const path of ['/accounts/totp-registration', '/accounts/confirm-totp-registration', '/accounts/recovery-codes/verify', '/accounts/totp/verify', '/accounts/recovery-codes/regenerate']) {
      expect(operation(path).description).toContain('`sub`');
      expect(operation(path).security).toEqual([{ bearerAuth: [] }]);
    }
  });

  it('the documented code pattern allows exactly the codes the API takes, which are the codes an authenticator shows', () => {
    const documented = schemaAccepts(documentedBodySchema('post', '/accounts/confirm-totp-registration').properties!.code!);
    const codeLike = fc.oneof(fc.string({ unit: fc.constantFrom(...'0123456789 \u0663a'), maxLength: 8 }), bmpText({ maxLength: 8 }));
    fc.assert(
      fc.property(codeLike, (code) => {
        expect(documented(code), code).toBe(isTotpCodeFormat(code));
      }),
    );
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 20, maxLength: 20 }), fc.integer({ min: 0, max: 2 ** 42 }), (bytes, epochMs) => {
        expect(documented(totpCodeAt(generateTotpSecret(() => bytes), epochMs))).toBe(true);
      }),
    );
  });

  it('the secret a registration starts with, and the recovery codes it ends with, are what the document describes', () => {
    const data = (path: string) => operation(path).responses['200'].content['application/json'].schema.properties.data;
    const secret = schemaAccepts(data('/accounts/totp-registration').properties.secret);
    const recoveryCodes = schemaAccepts(data('/accounts/confirm-totp-registration').properties.recovery_codes);
    for (let i = 0; i < 50; i++) {
      expect(secret(generateTotpSecret(randomBytes))).toBe(true);
      expect(recoveryCodes(generateRecoveryCodes(randomBytes))).toBe(true);
    }
  });
});
