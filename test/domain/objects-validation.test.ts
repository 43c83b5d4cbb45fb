import { describe, expect, it } from 'vitest';
import { absoluteRange } from '../../functions/domain/objects/service.js';
import { isAllowedContentType, metadataFrom, parseStoreConfig, validateDelimiter, validateObjectKey } from '../../functions/domain/objects/validation.js';
import { MAX_OBJECT_SIZE_BYTES } from '../../functions/domain/objects/limits.js';

describe('absoluteRange(range, size)', () => {
  it.each([
    ['bytes=2-5', 'bytes=2-5'],
    ['bytes=7-', 'bytes=7-9'],
    ['bytes=7-100', 'bytes=7-9'],
    ['bytes=-3', 'bytes=7-9'],
    ['bytes=-30', 'bytes=0-9'],
  ])('resolves %s of 10 bytes to %s', (range, expected) => expect(absoluteRange(range, 10)).toBe(expected));

  it.each(['bytes=5-2', 'bytes=-', 'items=1-2', 'bytes=1-2,4-5'])('ignores %s (the whole object is served)', (range) => expect(absoluteRange(range, 10)).toBeUndefined());

  it.each(['bytes=10-', 'bytes=50-60', 'bytes=-0'])('refuses %s of 10 bytes as range_not_satisfiable', (range) =>
    expect(() => absoluteRange(range, 10)).toThrow(expect.objectContaining({ code: 'range_not_satisfiable' })));
});

describe('isAllowedContentType(type, allowed)', () => {
  it('takes exact types and type/* ranges, ignoring parameters and case', () => {
    expect(isAllowedContentType('Image/PNG', ['image/png'])).toBe(true);
    expect(isAllowedContentType('text/plain; charset=utf-8', ['text/*'])).toBe(true);
    expect(isAllowedContentType('textual/plain', ['text/*'])).toBe(false);
    expect(isAllowedContentType('application/json', ['image/*', 'text/*'])).toBe(false);
    expect(isAllowedContentType('anything/at-all', null)).toBe(true);
  });
});

describe('parseStoreConfig(body)', () => {
  it('defaults every field and keeps the given ones', () => {
    expect(parseStoreConfig({})).toEqual({ description: null, maxBytes: null, maxObjectSize: MAX_OBJECT_SIZE_BYTES, ttlSeconds: null, allowedContentTypes: null });
    expect(parseStoreConfig({ max_bytes: 5, allowed_content_types: ['image/png', 'image/png'] })).toMatchObject({ maxBytes: 5, allowedContentTypes: ['image/png'] });
  });

  it.each([{ max_bytes: 1.5 }, { max_object_size: 0 }, { ttl_seconds: '60' }, { allowed_content_types: 'image/png' }, { allowed_content_types: ['image/png; q=1'] }, { other: true }, []])(
    'refuses %j with a validation_error that says why', (body) => {
      expect(() => parseStoreConfig(body)).toThrow(expect.objectContaining({ code: 'validation_error', publicMessage: expect.any(String) }));
    });
});

describe('keys, delimiters and metadata', () => {
  it('keys are at most 950 UTF-8 bytes', () => {
    expect(validateObjectKey('é'.repeat(475))).toBe('é'.repeat(475));
    expect(() => validateObjectKey(`${'é'.repeat(475)}x`)).toThrow(expect.objectContaining({ code: 'validation_error' }));
  });

  it('a delimiter is one printable character', () => {
    expect(validateDelimiter('/')).toBe('/');
    expect(validateDelimiter('')).toBeUndefined();
    expect(() => validateDelimiter('//')).toThrow();
    expect(() => validateDelimiter('\n')).toThrow();
  });

  it('metadata comes from x-meta-* headers only, with printable ASCII values and 2 KB in all', () => {
    expect(metadataFrom({ 'x-meta-owner': 'ada', 'content-type': 'text/plain', 'x-metaphor': 'no' })).toEqual({ owner: 'ada' });
    expect(() => metadataFrom({ 'x-meta-owner': 'é' })).toThrow();
    expect(() => metadataFrom({ 'x-meta-a': 'x'.repeat(2048) })).toThrow();
  });
});
