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
    expect(res.headers.get('access-control-allow-headers')!.split(',')).toEqual(['authorization', 'x-api-key', 'content-type', 'x-mfa-token', 'if-match', 'if-none-match', 'range', '*']);
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
    expect(res.headers.get('access-control-expose-headers')).toBe('retry-after,etag,content-range,location,*');
  });

  it('a request from an unlisted origin gets its normal answer with no CORS header', async () => {
    const res = await call(stack, 'GET', '/api-keys', { headers: { origin: UNLISTED }, token: await stack.token('cors-user') });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('errors carry the header too, so a web app can read {"error": ...}', async () => {
    const res = await call(stack, 'GET', '/api-keys', { headers: { origin: LISTED } });
    expect(res.status).toBe(401);
    expect(res.json).toEqual({ error: 'unauthorized', message: expect.any(String) });
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
    expect(res.json).toEqual({ error: 'method_not_allowed', message: expect.any(String) });
  });
});

/**
 * Whether a browser goes on after this preflight answer to send `requested` headers (the Fetch
 * standard's CORS-preflight check, for a request without credentials mode, as the gateway's are):
 * each name listed, or `*` listed, which covers every name but `authorization`.
 */
function preflightAllows(answer: Headers, requested: readonly string[]): boolean {
  const allowed = (answer.get('access-control-allow-headers') ?? '').split(',').map((name) => name.trim().toLowerCase());
  return requested.every((name) => allowed.includes(name) || (allowed.includes('*') && name !== 'authorization'));
}
/** Whether a page may read response header `name` (safelisted, exposed by name, or by `*` without credentials mode). */
function readable(answer: Headers, name: string): boolean {
  const safelisted = ['cache-control', 'content-language', 'content-length', 'content-type', 'expires', 'last-modified', 'pragma'];
  const exposed = (answer.get('access-control-expose-headers') ?? '').split(',').map((item) => item.trim().toLowerCase());
  return safelisted.includes(name) || exposed.includes(name) || exposed.includes('*');
}

describe('a web app on a listed origin can use every header the API takes and answers', () => {
  it('an object write with its conditions and metadata, and a step-up proof, pass the preflight; the wildcard never stands in for authorization', async () => {
    const headers = ['authorization', 'content-type', 'if-none-match', 'if-match', 'x-meta-colour', 'x-meta-owner-id'];
    const write = await call(stack, 'OPTIONS', '/storage/objects/photos/objects/a.txt', {
      headers: { origin: LISTED, 'access-control-request-method': 'PUT', 'access-control-request-headers': headers.join(',') },
    });
    expect(write.status).toBe(204);
    expect(preflightAllows(write.headers, headers)).toBe(true);
    const stepUp = await call(stack, 'OPTIONS', '/accounts/factors/f1', {
      headers: { origin: LISTED, 'access-control-request-method': 'DELETE', 'access-control-request-headers': 'authorization,x-mfa-token' },
    });
    expect(preflightAllows(stepUp.headers, ['authorization', 'x-mfa-token'])).toBe(true);
    expect(preflightAllows(new Headers({ 'access-control-allow-headers': '*' }), ['authorization'])).toBe(false);
  });

  it('an object\'s etag, metadata and range answers are readable from the page', async () => {
    const token = await stack.token('cors-objects');
    const created = await call(stack, 'PUT', '/storage/objects/cors-store', { token, body: {}, headers: { origin: LISTED } });
    expect(created.status, created.text).toBeLessThan(300);
    const put = await call(stack, 'PUT', '/storage/objects/cors-store/objects/a.txt', {
      token, rawBody: 'hello world', headers: { origin: LISTED, 'content-type': 'text/plain', 'if-none-match': '*', 'x-meta-colour': 'blue' },
    });
    expect(put.status, put.text).toBe(200);
    expect(put.headers.get('access-control-allow-origin')).toBe(LISTED);
    expect(readable(put.headers, 'etag')).toBe(true);
    const ranged = await call(stack, 'GET', '/storage/objects/cors-store/objects/a.txt', { token, headers: { origin: LISTED, range: 'bytes=0-4' } });
    expect(ranged.status).toBe(206);
    for (const name of ['etag', 'content-range', 'x-meta-colour']) {
      expect(ranged.headers.get(name), name).not.toBeNull();
      expect(readable(ranged.headers, name), name).toBe(true);
    }
  });

  it('a presigned upload URL (the objects bucket\'s own CORS) takes the listed origin\'s PUT with its conditions and signed x-amz-* headers', async () => {
    const token = await stack.token('cors-objects');
    await call(stack, 'PUT', '/storage/objects/cors-upload', { token, body: {} });
    const upload = await call(stack, 'POST', '/storage/objects/cors-upload/uploads', { token, body: { key: 'b.txt', size: 3, content_type: 'text/plain' } });
    expect(upload.status, upload.text).toBe(201);
    const requested = ['content-type', 'if-none-match', 'x-amz-meta-colour'];
    const preflight = await fetch(upload.json.data.url, { method: 'OPTIONS', headers: { origin: LISTED, 'access-control-request-method': 'PUT', 'access-control-request-headers': requested.join(',') } });
    expect(preflight.status, await preflight.clone().text()).toBe(200);
    expect(preflight.headers.get('access-control-allow-origin')).toBe(LISTED);
    expect(preflightAllows(preflight.headers, requested)).toBe(true);
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
