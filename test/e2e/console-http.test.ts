import { describe, expect, it } from 'vitest';
import { createSystemHandler } from '../../functions/handlers/system.js';
import { parseSetting } from '../../functions/settings.js';
import type { HttpEvent } from '../../functions/shared/http.js';
import { call, useLocalStack } from '../support/local-stack.js';

describe('GET /console', () => {
  const stack = useLocalStack();

  it('serves the page under a strict Content-Security-Policy, never cached, naming hashed assets', async () => {
    const page = await call(stack, 'GET', '/console');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('cache-control')).toBe('no-cache');
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    const csp = page.headers.get('content-security-policy')!;
    for (const directive of ["default-src 'none'", "script-src 'self'", "connect-src 'self'", "frame-ancestors 'none'"]) expect(csp).toContain(directive);
    expect(csp).not.toContain('unsafe-inline');
    // No inline script: the only script is a file of this origin.
    expect(page.text).not.toMatch(/<script(?![^>]*\ssrc=)/);
    expect(page.text).toMatch(/<script type="module" src="\/console\/app\.[A-Z0-9]{8}\.js"><\/script>/);
  });

  it('serves the hashed assets cacheable for a year, and 404 for any other name', async () => {
    const page = await call(stack, 'GET', '/console');
    for (const [, path] of page.text.matchAll(/(?:src|href)="(\/console\/[^"]+)"/g)) {
      const asset = await call(stack, 'GET', path!);
      expect(asset.status).toBe(200);
      expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      expect(asset.headers.get('content-type')).toMatch(/^text\/(javascript|css); charset=utf-8$/);
      expect(asset.headers.get('x-content-type-options')).toBe('nosniff');
    }
    const missing = await call(stack, 'GET', '/console/app.NOTAHASH.js');
    expect(missing.status).toBe(404);
    expect(missing.json).toEqual({ error: 'not_found', message: expect.any(String) });
    expect((await call(stack, 'GET', '/console/constructor')).status).toBe(404);
  });

  it('serves config.json without a hosted UI locally, never cached, and the CSP connects to this origin and the object store\'s only', async () => {
    const config = await call(stack, 'GET', '/console/config.json');
    expect(config.status).toBe(200);
    expect(config.json).toEqual({ cognito: null });
    expect(config.headers.get('cache-control')).toBe('no-cache');
    // The console's uploads and downloads go straight to the bucket's origin: s3rver's, locally.
    expect(config.headers.get('content-security-policy')).toMatch(/connect-src 'self' http:\/\/127\.0\.0\.1:\d+;/);
  });
});

describe('the system function with a Cognito hosted UI', () => {
  const hostedUi = { domain: 'https://flowgate-123.auth.eu-west-1.amazoncognito.com', clientId: 'client-abc' };
  const handler = createSystemHandler({ consoleFiles: async () => ({ html: '<!doctype html>', assets: {} }), hostedUi });
  const get = (path: string, asset?: string) => handler({
    version: '2.0', routeKey: asset ? 'GET /console/{asset+}' : 'GET /console', rawPath: path, rawQueryString: '', headers: {},
    pathParameters: asset ? { asset } : undefined,
    requestContext: { http: { method: 'GET', path, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'test' }, domainName: '127.0.0.1', requestId: 'r' },
    isBase64Encoded: false,
  } as unknown as HttpEvent);

  it('tells the console where the hosted UI is, and lets it connect there and nowhere else', async () => {
    const config = await get('/console/config.json', 'config.json');
    expect(JSON.parse(config.body!)).toEqual({ cognito: hostedUi });
    for (const response of [config, await get('/console')]) {
      expect(response.headers!['content-security-policy']).toContain(`connect-src 'self' ${hostedUi.domain};`);
      expect(response.headers!['content-security-policy']).toContain("script-src 'self';");
    }
  });

  it('CONSOLE_COGNITO_DOMAIN must be a bare https origin: it goes into the CSP as is', () => {
    expect(parseSetting('consoleCognitoDomain', hostedUi.domain)).toBe(hostedUi.domain);
    expect(parseSetting('consoleCognitoDomain', undefined)).toBeUndefined();
    expect(parseSetting('consoleCognitoDomain', 'http://127.0.0.1:4321')).toBe('http://127.0.0.1:4321');
    for (const bad of ['http://x.example.com', 'http://127.0.0.1.example.com', 'https://x.example.com/path', "https://x.example.com; script-src *", 'https://*', 'https://x.example.com/']) {
      expect(() => parseSetting('consoleCognitoDomain', bad), bad).toThrow(/CONSOLE_COGNITO_DOMAIN/);
    }
  });
});
