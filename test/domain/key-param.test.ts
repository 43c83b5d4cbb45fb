import { describe, expect, it } from 'vitest';
import { AppError } from '../../functions/shared/errors.js';
import { keyParam, type HttpEvent } from '../../functions/shared/http.js';

/** What API Gateway hands over: `rawPath` decoded twice, `rawQueryString` as sent. */
const event = (routeKey: string, rawPath: string, rawQueryString: string, pathParameters: Record<string, string> = { bucket: 'b' }) =>
  ({ routeKey, rawPath, rawQueryString, pathParameters }) as unknown as HttpEvent;
const QUERY_FORM = 'PUT /storage/kv/{bucket}/value';
const PATH_FORM = 'PUT /storage/kv/{bucket}/keys/{key+}';
const refusal = (run: () => unknown) => {
  try {
    run();
  } catch (error) {
    return error instanceof AppError ? { code: error.code, message: error.publicMessage } : error;
  }
  return undefined;
};

describe('keyParam(event, queryForm) on a ?key= route', () => {
  it.each([
    ['key=report%3Fdraft', 'report?draft'],
    ['key=a%2Fb%3Fc', 'a/b?c'],
    ['key=100%25%2541', '100%%41'],
    ['key=a+b%2Bc', 'a b+c'],
    ['key=tom%26jerry%3D1%23x', 'tom&jerry=1#x'],
    ['key=Zo%C3%AB%2F%F0%9F%98%80', 'Zoë/😀'],
  ])('reads %s as %j', (query, key) =>
    expect(keyParam(event(QUERY_FORM, '/storage/kv/b/value', query), '/storage/kv/{bucket}/value')).toBe(key));

  it.each([
    ['', 'is required'],
    ['key=a&key=b', 'once'],
    ['key=tom&jerry', '%26'],
    ['key=a&', '%26'],
    ['prefix=a', '%26'],
    ['key=100%', '%25'],
    ['key=%C0%AF', 'UTF-8'],
  ])('refuses %j with a 400 that names the form', (query, says) => {
    const refused = refusal(() => keyParam(event(QUERY_FORM, '/storage/kv/b/value', query), '/storage/kv/{bucket}/value'));
    expect(refused).toMatchObject({ code: 'validation_error', message: expect.stringContaining(says) });
    expect((refused as { message: string }).message).toContain('Send PUT /storage/kv/{bucket}/value?key=<the key, percent-encoded once>.');
  });

  it('reads queryStringParameters when an event has no rawQueryString', () =>
    expect(keyParam({ routeKey: QUERY_FORM, queryStringParameters: { key: 'a?b' } } as unknown as HttpEvent, '/storage/kv/{bucket}/value')).toBe('a?b'));
});

describe('keyParam(event, queryForm) on a {key+} route', () => {
  it('reads the key from rawPath when there is no query string', () =>
    expect(keyParam(event(PATH_FORM, '/storage/kv/b/keys/a/b?c', ''), '/storage/kv/{bucket}/value')).toBe('a/b?c'));

  it('refuses a query string, which means the URL was cut at a ?, naming the ?key= form', () =>
    expect(refusal(() => keyParam(event(PATH_FORM, '/storage/kv/b/keys/report', 'draft'), '/storage/kv/{bucket}/value'))).toEqual({
      code: 'validation_error',
      message: 'A key in the path takes no query string, so this URL was cut at a ? that may belong to the key. Send the key as a query parameter instead: PUT /storage/kv/{bucket}/value?key=<the key, percent-encoded once>.',
    }));

  it('takes a suffix off the greedy parameter, and a path without it is not found', () => {
    const url = (rawPath: string) => event('POST /storage/objects/{store}/objects/{key+}', rawPath, '', { store: 's' });
    expect(keyParam(url('/storage/objects/s/objects/a/b/url'), '/storage/objects/{store}/object/url', '/url')).toBe('a/b');
    expect(refusal(() => keyParam(url('/storage/objects/s/objects/a/b'), '/storage/objects/{store}/object/url', '/url'))).toMatchObject({ code: 'not_found' });
  });
});
