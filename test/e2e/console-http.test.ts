import { describe, expect, it } from 'vitest';
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
    expect(missing.json).toEqual({ error: 'not_found' });
    expect((await call(stack, 'GET', '/console/constructor')).status).toBe(404);
  });
});
