import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { dynamoClient } from '../../functions/adapters/aws/clients/dynamo.js';
import { generateApiKey, generateId, hashApiKey } from '../../functions/domain/api-keys.js';
import { randomBytes } from 'node:crypto';
import { call, useLocalStack } from '../support/local-stack.js';
import { totpCodeAt as codeAt } from '../support/totp.js';

// Issue 41 items 1, 2, 3 and 5, as attacks over HTTP on the local stack: scoped keys, key
// management for users only, step-up proofs that name their purpose and serve once, the
// administrator's reset, and the audit entries each leaves.
const stack = useLocalStack();

const START = '/accounts/totp-registration';
const CONFIRM = '/accounts/confirm-totp-registration';
const RECOVERY = '/accounts/recovery-codes/verify';
const REGENERATE = '/accounts/recovery-codes/regenerate';
const FACTORS = '/accounts/factors';
const EVENTS = '/accounts/mfa/events';
const ADMINS = { 'cognito:groups': ['flowgate-admins'] };
const userFactors = (sub: string) => `/accounts/users/${encodeURIComponent(sub)}/factors`;

let users = 0;

/** A user with one factor; `claims` e.g. {@link ADMINS}. */
async function enrolled(options: { accountId?: string; claims?: Record<string, unknown> } = {}) {
  const sub = `scopes-${++users}-${Date.now()}`;
  const token = await stack.token(sub, options);
  const secret: string = (await call(stack, 'POST', START, { token })).json.data.secret;
  const confirmed = await call(stack, 'POST', CONFIRM, { token, body: { code: codeAt(secret, Date.now()), secret, name: 'Phone' } });
  expect(confirmed.status, confirmed.text).toBe(200);
  return { sub, token, secret, recoveryCodes: confirmed.json.data.recovery_codes as string[] };
}

/** A proof from a recovery code, asked for `purpose` (none: a sign-in proof). */
async function proof(user: { token: string; recoveryCodes: string[] }, purpose?: string): Promise<string> {
  const used = await call(stack, 'POST', RECOVERY, { token: user.token, body: { code: user.recoveryCodes.shift(), ...(purpose && { purpose }) } });
  expect(used.status, used.text).toBe(200);
  return used.json.data.mfa_token;
}
const withProof = (mfaToken: string) => ({ 'x-mfa-token': mfaToken });

async function mintKey(token: string, scopes?: string[]) {
  const res = await call(stack, 'POST', '/api-keys', { token, ...(scopes && { body: { scopes } }) });
  expect(res.status, res.text).toBe(201);
  return res.json.data as { id: string; api_key: string; scopes: string[] };
}

async function adminKeyOf(admin: { token: string; recoveryCodes: string[] }) {
  const res = await call(stack, 'POST', '/api-keys/admin', { token: admin.token, headers: withProof(await proof(admin, 'mint_admin_key')) });
  expect(res.status, res.text).toBe(201);
  return res.json.data as { id: string; api_key: string; scopes: string[] };
}

const eventsOf = async (token: string) => (await call(stack, 'GET', `${EVENTS}?limit=100`, { token })).json.data.events as { type: string; actor?: string }[];

describe('a bearer token alone never removes, replaces or adds a factor', () => {
  it('the attack of the review: a key minted with a member\'s token cannot reset a teammate\'s factors, and the member cannot either', async () => {
    const teammate = await enrolled({ accountId: 'team-attack' });
    const attacker = await stack.token(`attacker-${Date.now()}`, { accountId: 'team-attack' });
    const { api_key: apiKey } = await mintKey(attacker);
    expect((await call(stack, 'DELETE', userFactors(teammate.sub), { apiKey })).status).toBe(401);
    const byToken = await call(stack, 'DELETE', userFactors(teammate.sub), { token: attacker });
    expect([byToken.status, byToken.json.error]).toEqual([403, 'forbidden']);
    // Its own routes: no factor removed, regenerated or added without a proof.
    const [factor] = (await call(stack, 'GET', FACTORS, { token: teammate.token })).json.data.factors;
    expect((await call(stack, 'DELETE', `${FACTORS}/${factor.id}`, { token: teammate.token })).status).toBe(403);
    expect((await call(stack, 'POST', REGENERATE, { token: teammate.token })).status).toBe(403);
    expect((await call(stack, 'POST', START, { token: teammate.token })).status).toBe(409);
    expect((await call(stack, 'GET', FACTORS, { token: teammate.token })).json.data.factors).toHaveLength(1);
  });
});

describe('API key scopes', () => {
  it('a storage key reaches storage only: refused on factor, key, admin and trigger routes', async () => {
    const owner = await stack.token(`storage-owner-${Date.now()}`);
    const { api_key: apiKey, scopes } = await mintKey(owner, ['storage']);
    expect(scopes).toEqual(['storage']);
    expect((await call(stack, 'PUT', '/storage/kv/scoped', { apiKey })).status).toBe(201);
    for (const [method, path] of [['GET', FACTORS], ['POST', START], ['GET', '/api-keys'], ['POST', '/api-keys'], ['POST', '/api-keys/admin']] as const) {
      expect((await call(stack, method, path, { apiKey })).status, `${method} ${path}`).toBe(401);
    }
    for (const [method, path] of [['GET', userFactors('someone')], ['GET', '/triggers'], ['POST', '/triggers']] as const) {
      const res = await call(stack, method, path, { apiKey });
      expect([res.status, res.json.error], `${method} ${path}`).toEqual([403, 'forbidden']);
      expect(res.json.message).toMatch(/scope/);
    }
  });

  it('a read-only key reads and cannot write', async () => {
    const owner = await stack.token(`read-owner-${Date.now()}`);
    const { api_key: writer } = await mintKey(owner, ['storage', 'triggers']);
    expect((await call(stack, 'PUT', '/storage/kv/readable', { apiKey: writer })).status).toBe(201);
    const { api_key: reader } = await mintKey(owner, ['storage:read', 'triggers:read']);
    expect((await call(stack, 'GET', '/storage/kv/readable', { apiKey: reader })).status).toBe(200);
    expect((await call(stack, 'GET', '/triggers', { apiKey: reader })).status).toBe(200);
    for (const [method, path] of [['PUT', '/storage/kv/other'], ['DELETE', '/storage/kv/readable'], ['POST', '/triggers']] as const) {
      expect((await call(stack, method, path, { apiKey: reader, body: {} })).status, `${method} ${path}`).toBe(403);
    }
  });

  it('POST /api-keys refuses the admin scope (403) and unknown or empty scopes (400); the default is storage + triggers', async () => {
    const owner = await stack.token(`mint-owner-${Date.now()}`, { claims: ADMINS });
    const admin = await call(stack, 'POST', '/api-keys', { token: owner, body: { scopes: ['admin'] } });
    expect([admin.status, admin.json.error]).toEqual([403, 'forbidden']);
    expect(admin.json.message).toContain('/api-keys/admin');
    for (const scopes of [[], ['root'], 'storage', ['storage', 'storage']]) {
      const res = await call(stack, 'POST', '/api-keys', { token: owner, body: { scopes } });
      expect([res.status, res.json.error], JSON.stringify(scopes)).toEqual([400, 'validation_error']);
      expect(res.json.message).toMatch(/scopes/);
    }
    expect((await mintKey(owner)).scopes).toEqual(['storage', 'triggers']);
  });

  it('a key stored before scopes existed keeps working with storage + triggers, and no more', async () => {
    const accountId = `legacy-${Date.now()}`;
    const apiKey = generateApiKey(randomBytes);
    const id = generateId(randomBytes);
    const table = stack.engines.env.AUTH_TABLE!;
    // The two items as the store wrote them before scopes: no `scopes` attribute.
    await dynamoClient(stack.aws).send(new PutCommand({ TableName: table, Item: { pk: `ACCOUNT#${accountId}`, sk: `KEY#${id}`, id, key_hash: hashApiKey(apiKey), created_at: new Date().toISOString() } }));
    await dynamoClient(stack.aws).send(new PutCommand({ TableName: table, Item: { pk: `APIKEY#${hashApiKey(apiKey)}`, sk: 'KEY', account_id: accountId, id } }));
    expect((await call(stack, 'PUT', '/storage/kv/legacy', { apiKey })).status).toBe(201);
    expect((await call(stack, 'GET', '/triggers', { apiKey })).status).toBe(200);
    expect((await call(stack, 'GET', userFactors('anyone'), { apiKey })).status).toBe(403);
    expect((await call(stack, 'GET', '/api-keys', { apiKey })).status).toBe(401);
    const listed = await call(stack, 'GET', '/api-keys', { token: await stack.token(accountId) });
    expect(listed.json.data.api_keys).toEqual([expect.objectContaining({ id, scopes: ['storage', 'triggers'] })]);
  });
});

describe('key management is for users only', () => {
  it('no API key, not even an admin one, can mint, list or revoke keys', async () => {
    const admin = await enrolled({ claims: ADMINS });
    const { api_key: adminKey } = await adminKeyOf(admin);
    const { id: victim } = await mintKey(admin.token);
    for (const apiKey of [adminKey, (await mintKey(admin.token)).api_key]) {
      for (const [method, path] of [['POST', '/api-keys'], ['GET', '/api-keys'], ['DELETE', `/api-keys/${victim}`], ['GET', '/api-keys/events'], ['POST', '/api-keys/admin']] as const) {
        const res = await call(stack, method, path, { apiKey });
        expect([res.status, res.json.error], `${method} ${path}`).toEqual([401, 'unauthorized']);
      }
    }
    const listed = (await call(stack, 'GET', '/api-keys', { token: admin.token })).json.data.api_keys as { id: string }[];
    expect(listed.map((k) => k.id)).toContain(victim);
  });
});

describe('step-up proofs name their purpose and serve once', () => {
  it('a proof replayed is refused, also when two requests race with it', async () => {
    const user = await enrolled();
    const regeneration = await proof(user, 'regenerate_recovery_codes');
    const first = await call(stack, 'POST', REGENERATE, { token: user.token, headers: withProof(regeneration) });
    expect(first.status, first.text).toBe(200);
    const again = await call(stack, 'POST', REGENERATE, { token: user.token, headers: withProof(regeneration) });
    expect([again.status, again.json.error]).toEqual([403, 'mfa_required']);
    expect(again.json.message).toMatch(/already used/);

    user.recoveryCodes = first.json.data.recovery_codes;
    const raced = await proof(user, 'regenerate_recovery_codes');
    const results = await Promise.all([0, 1].map(() => call(stack, 'POST', REGENERATE, { token: user.token, headers: withProof(raced) })));
    expect(results.map((r) => r.status).sort()).toEqual([200, 403]);
  });

  it('a proof for one purpose is refused for another, and a sign-in proof for every sensitive operation', async () => {
    const user = await enrolled();
    const [factor] = (await call(stack, 'GET', FACTORS, { token: user.token })).json.data.factors;
    const removal = await proof(user, 'remove_factor');
    const wrong = await call(stack, 'POST', REGENERATE, { token: user.token, headers: withProof(removal) });
    expect([wrong.status, wrong.json.error]).toEqual([403, 'mfa_required']);
    expect(wrong.json.message).toContain('"purpose": "regenerate_recovery_codes"');
    const signIn = await proof(user);
    expect((await call(stack, 'DELETE', `${FACTORS}/${factor.id}`, { token: user.token, headers: withProof(signIn) })).status).toBe(403);
    // A sign-in proof still starts a further registration (it shows a secret, nothing more)…
    const second = await call(stack, 'POST', START, { token: user.token, headers: withProof(signIn) });
    expect(second.status).toBe(200);
    // …but does not confirm one; an add_factor proof does, once.
    const body = { code: codeAt(second.json.data.secret, Date.now()), secret: second.json.data.secret, name: 'Tablet' };
    expect((await call(stack, 'POST', CONFIRM, { token: user.token, body, headers: withProof(signIn) })).status).toBe(403);
    const adding = await proof(user, 'add_factor');
    expect((await call(stack, 'POST', CONFIRM, { token: user.token, body, headers: withProof(adding) })).status).toBe(200);
    // The removal proof, refused above for another operation, still serves its own, once.
    expect((await call(stack, 'DELETE', `${FACTORS}/${factor.id}`, { token: user.token, headers: withProof(removal) })).status).toBe(204);
  });

  it('a purpose that is not one is 400 validation_error, naming the purposes, and spends no code', async () => {
    const user = await enrolled();
    const res = await call(stack, 'POST', RECOVERY, { token: user.token, body: { code: user.recoveryCodes[0], purpose: 'everything' } });
    expect([res.status, res.json.error]).toEqual([400, 'validation_error']);
    expect(res.json.message).toContain('remove_factor');
    expect((await call(stack, 'GET', FACTORS, { token: user.token })).json.data.recovery_codes_remaining).toBe(10);
  });

  it('a proof carries aud, the app of the token it was asked with, and is refused with another app\'s token', async () => {
    const sub = `aud-user-${Date.now()}`;
    const appA = await stack.token(sub, { claims: { client_id: 'app-a' } });
    const appB = await stack.token(sub, { claims: { client_id: 'app-b' } });
    const secret: string = (await call(stack, 'POST', START, { token: appA })).json.data.secret;
    const codes = (await call(stack, 'POST', CONFIRM, { token: appA, body: { code: codeAt(secret, Date.now()), secret } })).json.data.recovery_codes as string[];
    const user = { token: appA, recoveryCodes: codes };
    const mfaToken = await proof(user, 'regenerate_recovery_codes');
    expect(JSON.parse(Buffer.from(mfaToken.split('.')[1]!, 'base64url').toString())).toMatchObject({ aud: 'app-a', purpose: 'regenerate_recovery_codes', jti: expect.any(String) });
    expect((await call(stack, 'POST', REGENERATE, { token: appB, headers: withProof(mfaToken) })).status).toBe(403);
    expect((await call(stack, 'POST', REGENERATE, { token: appA, headers: withProof(mfaToken) })).status).toBe(200);
  });
});

describe('the admin reset and admin keys need an administrator and a fresh proof', () => {
  it('a reset without the admin claim, without a proof, with a sign-in proof or a spent one is refused; with one it is done and audited', async () => {
    const adminSub = `reset-admin-${Date.now()}`;
    const admin = await enrolled({ accountId: adminSub, claims: ADMINS });
    const member = await enrolled({ accountId: adminSub });
    const notAdmin = await enrolled({ accountId: adminSub });
    const path = userFactors(member.sub);

    const noClaim = await call(stack, 'DELETE', path, { token: notAdmin.token, headers: withProof(await proof(notAdmin, 'admin_reset')) });
    expect([noClaim.status, noClaim.json.error]).toEqual([403, 'forbidden']);
    expect((await call(stack, 'DELETE', path, { token: admin.token })).json).toEqual({ error: 'mfa_required', message: expect.any(String) });
    expect((await call(stack, 'DELETE', path, { token: admin.token, headers: withProof(await proof(admin)) })).status).toBe(403);
    const resetProof = await proof(admin, 'admin_reset');
    // Another account's user is 404 and spends nothing.
    const outsider = await enrolled();
    expect((await call(stack, 'DELETE', userFactors(outsider.sub), { token: admin.token, headers: withProof(resetProof) })).status).toBe(404);
    expect((await call(stack, 'DELETE', path, { token: admin.token, headers: withProof(resetProof) })).status).toBe(204);
    expect((await call(stack, 'GET', FACTORS, { token: member.token })).json.data.factors).toEqual([]);
    expect((await eventsOf(member.token))[0]).toMatchObject({ type: 'admin_reset', actor: admin.sub });
    // Spent: the next reset (of another user) needs a new proof.
    const spent = await call(stack, 'DELETE', userFactors(notAdmin.sub), { token: admin.token, headers: withProof(resetProof) });
    expect([spent.status, spent.json.error]).toEqual([403, 'mfa_required']);
  });

  it('an admin key needs the admin claim and a mint_admin_key proof', async () => {
    const notAdmin = await enrolled();
    const refused = await call(stack, 'POST', '/api-keys/admin', { token: notAdmin.token, headers: withProof(await proof(notAdmin, 'mint_admin_key')) });
    expect([refused.status, refused.json.error]).toEqual([403, 'forbidden']);
    const admin = await enrolled({ claims: ADMINS });
    expect((await call(stack, 'POST', '/api-keys/admin', { token: admin.token })).status).toBe(403);
    expect((await call(stack, 'POST', '/api-keys/admin', { token: admin.token, headers: withProof(await proof(admin, 'admin_reset')) })).status).toBe(403);
    const minted = await adminKeyOf(admin);
    expect(minted.scopes).toEqual(['admin']);
    // An admin key reaches storage, triggers and the account's view of its users, never a factor change.
    expect((await call(stack, 'GET', '/storage/kv', { apiKey: minted.api_key })).status).toBe(200);
    expect((await call(stack, 'GET', '/triggers', { apiKey: minted.api_key })).status).toBe(200);
    expect((await call(stack, 'GET', userFactors(admin.sub), { apiKey: minted.api_key })).status).toBe(200);
    expect((await call(stack, 'DELETE', userFactors(admin.sub), { apiKey: minted.api_key })).status).toBe(401);
  });
});

describe('audit entries', () => {
  it('forged proofs at the start and the confirmation of a further factor are logged as failed verifications', async () => {
    const user = await enrolled();
    const forged = 'eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ4In0.AAAA';
    expect((await call(stack, 'POST', START, { token: user.token, headers: withProof(forged) })).status).toBe(403);
    const body = { code: '123456', secret: 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ' };
    expect((await call(stack, 'POST', CONFIRM, { token: user.token, body, headers: withProof(forged) })).status).toBe(403);
    expect((await eventsOf(user.token)).slice(0, 2).map((e) => e.type)).toEqual(['verification_failed', 'verification_failed']);
  });

  it("an API key listing a user's factors, and minting and revoking keys, leave entries with who did it", async () => {
    const admin = await enrolled({ claims: ADMINS });
    const adminKey = await adminKeyOf(admin);
    const member = await enrolled({ accountId: admin.sub });
    expect((await call(stack, 'GET', userFactors(member.sub), { apiKey: adminKey.api_key })).status).toBe(200);
    expect((await eventsOf(member.token))[0]).toEqual(expect.objectContaining({ type: 'factors_listed_by_admin', actor: `apikey:${adminKey.id}` }));

    const storageKey = await mintKey(admin.token, ['storage']);
    expect((await call(stack, 'DELETE', `/api-keys/${storageKey.id}`, { token: admin.token, headers: { 'user-agent': 'audit-test/1' } })).status).toBe(204);
    const events = (await call(stack, 'GET', '/api-keys/events', { token: admin.token })).json.data.events;
    expect(events).toEqual([
      expect.objectContaining({ type: 'api_key_revoked', key_id: storageKey.id, actor: admin.sub, user_agent: 'audit-test/1', source_ip: '127.0.0.1' }),
      expect.objectContaining({ type: 'api_key_created', key_id: storageKey.id, scopes: ['storage'], actor: admin.sub }),
      expect.objectContaining({ type: 'api_key_created', key_id: adminKey.id, scopes: ['admin'], actor: admin.sub }),
    ]);
    expect(JSON.stringify(events)).not.toContain(storageKey.api_key);
  });
});
