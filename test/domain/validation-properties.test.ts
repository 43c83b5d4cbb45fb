import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_KEY_BYTES } from '../../functions/domain/kv/limits.js';
import { contentTypeOf, isValidKey, parseBucketConfig, validateBucketName, validateKey, validatePrefix } from '../../functions/domain/kv/validation.js';
import { AppError } from '../../functions/shared/errors.js';
import { jsonNestingDepth, MAX_JSON_DEPTH, parseJson } from '../../functions/shared/json.js';
import { call, useLocalStack } from '../support/local-stack.js';

/** What `fn` did: its result, or the error it threw. */
function outcome<T>(fn: () => T): { ok: true; value: T } | { ok: false; error: unknown } {
  try {
    return { ok: true, value: fn() };
  } catch (error) {
    return { ok: false, error };
  }
}

const expectValidationError = (error: unknown) => {
  expect(error).toBeInstanceOf(AppError);
  expect((error as AppError).code).toBe('validation_error');
};

/**
 * Strings where validators slip: any UTF-16 code unit (lone surrogates included), full code
 * points, the characters that matter to paths and keys, and long runs around the byte limits.
 */
const anyCodeUnit = fc.integer({ min: 0, max: 0xffff }).map((unit) => String.fromCharCode(unit));
const pathish = fc.constantFrom('/', '.', '..', '%', '%2F', '\u0000', '\u0085', '\ud800', '\udfff', '😀', 'é', '#', '?', ' ', 'a');
const hostileString = fc.oneof(
  fc.string({ unit: anyCodeUnit, maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: pathish, maxLength: 20 }),
  fc.tuple(fc.integer({ min: 1000, max: 1100 }), fc.constantFrom('k', 'é', '😀')).map(([n, c]) => c.repeat(Math.ceil(n / Buffer.byteLength(c)))),
);

/** Nesting depth of a parsed JSON value: 0 for a scalar, 1 + the deepest child for an array or object. */
function referenceDepth(value: unknown): number {
  if (value === null || typeof value !== 'object') return 0;
  const children = Array.isArray(value) ? value : Object.values(value);
  return 1 + Math.max(0, ...children.map(referenceDepth));
}

describe('KV validation properties', () => {
  it('validateBucketName returns its input or throws validation_error, for any string', () => {
    fc.assert(fc.property(hostileString, (name) => {
      const result = outcome(() => validateBucketName(name));
      if (result.ok) expect(result.value).toBe(name);
      else expectValidationError(result.error);
    }), { numRuns: 500 });
  });

  it('validateKey returns its input or throws validation_error; accepted keys are 1–1024 UTF-8 bytes of clean text with no dot segments', () => {
    fc.assert(fc.property(hostileString, (key) => {
      const result = outcome(() => validateKey(key));
      expect(result.ok).toBe(isValidKey(key));
      if (!result.ok) return expectValidationError(result.error);
      expect(result.value).toBe(key);
      expect(Buffer.byteLength(key)).toBeGreaterThanOrEqual(1);
      expect(Buffer.byteLength(key)).toBeLessThanOrEqual(MAX_KEY_BYTES);
      // Well-formed: UTF-8 encoding round-trips, so the stored key is the key that was sent.
      expect(Buffer.from(key, 'utf8').toString('utf8')).toBe(key);
      expect(key.split('/').some((segment) => segment === '.' || segment === '..')).toBe(false);
    }), { numRuns: 1000 });
  });

  it('validatePrefix and contentTypeOf only ever throw validation_error', () => {
    fc.assert(fc.property(fc.option(hostileString, { nil: undefined }), (text) => {
      for (const fn of [() => validatePrefix(text), () => contentTypeOf(text)]) {
        const result = outcome(fn);
        if (!result.ok) expectValidationError(result.error);
      }
    }), { numRuns: 500 });
  });

  it('parseBucketConfig only ever throws validation_error, for any JSON value or object', () => {
    const config = fc.oneof(
      fc.jsonValue(),
      fc.record({ description: fc.oneof(hostileString, fc.jsonValue()), ttl_seconds: fc.jsonValue(), max_value_bytes: fc.jsonValue() }, { requiredKeys: [] }),
      fc.dictionary(fc.constantFrom('description', 'ttl_seconds', 'max_value_bytes', '__proto__', 'constructor'), fc.jsonValue()),
    );
    fc.assert(fc.property(config, (body) => {
      const result = outcome(() => parseBucketConfig(body));
      if (!result.ok) expectValidationError(result.error);
    }), { numRuns: 500 });
  });
});

describe('JSON body properties', () => {
  it('jsonNestingDepth equals the depth of the parsed value, however the text is spaced', () => {
    fc.assert(fc.property(fc.jsonValue(), fc.constantFrom(undefined, 0, 1, 2, '\t'), (value, space) => {
      expect(jsonNestingDepth(JSON.stringify(value, null, space))).toBe(referenceDepth(value));
    }), { numRuns: 500 });
  });

  it('jsonNestingDepth agrees with the reference on fc.json() texts, whose strings hold brackets, quotes and backslashes', () => {
    const bracketStrings = fc.string({ unit: fc.constantFrom('[', ']', '{', '}', '"', '\\', 'a'), maxLength: 12 });
    const text = fc.oneof(fc.json(), fc.array(bracketStrings).map((strings) => JSON.stringify({ strings, nested: [[strings]] })));
    fc.assert(fc.property(text, (json) => {
      expect(jsonNestingDepth(json)).toBe(referenceDepth(JSON.parse(json)));
    }), { numRuns: 500 });
  });

  it('parseJson gives back what JSON.parse gives for any JSON text within the depth limit', () => {
    fc.assert(fc.property(fc.json(), (json) => {
      expect(parseJson(Buffer.from(json, 'utf8'))).toEqual(JSON.parse(json));
    }), { numRuns: 300 });
  });

  it('parseJson refuses nesting past MAX_JSON_DEPTH, and only that, with validation_error', () => {
    fc.assert(fc.property(fc.integer({ min: MAX_JSON_DEPTH - 5, max: MAX_JSON_DEPTH + 5 }), fc.boolean(), (depth, objects) => {
      const text = objects ? '{"a":'.repeat(depth) + 'null' + '}'.repeat(depth) : '['.repeat(depth) + ']'.repeat(depth);
      const result = outcome(() => parseJson(Buffer.from(text)));
      if (depth <= MAX_JSON_DEPTH) expect(result.ok).toBe(true);
      else expectValidationError(!result.ok && result.error);
    }));
  });

  it('parseJson throws nothing but validation_error for arbitrary strings and bytes', () => {
    const input = fc.oneof(
      fc.string({ unit: anyCodeUnit, maxLength: 64 }).map((text) => Buffer.from(text, 'utf8')),
      fc.uint8Array({ maxLength: 64 }),
      fc.json().map((json) => Buffer.from(json.slice(0, Math.max(0, json.length - 1)))), // truncated
      fc.string({ unit: fc.constantFrom('[', ']', '{', '}', '"', '\\', ':', ',', '1'), maxLength: 400 }).map((text) => Buffer.from(text)),
    );
    fc.assert(fc.property(input, (bytes) => {
      const result = outcome(() => parseJson(bytes));
      if (!result.ok) expectValidationError(result.error);
      else expect(jsonNestingDepth(Buffer.from(bytes).toString('utf8'))).toBeLessThanOrEqual(MAX_JSON_DEPTH);
    }), { numRuns: 1000 });
  });

  it('jsonNestingDepth never throws and is never negative, on any text', () => {
    fc.assert(fc.property(fc.string({ unit: anyCodeUnit, maxLength: 200 }), (text) => {
      expect(jsonNestingDepth(text)).toBeGreaterThanOrEqual(0);
    }), { numRuns: 500 });
  });
});

describe('KV keys over HTTP', () => {
  const stack = useLocalStack();

  /** Valid keys, biased towards the characters URL handling gets wrong. */
  const validKey = fc.oneof(
    fc.string({ unit: fc.oneof(fc.constantFrom('/', '.', '%', '?', '#', '+', ' ', '&', '=', ';', '\\', '~', "'"), fc.string({ unit: 'binary', minLength: 1, maxLength: 1 })), minLength: 1, maxLength: 30 }),
    fc.string({ unit: 'binary', minLength: 1, maxLength: 30 }),
  ).filter(isValidKey);

  /**
   * The documented encoding: percent-encoded twice (API Gateway decodes the path twice), each
   * segment or the whole key, whose slashes then go as %252F and must mean the same key.
   */
  const twice = (text: string) => encodeURIComponent(encodeURIComponent(text));
  const keyPath = (key: string, slashes: 'literal' | 'encoded') =>
    slashes === 'literal' ? key.split('/').map(twice).join('/') : twice(key);

  it('a valid key written through its encoded URL reads back, lists and deletes as the same key', async () => {
    const token = await stack.token('validation-properties');
    expect((await call(stack, 'PUT', '/storage/kv/props', { token })).status).toBe(201);
    await fc.assert(fc.asyncProperty(validKey, fc.constantFrom('literal', 'encoded') as fc.Arbitrary<'literal' | 'encoded'>, async (key, slashes) => {
      const value = `value of ${key}`;
      const path = `/storage/kv/props/keys/${keyPath(key, slashes)}`;
      const put = await call(stack, 'PUT', path, { token, rawBody: value, headers: { 'content-type': 'text/plain; charset=utf-8' } });
      expect(put.status, put.text).toBe(200);
      expect(put.json.data.key).toBe(key);

      const read = await call(stack, 'GET', `/storage/kv/props/keys/${keyPath(key, slashes === 'literal' ? 'encoded' : 'literal')}`, { token });
      expect(read.status).toBe(200);
      expect(read.text).toBe(value);

      const listed = await call(stack, 'GET', `/storage/kv/props/keys?prefix=${encodeURIComponent(key)}&limit=1000`, { token });
      expect(listed.json.data.keys).toContain(key);

      expect((await call(stack, 'DELETE', path, { token })).status).toBe(204);
    }), { numRuns: 30 });
  });
});
