import { describe, expect, it } from 'vitest';
import { publicRequestUrl } from '../../functions/domain/webhooks/public-url.js';

const at = (headers: Record<string, string>, rawQueryString = '') => ({ headers, domainName: 'abc.execute-api.us-east-1.amazonaws.com', rawPath: '/webhooks/id1', rawQueryString });

describe('publicRequestUrl', () => {
  it('rebuilds an API Gateway URL without the default https port', () => {
    expect(publicRequestUrl(at({ host: 'api.example.com', 'x-forwarded-proto': 'https', 'x-forwarded-port': '443' }), 'id1')).toBe('https://api.example.com/webhooks/id1');
  });

  it('keeps a non-default port and the query string as sent', () => {
    expect(publicRequestUrl(at({ host: '127.0.0.1', 'x-forwarded-proto': 'http', 'x-forwarded-port': '3000' }, 'api_key=a%20b&x=1'), 'id1')).toBe('http://127.0.0.1:3000/webhooks/id1?api_key=a%20b&x=1');
  });

  it('does not add a port to a Host that carries one', () => {
    expect(publicRequestUrl(at({ host: '127.0.0.1:3000', 'x-forwarded-proto': 'http', 'x-forwarded-port': '3000' }), 'id1')).toBe('http://127.0.0.1:3000/webhooks/id1');
  });

  it('falls back to the API domain and https when headers are missing', () => {
    expect(publicRequestUrl(at({}), 'id1')).toBe('https://abc.execute-api.us-east-1.amazonaws.com/webhooks/id1');
  });

  it('uses the configured public base URL (custom domain) with the query string', () => {
    expect(publicRequestUrl(at({ host: 'internal' }, 'a=1'), 'id1', 'https://hooks.example.com/in/')).toBe('https://hooks.example.com/in/id1?a=1');
  });
});
