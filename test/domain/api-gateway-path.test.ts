import { describe, expect, it } from 'vitest';
import { greedyPathParam, type HttpEvent } from '../../functions/shared/http.js';
import { apiGatewayPath } from '../../local/api-gateway.js';

/**
 * Live captures of an API Gateway HTTP API (payload 2.0, July 2026): the path sent, and the
 * `rawPath` the function received, or a 400 from API Gateway (`undefined`).
 * https://github.com/hotsock/voker/blob/a1c00bf491e026f81917cc2edfdaca03eabc7518/vokerhttp/testdata/ingress-paths.json
 */
const CAPTURED: [sent: string, rawPath: string | undefined][] = [
  ['/capture/plain', '/capture/plain'],
  ['/capture/space%20value', '/capture/space value'],
  ['/capture/question%3Fvalue', '/capture/question'],
  ['/capture/percent%25done', undefined],
  ['/capture/hash%23value', '/capture/hash#value'],
  ['/capture/slash%2Fvalue', '/capture/slash/value'],
  ['/capture/unicode-%CE%BB-%E4%B8%96%E7%95%8C', '/capture/unicode-λ-世界'],
  ['/capture/literal%252Fvalue', '/capture/literal/value'],
  ['/capture/literal%253Fvalue', '/capture/literal?value'],
  ['/capture/literal%2525value', '/capture/literal%value'],
];

describe('apiGatewayPath(requestTarget)', () => {
  it.each(CAPTURED)('gives %j the rawPath a live HTTP API gave it: %j', (sent, rawPath) =>
    expect(apiGatewayPath(`${sent}?marker=path-probe&value=a%3Fb%25c%23d`)?.rawPath).toBe(rawPath));

  it('routes on the path decoded once: %2F separates segments, %252F does not', () => {
    expect(apiGatewayPath('/storage/kv/b/keys/a%2Fb')?.routedPath).toBe('/storage/kv/b/keys/a/b');
    expect(apiGatewayPath('/storage/kv/b%2Fkeys')?.routedPath).toBe('/storage/kv/b/keys');
    expect(apiGatewayPath('/storage/kv/b/keys/a%252Fb')?.routedPath).toBe('/storage/kv/b/keys/a%2Fb');
  });

  it('a path that is not percent-encoded UTF-8 routes nowhere and keeps its rawPath as sent', () => {
    expect(apiGatewayPath('/%ZZ')).toEqual({ routedPath: undefined, rawPath: '/%ZZ' });
    expect(apiGatewayPath('/a%C0%AFb')).toEqual({ routedPath: undefined, rawPath: '/a%C0%AFb' });
  });
});

describe('greedyPathParam(event, name)', () => {
  const event = (rawPath: string, pathParameters: Record<string, string>) =>
    ({ routeKey: 'GET /storage/kv/{bucket}/keys/{key+}', rawPath, pathParameters }) as unknown as HttpEvent;

  it('reads the key from rawPath whether pathParameters carry it decoded twice or once', () => {
    const rawPath = '/storage/kv/b/keys/100%/a?b#c d+é';
    expect(greedyPathParam(event(rawPath, { bucket: 'b', key: '100%/a?b#c d+é' }), 'key')).toBe('100%/a?b#c d+é');
    expect(greedyPathParam(event(rawPath, { bucket: 'b', key: '100%25/a%3Fb%23c%20d+%C3%A9' }), 'key')).toBe('100%/a?b#c d+é');
  });

  it('takes the whole tail after the first head, even when the key repeats the route', () =>
    expect(greedyPathParam(event('/storage/kv/b/keys/x/storage/kv/b/keys/y', { bucket: 'b', key: 'x/storage/kv/b/keys/y' }), 'key'))
      .toBe('x/storage/kv/b/keys/y'));

  it('finds the head after an API mapping prefix', () =>
    expect(greedyPathParam(event('/v1/storage/kv/b/keys/a/b', { bucket: 'b', key: 'a/b' }), 'key')).toBe('a/b'));
});
