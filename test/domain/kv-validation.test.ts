import { describe, expect, it } from 'vitest';
import { DEFAULT_CONTENT_TYPE, DYNAMODB_ITEM_LIMIT_BYTES, MAX_VALUE_BYTES, VALUE_ITEM_OVERHEAD_BYTES } from '../../functions/domain/kv/limits.js';
import { expiresAtFor, isExpired } from '../../functions/domain/kv/service.js';
import { contentTypeOf, parseBucketConfig, validateBucketName, validateKey, validatePrefix } from '../../functions/domain/kv/validation.js';

const refused = (fn: () => unknown) => {
  try {
    fn();
  } catch (error) {
    return (error as { code?: string }).code;
  }
  return 'accepted';
};

describe('validateBucketName', () => {
  it.each(['a', 'A-z_09', 'x'.repeat(64)])('accepts %j', (name) => expect(validateBucketName(name)).toBe(name));
  it.each(['', 'x'.repeat(65), 'a.b', 'a b', 'a/b', 'é', 'a#b', 'a%2Fb'])('refuses %j with validation_error', (name) =>
    expect(refused(() => validateBucketName(name))).toBe('validation_error'));
});

describe('validateKey', () => {
  it('accepts 1024 UTF-8 bytes and refuses 1025', () => {
    expect(validateKey('k'.repeat(1024))).toHaveLength(1024);
    expect(refused(() => validateKey('k'.repeat(1025)))).toBe('validation_error');
  });

  it('counts bytes, not characters: 256 four-byte characters fit, 257 do not', () => {
    expect(refused(() => validateKey('😀'.repeat(256)))).toBe('accepted');
    expect(refused(() => validateKey('😀'.repeat(257)))).toBe('validation_error');
  });

  it('refuses the empty key', () => expect(refused(() => validateKey(''))).toBe('validation_error'));

  it.each([['NUL', '\u0000'], ['tab', 'a\tb'], ['newline', 'a\n'], ['DEL', 'a\u007f'], ['C1 NEL', 'a\u0085'], ['C1 APC', '\u009f']])(
    'refuses a control character (%s)', (_name, key) => expect(refused(() => validateKey(key))).toBe('validation_error'));

  it('refuses a lone surrogate, which has no UTF-8 form', () => expect(refused(() => validateKey('a\ud800b'))).toBe('validation_error'));

  it.each(['.', '..', 'a/./b', 'a/../b', '../purge', 'a/..', './a'])('refuses the dot segment in %j', (key) =>
    expect(refused(() => validateKey(key))).toBe('validation_error'));

  it.each(['a/b/c', '.hidden', 'a..b', '.../x', 'a/.b/..c', ' spaced ', 'ünïcødé/日本', '/leading', 'trailing/'])('accepts %j', (key) =>
    expect(validateKey(key)).toBe(key));
});

describe('validatePrefix', () => {
  it('treats an absent or empty prefix as none', () => {
    expect(validatePrefix(undefined)).toBeUndefined();
    expect(validatePrefix('')).toBeUndefined();
  });
  it('accepts partial segments such as "a/." (a prefix is not a path)', () => expect(validatePrefix('a/.')).toBe('a/.'));
  it('refuses control characters and more than 1024 bytes', () => {
    expect(refused(() => validatePrefix('a\u0001'))).toBe('validation_error');
    expect(refused(() => validatePrefix('p'.repeat(1025)))).toBe('validation_error');
  });
});

describe('contentTypeOf', () => {
  it('defaults to application/octet-stream', () => {
    expect(contentTypeOf(undefined)).toBe(DEFAULT_CONTENT_TYPE);
    expect(contentTypeOf('')).toBe('application/octet-stream');
  });
  it('keeps parameters', () => expect(contentTypeOf('text/plain; charset=utf-8')).toBe('text/plain; charset=utf-8'));
  it('refuses more than 255 characters and non-ASCII', () => {
    expect(refused(() => contentTypeOf('a/' + 'b'.repeat(254)))).toBe('validation_error');
    expect(refused(() => contentTypeOf('text/plain; x=é'))).toBe('validation_error');
  });
});

describe('parseBucketConfig', () => {
  it('defaults: no description, no expiry, the largest value one item holds', () =>
    expect(parseBucketConfig({})).toEqual({ description: null, ttlSeconds: null, maxValueBytes: MAX_VALUE_BYTES }));

  it('reads every field', () =>
    expect(parseBucketConfig({ description: 'cache', ttl_seconds: 60, max_value_bytes: 1024 })).toEqual({ description: 'cache', ttlSeconds: 60, maxValueBytes: 1024 }));

  it('treats null as not set', () =>
    expect(parseBucketConfig({ description: null, ttl_seconds: null, max_value_bytes: null })).toEqual(parseBucketConfig({})));

  it('accepts max_value_bytes at the ceiling and refuses one byte more', () => {
    expect(parseBucketConfig({ max_value_bytes: MAX_VALUE_BYTES }).maxValueBytes).toBe(MAX_VALUE_BYTES);
    expect(refused(() => parseBucketConfig({ max_value_bytes: MAX_VALUE_BYTES + 1 }))).toBe('validation_error');
  });

  it.each([
    ['an unknown field', { colour: 'red' }],
    ['a misspelt field', { ttl: 60 }],
    ['ttl_seconds zero', { ttl_seconds: 0 }],
    ['ttl_seconds negative', { ttl_seconds: -5 }],
    ['ttl_seconds fractional', { ttl_seconds: 1.5 }],
    ['ttl_seconds as text', { ttl_seconds: '60' }],
    ['max_value_bytes zero', { max_value_bytes: 0 }],
    ['max_value_bytes fractional', { max_value_bytes: 10.5 }],
    ['description not text', { description: 5 }],
    ['description over 1024 bytes', { description: 'é'.repeat(513) }],
    ['an array body', []],
  ])('refuses %s', (_name, body) => expect(refused(() => parseBucketConfig(body))).toBe('validation_error'));
});

describe('value limits', () => {
  it('MAX_VALUE_BYTES is what one 400 KB item holds after the worst-case key and attributes, in whole KiB', () => {
    expect(MAX_VALUE_BYTES + VALUE_ITEM_OVERHEAD_BYTES).toBeLessThanOrEqual(DYNAMODB_ITEM_LIMIT_BYTES);
    expect(MAX_VALUE_BYTES + VALUE_ITEM_OVERHEAD_BYTES + 1024).toBeGreaterThan(DYNAMODB_ITEM_LIMIT_BYTES);
    expect(MAX_VALUE_BYTES % 1024).toBe(0);
    expect(MAX_VALUE_BYTES).toBe(406_528);
  });
});

describe('ttl_seconds', () => {
  const written = Date.UTC(2030, 0, 1, 0, 0, 10, 400);

  it('a value lives at least ttl_seconds', () => {
    const expiresAt = expiresAtFor(written, 60);
    expect(isExpired({ expiresAt }, written + 60_000 - 1)).toBe(false);
    expect(isExpired({ expiresAt }, written + 61_000)).toBe(true);
  });

  it('a value without expiry never expires', () => expect(isExpired({}, Number.MAX_SAFE_INTEGER)).toBe(false));
});
