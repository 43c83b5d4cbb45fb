import { describe, expect, it } from 'vitest';
import { startLocalStack } from '../../local/stack.js';
import { call, useLocalStack } from '../support/local-stack.js';

const LISTED = 'https://app.example.com';
const UNLISTED = 'https://evil.example.net';
const stack = useLocalStack({ corsAllowedOrigins: [LISTED, 'http://localhost:5173'] });

const preflight = (origin: string, path = '/api-keys', method = 'POST') =>
  call(stack, 'OPTIONS', path, { headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': 'authorization,content-type' } });

describe('CORS on the local stack (CORS_ALLOWED_ORIGINS)', () => {
  it('a preflight from a listed origin is 204 with the allow headers: $default\'s function answers it and API Gateway adds them, as deployed', async () => {
    const answered: string[] = [];
    const system = stack.handlers.system as (event: { routeKey: string }) => Promise<unknown>;
    (stack.handlers as Record<string, unknown>).system = async (event: { routeKey: string }) => {
      answered.push(event.routeKey);
      return system(event);
    };
    let res;
    try {
      res = await preflight(LISTED);
    } finally {
      (stack.handlers as Record<string, unknown>).system = system;
    }
    expect(answered).toEqual(['$default']);
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect(res.headers.get('access-control-allow-origin')).toBe(LISTED);
    expect(res.headers.get('access-control-allow-headers')!.split(',')).toEqual(['authorization', 'x-api-key', 'content-type']);
    expect(res.headers.get('access-control-allow-methods')!.split(',')).toEqual(['DELETE', 'GET', 'HEAD', 'PATCH', 'POST', 'PUT']);
    expect(res.headers.get('access-control-max-age')).toBe('600');
    expect(res.headers.get('access-control-allow-credentials')).toBeNull();
  });

  it('a preflight to a webhook URL, which the receiver\'s ANY route takes, is 204 too, for a known id or not', async () => {
    const res = await preflight(LISTED, '/webhooks/unknown-id');
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe(LISTED);
    expect(res.headers.get('access-control-allow-methods')).not.toBeNull();
  });

  it('a preflight from an unlisted origin is 204 without any allow header, so the browser refuses', async () => {
    const res = await preflight(UNLISTED);
    expect(res.status).toBe(204);
    for (const name of res.headers.keys()) expect(name).not.toMatch(/^access-control-/);
  });

  it('a simple request from a listed origin carries Access-Control-Allow-Origin for that origin only', async () => {
    const res = await call(stack, 'GET', '/api-keys', { headers: { origin: LISTED }, token: await stack.token('cors-user') });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe(LISTED);
    expect(res.headers.get('access-control-expose-headers')).toBe('retry-after');
  });

  it('a request from an unlisted origin gets its normal answer with no CORS header', async () => {
    const res = await call(stack, 'GET', '/api-keys', { headers: { origin: UNLISTED }, token: await stack.token('cors-user') });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('errors carry the header too, so a web app can read {"error": ...}', async () => {
    const res = await call(stack, 'GET', '/api-keys', { headers: { origin: LISTED } });
    expect(res.status).toBe(401);
    expect(res.json).toEqual({ error: 'unauthorized' });
    expect(res.headers.get('access-control-allow-origin')).toBe(LISTED);
  });

  it('a webhook sender (no Origin) sees no CORS header', async () => {
    const res = await call(stack, 'POST', '/webhooks/unknown-id', { body: { type: 'ping' } });
    expect(res.status).toBe(404);
    for (const name of res.headers.keys()) expect(name).not.toMatch(/^access-control-/);
  });

  it('an OPTIONS that is not a preflight (no Access-Control-Request-Method) is routed as before', async () => {
    const res = await call(stack, 'OPTIONS', '/api-keys', { headers: { origin: LISTED } });
    expect(res.status).toBe(405);
    expect(res.json).toEqual({ error: 'method_not_allowed' });
  });
});

describe('CORS by default (no origin listed)', () => {
  it('a preflight gets no allow header, so the browser refuses', async () => {
    const plain = await startLocalStack({ port: 0 });
    try {
      const res = await fetch(`${plain.baseUrl}/api-keys`, { method: 'OPTIONS', headers: { origin: LISTED, 'access-control-request-method': 'POST' } });
      expect(res.status).toBe(204);
      for (const name of res.headers.keys()) expect(name).not.toMatch(/^access-control-/);
    } finally {
      await plain.stop();
    }
  });

  it('a wildcard or a non-origin is refused when the stack starts', async () => {
    await expect(startLocalStack({ port: 0, corsAllowedOrigins: ['*'] })).rejects.toThrow(/exact origins/);
    await expect(startLocalStack({ port: 0, corsAllowedOrigins: ['https://app.example.com/'] })).rejects.toThrow(/exact origins/);
  });
});
