import { createRemoteJWKSet, jwtVerify } from 'jose';
import { Secret, TOTP } from 'otpauth';
import { describe, expect, it } from 'vitest';
import { DEFAULT_MESSAGE } from '../../functions/shared/errors.js';
import { call, useLocalStack } from '../support/local-stack.js';

/** The accounts routes' clock: real time, stepped ahead by a test that needs hours to pass. */
const ahead = { ms: 0 };
const stack = useLocalStack({ now: () => Date.now() + ahead.ms });

const START = '/accounts/totp-registration';
const CONFIRM = '/accounts/confirm-totp-registration';
const VERIFY = '/accounts/totp/verify';
const RECOVERY = '/accounts/recovery-codes/verify';
const REGENERATE = '/accounts/recovery-codes/regenerate';
const FACTORS = '/accounts/factors';
const EVENTS = '/accounts/mfa/events';
const STEP_MS = 30_000;

/** Codes from otpauth, a TOTP library other than the product's, at `at` epoch ms. */
const codeAt = (secret: string, at: number) => new TOTP({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 }).generate({ timestamp: at });

/** A code that no step within two of `at` produces, so it is wrong whenever it arrives. */
function wrongCode(secret: string, at = Date.now()): string {
  const near = new Set([-2, -1, 0, 1, 2].map((d) => codeAt(secret, at + d * STEP_MS)));
  return ['000000', '111111', '222222', '333333', '444444', '555555'].find((code) => !near.has(code))!;
}

let users = 0;

/** A user with a factor confirmed with the code of `enrolAt`; its token, secret and recovery codes. */
async function enrolled(enrolAt: number, accountId?: string) {
  const sub = `mfa-e2e-${++users}-${Date.now()}`;
  const token = await stack.token(sub, accountId ? { accountId } : undefined);
  const started = await call(stack, 'POST', START, { token });
  const secret: string = started.json.data.secret;
  const confirmed = await call(stack, 'POST', CONFIRM, { token, body: { code: codeAt(secret, enrolAt), secret, name: 'Phone' } });
  expect(confirmed.status, confirmed.text).toBe(200);
  return { sub, token, secret, recoveryCodes: confirmed.json.data.recovery_codes as string[] };
}

/** The administrators' group the local stack has by default (ADMIN_GROUP). */
const ADMINS = { 'cognito:groups': ['flowgate-admins'] };

/** An administrator (its token names the group) with a factor of its own. */
async function enrolledAdmin(sub: string) {
  const token = await stack.token(sub, { claims: ADMINS });
  const secret: string = (await call(stack, 'POST', START, { token })).json.data.secret;
  const confirmed = await call(stack, 'POST', CONFIRM, { token, body: { code: codeAt(secret, Date.now()), secret } });
  expect(confirmed.status, confirmed.text).toBe(200);
  return { sub, token, secret, recoveryCodes: confirmed.json.data.recovery_codes as string[] };
}

/** An admin key minted by `admin` with a proof from its first recovery code. */
async function mintAdminKey(admin: { token: string; recoveryCodes: string[] }): Promise<string> {
  const proof = await proofFrom(admin.token, admin.recoveryCodes[0]!, 'mint_admin_key');
  const minted = await call(stack, 'POST', '/api-keys/admin', { token: admin.token, headers: withProof(proof) });
  expect(minted.status, minted.text).toBe(201);
  return minted.json.data.api_key;
}

const verify = (token: string, code: string, purpose?: string) => call(stack, 'POST', VERIFY, { token, body: { code, ...(purpose && { purpose }) } });
const withProof = (mfaToken: string) => ({ 'x-mfa-token': mfaToken });

/** A fresh step-up proof from one of the user's recovery codes, for `purpose` (default sign-in). */
async function proofFrom(token: string, recoveryCode: string, purpose?: string): Promise<string> {
  const used = await call(stack, 'POST', RECOVERY, { token, body: { code: recoveryCode, ...(purpose && { purpose }) } });
  expect(used.status, used.text).toBe(200);
  return used.json.data.mfa_token;
}

describe('verify and the step-up proof over HTTP', () => {
  it('verify answers an ES256 token that jose verifies against /.well-known/jwks.json, fetched without credentials', async () => {
    const now = Date.now();
    const user = await enrolled(now - STEP_MS);
    const res = await verify(user.token, codeAt(user.secret, now));
    expect(res.status, res.text).toBe(200);
    const { mfa_token, expires_at, factor_id } = res.json.data;
    expect(typeof factor_id).toBe('string');

    const jwks = await call(stack, 'GET', '/.well-known/jwks.json');
    expect(jwks.status).toBe(200);
    expect(jwks.json.keys).toEqual([expect.objectContaining({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig', kid: expect.any(String) })]);
    expect(jwks.json.keys[0]).not.toHaveProperty('d');

    const { payload, protectedHeader } = await jwtVerify(mfa_token, createRemoteJWKSet(new URL(`${stack.baseUrl}/.well-known/jwks.json`)), { issuer: stack.baseUrl, algorithms: ['ES256'] });
    expect(protectedHeader.kid).toBe(jwks.json.keys[0].kid);
    expect(payload).toMatchObject({ sub: user.sub, account_id: user.sub, amr: ['otp'] });
    expect(payload.exp! - payload.iat!).toBeLessThanOrEqual(600);
    expect(new Date(expires_at).getTime()).toBe(payload.exp! * 1000);
    expect(payload.auth_time).toBe(payload.iat);
  });

  it('refuses the same code twice, the enrolment code, and a code from before the enrolment step (401 invalid_code)', async () => {
    const now = Date.now();
    const user = await enrolled(now);
    // The enrolment code itself, then one from the step before it: both within the clock window.
    for (const code of [codeAt(user.secret, now), codeAt(user.secret, now - STEP_MS)]) {
      const res = await verify(user.token, code);
      expect(res.status).toBe(401);
      expect(res.json).toEqual({ error: 'invalid_code', message: DEFAULT_MESSAGE.invalid_code });
    }
    const next = codeAt(user.secret, now + STEP_MS);
    expect((await verify(user.token, next)).status).toBe(200);
    const again = await verify(user.token, next);
    expect(again.status).toBe(401);
    expect(again.json).toEqual({ error: 'invalid_code', message: DEFAULT_MESSAGE.invalid_code });
  });

  it('of five concurrent requests with one code exactly one succeeds', async () => {
    const now = Date.now();
    const user = await enrolled(now - STEP_MS);
    const code = codeAt(user.secret, now);
    const results = await Promise.all(Array.from({ length: 5 }, () => verify(user.token, code)));
    expect(results.map((r) => r.status).sort()).toEqual([200, 401, 401, 401, 401]);
  });

  it('a recovery code answers a proof with amr ["recovery_code"]', async () => {
    const user = await enrolled(Date.now());
    const proof = await proofFrom(user.token, user.recoveryCodes[0]!);
    const { payload } = await jwtVerify(proof, createRemoteJWKSet(new URL(`${stack.baseUrl}/.well-known/jwks.json`)), { issuer: stack.baseUrl });
    expect(payload.amr).toEqual(['recovery_code']);
  });
});

describe('factors and recovery codes over HTTP', () => {
  it('adds a named second factor only with a fresh proof (else 409), lists both with their last use', async () => {
    const now = Date.now();
    const user = await enrolled(now - STEP_MS);
    const second = (await call(stack, 'POST', START, { token: user.token, headers: withProof(await proofFrom(user.token, user.recoveryCodes[0]!)) })).json.data.secret as string;
    const body = { code: codeAt(second, now), secret: second, name: 'Tablet' };
    expect((await call(stack, 'POST', CONFIRM, { token: user.token, body })).json).toEqual({ error: 'already_registered', message: expect.any(String) });
    const added = await call(stack, 'POST', CONFIRM, { token: user.token, body, headers: withProof(await proofFrom(user.token, user.recoveryCodes[1]!, 'add_factor')) });
    expect(added.status, added.text).toBe(200);
    expect(added.json.data).toEqual({ factor_id: expect.any(String), recovery_codes: [] });

    expect((await verify(user.token, codeAt(user.secret, now))).status).toBe(200);
    const listed = await call(stack, 'GET', FACTORS, { token: user.token });
    expect(listed.json.data.recovery_codes_remaining).toBe(8);
    expect(listed.json.data.factors.map((f: { name: string; type: string }) => [f.name, f.type])).toEqual([['Phone', 'totp'], ['Tablet', 'totp']]);
    expect(listed.json.data.factors[0].last_used_at).toEqual(expect.any(String));
    expect(listed.json.data.factors[1].last_used_at).toBeNull();
  });

  it('removal and regeneration without a fresh proof are 403 mfa_required; with one they succeed; the last factor takes the codes', async () => {
    const now = Date.now();
    const user = await enrolled(now - STEP_MS);
    const [factor] = (await call(stack, 'GET', FACTORS, { token: user.token })).json.data.factors;
    for (const [method, path] of [['DELETE', `${FACTORS}/${factor.id}`], ['POST', REGENERATE]] as const) {
      const res = await call(stack, method, path, { token: user.token });
      expect(res.status).toBe(403);
      expect(res.json).toEqual({ error: 'mfa_required', message: expect.any(String) });
    }
    const proof = (await verify(user.token, codeAt(user.secret, now), 'regenerate_recovery_codes')).json.data.mfa_token;
    const regenerated = await call(stack, 'POST', REGENERATE, { token: user.token, headers: withProof(proof) });
    expect(regenerated.status).toBe(200);
    const fresh: string[] = regenerated.json.data.recovery_codes;
    expect(fresh).toHaveLength(10);
    // Four of them over HTTP (the recovery budget allows five failures); the handler tests try all ten.
    for (const old of user.recoveryCodes.slice(0, 4)) expect((await call(stack, 'POST', RECOVERY, { token: user.token, body: { code: old } })).json).toEqual({ error: 'invalid_code', message: DEFAULT_MESSAGE.invalid_code });
    const removal = await proofFrom(user.token, fresh[0]!, 'remove_factor');

    expect((await call(stack, 'DELETE', `${FACTORS}/${factor.id}`, { token: user.token, headers: withProof(removal) })).status).toBe(204);
    expect((await call(stack, 'GET', FACTORS, { token: user.token })).json.data).toEqual({ factors: [], recovery_codes_remaining: 0 });
    expect((await call(stack, 'POST', RECOVERY, { token: user.token, body: { code: fresh[1] } })).json).toEqual({ error: 'invalid_code', message: DEFAULT_MESSAGE.invalid_code });
  });

  it("another user's factor is 404, and a proof of another user is not a proof", async () => {
    const alice = await enrolled(Date.now());
    const bob = await enrolled(Date.now());
    const [aliceFactor] = (await call(stack, 'GET', FACTORS, { token: alice.token })).json.data.factors;
    const bobsProof = await proofFrom(bob.token, bob.recoveryCodes[0]!, 'remove_factor');
    expect((await call(stack, 'DELETE', `${FACTORS}/${aliceFactor.id}`, { token: bob.token, headers: withProof(bobsProof) })).status).toBe(404);
    expect((await call(stack, 'DELETE', `${FACTORS}/${aliceFactor.id}`, { token: alice.token, headers: withProof(bobsProof) })).status).toBe(403);
    expect((await call(stack, 'GET', FACTORS, { token: alice.token })).json.data.factors).toHaveLength(1);
  });
});

describe('one attempt budget across operations', () => {
  it('the sixth failure on any of confirm, verify, removal and regeneration is 429 with Retry-After, while recovery still works', async () => {
    const now = Date.now();
    const user = await enrolled(now - STEP_MS);
    const proof = await proofFrom(user.token, user.recoveryCodes[0]!);
    const second = (await call(stack, 'POST', START, { token: user.token, headers: withProof(proof) })).json.data.secret as string;
    const [factor] = (await call(stack, 'GET', FACTORS, { token: user.token })).json.data.factors;
    const failures = [
      () => verify(user.token, wrongCode(user.secret)),
      () => call(stack, 'POST', CONFIRM, { token: user.token, body: { code: wrongCode(second), secret: second }, headers: withProof(proof) }),
      () => call(stack, 'DELETE', `${FACTORS}/${factor.id}`, { token: user.token, headers: withProof('not.a.proof') }),
      () => call(stack, 'POST', REGENERATE, { token: user.token, headers: withProof(`${proof}x`) }),
      () => verify(user.token, wrongCode(user.secret)),
    ];
    for (const fail of failures) expect((await fail()).status).toBeGreaterThanOrEqual(400);
    const sixth = await verify(user.token, codeAt(user.secret, now));
    expect(sixth.status).toBe(429);
    expect(Number(sixth.headers.get('retry-after'))).toBeGreaterThan(800);
    expect((await call(stack, 'DELETE', `${FACTORS}/${factor.id}`, { token: user.token, headers: withProof('not.a.proof') })).status).toBe(429);
    // The rescue path has a budget of its own, and a proof that holds is no guess: it passes while TOTP is locked.
    const rescued = await proofFrom(user.token, user.recoveryCodes[1]!, 'regenerate_recovery_codes');
    expect((await call(stack, 'POST', REGENERATE, { token: user.token, headers: withProof(rescued) })).status).toBe(200);
  });
});

describe('the budget escalates to a day (the stack\'s clock stepped)', () => {
  const MINUTE = 60_000;
  const HOUR = 60 * MINUTE;

  it('an attacker with the user\'s token gets 20 guesses a day: the 21st is 429 after the 15 minutes; recovery still rescues the user; a day later codes work again', async () => {
    const user = await enrolled(Date.now() - STEP_MS);
    try {
      // Four lock-outs of 15 minutes: five wrong codes at +0, +15, +30 and +45 minutes.
      for (let round = 0; round < 4; round++) {
        ahead.ms = round * 15 * MINUTE;
        for (let i = 0; i < 5; i++) {
          const res = await verify(user.token, wrongCode(user.secret, Date.now() + ahead.ms));
          expect(res.status, res.text).toBe(401);
        }
      }
      ahead.ms = HOUR; // the 15-minute window of the last five has passed
      const refused = await verify(user.token, codeAt(user.secret, Date.now() + ahead.ms));
      expect(refused.status).toBe(429);
      expect(refused.json).toEqual({ error: 'too_many_attempts', message: expect.any(String) });
      // Until the first of the 20 is a day old: 23 hours less the real time this test took.
      const retryAfter = Number(refused.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThan(22 * 3600);
      expect(retryAfter).toBeLessThanOrEqual(23 * 3600);

      // The rescue path is open, and its proof (no guess) works while TOTP is locked.
      const rescued = await proofFrom(user.token, user.recoveryCodes[0]!, 'regenerate_recovery_codes');
      const regenerated = await call(stack, 'POST', REGENERATE, { token: user.token, headers: withProof(rescued) });
      expect(regenerated.status, regenerated.text).toBe(200);

      ahead.ms = 24 * HOUR + MINUTE;
      const later = await verify(user.token, codeAt(user.secret, Date.now() + ahead.ms));
      expect(later.status, later.text).toBe(200);
    } finally {
      ahead.ms = 0;
    }
  });
});

describe('admin reset and the audit log over HTTP', () => {
  it("an admin key lists a user's factors (audited); only an administrator with a fresh proof resets them; another account's user is 404", async () => {
    const adminSub = `mfa-admin-${Date.now()}`;
    const admin = await enrolledAdmin(adminSub);
    const adminKey = await mintAdminKey(admin);
    const member = await enrolled(Date.now(), adminSub);
    const outsider = await enrolled(Date.now());
    const path = (sub: string) => `/accounts/users/${encodeURIComponent(sub)}/factors`;

    const listed = await call(stack, 'GET', path(member.sub), { apiKey: adminKey });
    expect(listed.status, listed.text).toBe(200);
    expect(listed.json.data.factors).toHaveLength(1);
    expect((await call(stack, 'GET', path(outsider.sub), { apiKey: adminKey })).status).toBe(404);
    // No API key reaches the reset, whatever its scope; nor a user's token.
    expect((await call(stack, 'DELETE', path(member.sub), { apiKey: adminKey })).status).toBe(401);
    expect((await call(stack, 'DELETE', path(member.sub), { token: member.token })).status).toBe(403);

    const reset = await call(stack, 'DELETE', path(member.sub), { token: admin.token, headers: withProof(await proofFrom(admin.token, admin.recoveryCodes[1]!, 'admin_reset')) });
    expect(reset.status, reset.text).toBe(204);
    expect((await call(stack, 'GET', FACTORS, { token: member.token })).json.data.factors).toEqual([]);
    const events = (await call(stack, 'GET', EVENTS, { token: member.token })).json.data.events;
    expect(events.slice(0, 2)).toMatchObject([{ type: 'admin_reset', actor: adminSub }, { type: 'factors_listed_by_admin', actor: expect.stringMatching(/^apikey:/) }]);
  });

  it('lists each step newest first, paged, with source and user agent, and never a code, secret or token', async () => {
    const now = Date.now();
    const user = await enrolled(now - STEP_MS);
    const headers = { 'user-agent': 'mfa-e2e/1.0' };
    const wrong = wrongCode(user.secret);
    await call(stack, 'POST', VERIFY, { token: user.token, body: { code: wrong }, headers });
    const good = codeAt(user.secret, now);
    const proof = (await call(stack, 'POST', VERIFY, { token: user.token, body: { code: good, purpose: 'regenerate_recovery_codes' }, headers })).json.data.mfa_token as string;
    const removal = (await call(stack, 'POST', RECOVERY, { token: user.token, body: { code: user.recoveryCodes[0], purpose: 'remove_factor' } })).json.data.mfa_token as string;
    const regenerated = (await call(stack, 'POST', REGENERATE, { token: user.token, headers: { ...headers, ...withProof(proof) } })).json.data.recovery_codes as string[];
    const [factor] = (await call(stack, 'GET', FACTORS, { token: user.token })).json.data.factors;
    await call(stack, 'DELETE', `${FACTORS}/${factor.id}`, { token: user.token, headers: withProof(removal) });

    const first = await call(stack, 'GET', `${EVENTS}?limit=3`, { token: user.token });
    expect(first.status).toBe(200);
    const rest = await call(stack, 'GET', `${EVENTS}?cursor=${first.json.data.next_cursor}`, { token: user.token });
    const events = [...first.json.data.events, ...rest.json.data.events];
    expect(events.map((e: { type: string }) => e.type)).toEqual([
      'factor_removed', 'recovery_codes_regenerated', 'recovery_code_used', 'verification_succeeded', 'verification_failed', 'factor_enrolled',
    ]);
    expect(events.find((e: { type: string }) => e.type === 'verification_failed')).toMatchObject({ source_ip: '127.0.0.1', user_agent: 'mfa-e2e/1.0' });
    expect(events[0].factor_id).toBe(factor.id);
    const text = first.text + rest.text;
    for (const secretThing of [user.secret, wrong, good, proof, removal, ...user.recoveryCodes, ...regenerated]) expect(text).not.toContain(secretThing);
  });
});
