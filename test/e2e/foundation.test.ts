import { SignJWT, UnsecuredJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { NOT_FOUND } from '../../functions/shared/errors.js';
import { call, useLocalStack } from '../support/local-stack.js';

const stack = useLocalStack();

describe('local stack', () => {
  it('GET /health answers 200 when ready', async () => {
    const res = await call(stack, 'GET', '/health');
    expect(res.status).toBe(200);
    // An idle stack: no acknowledged event waits for its flow.
    expect(res.json).toEqual({ status: 'ok', backlog: { waiting: 0, oldest_age_seconds: null } });
  });

  it('an unknown route is 404 not_found, with or without credentials', async () => {
    expect((await call(stack, 'GET', '/nope')).json).toEqual({ error: 'not_found', message: expect.any(String) });
    const res = await call(stack, 'GET', '/nope', { token: await stack.token('alice') });
    expect(res.status).toBe(404);
    expect(res.json).toEqual({ error: 'not_found', message: expect.any(String) });
  });

  it('a 404 says which thing is not there, in every room, and the same for another account\'s', async () => {
    const token = await stack.token('alice');
    const put = (path: string, body: object = {}) => call(stack, 'PUT', path, { token, body });
    expect((await put('/storage/kv/settings')).status).toBe(201);
    expect((await put('/storage/objects/files')).status).toBe(201);
    expect((await put('/storage/streams/events')).status).toBe(201);
    expect((await put('/storage/search/docs', { searchable_fields: ['title'] })).status).toBe(201);
    const trigger = (await call(stack, 'POST', '/triggers', { token, body: { flow: 'echo' } })).json as { data: { id: string } };
    const missing: Array<[string, string, keyof typeof NOT_FOUND]> = [
      ['GET', '/nope', 'route'],
      ['GET', '/storage/kv/nope', 'bucket'],
      ['GET', '/storage/kv/settings/value?key=nope', 'value'],
      ['GET', '/storage/objects/nope', 'store'],
      ['GET', '/storage/objects/files/object?key=nope', 'object'],
      ['DELETE', '/storage/objects/files/uploads/nope', 'upload'],
      ['GET', '/storage/streams/nope', 'stream'],
      ['GET', '/storage/streams/events/consumers/nope', 'consumer'],
      ['GET', '/storage/streams/events/messages/7', 'message'],
      ['GET', '/storage/search/nope', 'index'],
      ['GET', '/storage/search/docs/documents/nope', 'document'],
      ['GET', '/triggers/0123456789abcdef0123456789abcdef', 'trigger'],
      ['GET', '/triggers/my-trigger/executions', 'trigger'],
      ['GET', `/triggers/${trigger.data.id}/executions/nope`, 'execution'],
      ['GET', '/flows/nope', 'flow'],
      ['DELETE', '/api-keys/nope', 'apiKey'],
    ];
    for (const [method, path, what] of missing) {
      const res = await call(stack, method, path, { token });
      expect({ method, path, status: res.status, body: res.json }).toEqual({ method, path, status: 404, body: { error: 'not_found', message: NOT_FOUND[what] } });
    }
    // Another account's trigger, bucket and stream read exactly as ones that never existed.
    const bob = await stack.token('bob');
    for (const [path, what] of [[`/triggers/${trigger.data.id}`, 'trigger'], ['/storage/kv/settings', 'bucket'], ['/storage/streams/events', 'stream']] as const) {
      expect((await call(stack, 'GET', path, { token: bob })).json).toEqual({ error: 'not_found', message: NOT_FOUND[what] });
    }
  });

  it('a known path with another method is 405 with Allow', async () => {
    const res = await call(stack, 'PATCH', '/api-keys');
    expect(res.status).toBe(405);
    expect(res.json).toEqual({ error: 'method_not_allowed', message: expect.any(String) });
    expect(res.headers.get('allow')).toBe('GET, POST');
  });

  it('oversized headers get a JSON error, not a bare protocol reply', async () => {
    const res = await call(stack, 'GET', '/health', { headers: { 'x-big': 'a'.repeat(20_000) } });
    expect(res.status).toBe(431);
    expect(res.json).toEqual({ error: 'headers_too_large', message: expect.any(String) });
  });
});

describe('gateway authentication', () => {
  it('POST /api-keys with a token issues a key that then authenticates, until revoked', async () => {
    const token = await stack.token('alice');
    const created = await call(stack, 'POST', '/api-keys', { token });
    expect(created.status).toBe(201);
    const { id, api_key: apiKey } = created.json.data;
    expect(apiKey).toMatch(/^fgk_[A-Za-z0-9_-]{43}$/);

    // Keys are listed by users (a key cannot manage keys); the key itself authenticates the routes of its scopes.
    const listed = await call(stack, 'GET', '/api-keys', { token });
    expect(listed.status).toBe(200);
    expect(listed.json.data.api_keys.map((k: { id: string }) => k.id)).toContain(id);
    expect(JSON.stringify(listed.json)).not.toContain(apiKey);
    expect((await call(stack, 'GET', '/storage/kv', { apiKey })).status).toBe(200);

    expect((await call(stack, 'DELETE', `/api-keys/${id}`, { token })).status).toBe(204);
    const after = await call(stack, 'GET', '/storage/kv', { apiKey });
    expect(after.status).toBe(401);
    expect(after.json).toEqual({ error: 'unauthorized', message: expect.any(String) });
  });

  it('keys are scoped to their account: another account cannot see or revoke them', async () => {
    const alice = await call(stack, 'POST', '/api-keys', { token: await stack.token('alice2') });
    const bobToken = await stack.token('bob2');
    const bobList = await call(stack, 'GET', '/api-keys', { token: bobToken });
    expect(bobList.json.data.api_keys).toEqual([]);
    expect((await call(stack, 'DELETE', `/api-keys/${alice.json.data.id}`, { token: bobToken })).status).toBe(404);
  });

  it('accepts the bearer scheme name in any case, as HTTP defines it', async () => {
    const res = await call(stack, 'GET', '/api-keys', { headers: { authorization: `bearer ${await stack.token('erin')}` } });
    expect(res.status).toBe(200);
  });

  it('the account is the account_id claim when present, else sub', async () => {
    const created = await call(stack, 'POST', '/api-keys', { token: await stack.token('carol', { accountId: 'team-1' }) });
    const viaTeammate = await call(stack, 'GET', '/api-keys', { token: await stack.token('dave', { accountId: 'team-1' }) });
    expect(viaTeammate.json.data.api_keys.map((k: { id: string }) => k.id)).toContain(created.json.data.id);
  });

  const refused: [string, () => Promise<Record<string, string>>][] = [
    ['no credentials', async () => ({})],
    ['an unknown API key', async () => ({ 'x-api-key': 'fgk_' + 'A'.repeat(43) })],
    ['a token signed with another secret', async () => ({
      authorization: `Bearer ${await new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setSubject('alice').setExpirationTime('1h').sign(new TextEncoder().encode('another-secret'))}`,
    })],
    ['an alg: none token', async () => ({ authorization: `Bearer ${new UnsecuredJWT({ sub: 'alice' }).setExpirationTime('1h').encode()}` })],
    ['an expired token', async () => ({ authorization: `Bearer ${await stack.token('alice', { expiresInSeconds: -120 })}` })],
    ['a token without exp', async () => ({
      authorization: `Bearer ${await new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setSubject('alice').sign(new TextEncoder().encode(stack.jwtSecret))}`,
    })],
    ['a token signed with HS512 (algorithm not configured)', async () => ({
      authorization: `Bearer ${await new SignJWT({}).setProtectedHeader({ alg: 'HS512' }).setSubject('alice').setExpirationTime('1h').sign(new TextEncoder().encode(stack.jwtSecret))}`,
    })],
    ['a malformed authorization header', async () => ({ authorization: 'Basic YWxpY2U6cGFzcw==' })],
  ];
  for (const [name, headers] of refused) {
    it(`refuses ${name} with 401 unauthorized`, async () => {
      const res = await call(stack, 'GET', '/api-keys', { headers: await headers() });
      expect(res.status).toBe(401);
      expect(res.json).toEqual({ error: 'unauthorized', message: expect.any(String) });
    });
  }
});

describe('interface description', () => {
  it('GET /openapi.json serves the document built from the route table', async () => {
    const { buildOpenApiDocument } = await import('../../functions/openapi/document.js');
    const res = await call(stack, 'GET', '/openapi.json');
    expect(res.status).toBe(200);
    expect(res.json).toEqual(buildOpenApiDocument(stack.baseUrl));
  });
});
