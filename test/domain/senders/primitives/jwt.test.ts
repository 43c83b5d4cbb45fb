import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkJwtSecret, verifyJwt, type JwtParams } from '../../../../functions/domain/webhooks/senders/primitives/jwt.js';
import { googleJwks, googleKey, signGooglePush, signNetlify } from '../../../support/jwt-signers.js';
import { arbitraryContext, contextFor, memoryFetcher, NOW } from '../../../support/verify-context.js';

const HMAC: JwtParams = { key: 'secret', header: 'x-webhook-signature', algorithms: ['HS256'], issuers: ['netlify'], bodySha256Claim: 'sha256' };
const JWKS_URL = 'https://www.googleapis.com/oauth2/v3/certs';
const JWKS: JwtParams = {
  key: 'jwks',
  jwksUrl: JWKS_URL,
  header: 'authorization',
  scheme: 'Bearer',
  algorithms: ['RS256'],
  issuers: ['accounts.google.com', 'https://accounts.google.com'],
  requiredClaims: ['exp', 'iat'],
  clockToleranceSeconds: 300,
};
const BODY = '{"id":"5ebc34bf4fea0b01f02efa3a","state":"ready"}';
const SECRET = 'a-netlify-jws-secret';
const AUDIENCE = 'https://hooks.example.com/webhooks/wh_1';
const EMAIL = 'push@my-project.iam.gserviceaccount.com';
const PASTED = `${AUDIENCE} ${EMAIL}`;

describe('verifyJwt(params, ctx) with an HMAC secret', () => {
  const verify = (headers: Record<string, string>, secrets = [SECRET], body = BODY) => verifyJwt(HMAC, contextFor({ body, headers, secrets }));

  it('returns true for an HS256 token with the issuer and the body hash', async () => {
    expect(await verify(signNetlify(BODY, SECRET))).toBe(true);
  });

  it('returns false for a changed body (the sha256 claim no longer matches)', async () => {
    expect(await verify(signNetlify(BODY, SECRET), [SECRET], `${BODY} `)).toBe(false);
  });

  it('returns false for another secret, and true for either of two (rotation)', async () => {
    expect(await verify(signNetlify(BODY, SECRET), ['another secret'])).toBe(false);
    expect(await verify(signNetlify(BODY, SECRET), ['another secret', SECRET])).toBe(true);
  });

  it('returns false for another issuer, a missing body hash, or an expired token', async () => {
    expect(await verify(signNetlify(BODY, SECRET, { iss: 'someone-else' }))).toBe(false);
    expect(await verify(signNetlify(BODY, SECRET, { sha256: undefined }))).toBe(false);
    expect(await verify(signNetlify(BODY, SECRET, { exp: NOW - 1 }))).toBe(false);
  });

  it('returns false for alg none and for an algorithm the row does not allow', async () => {
    const [, payload] = signNetlify(BODY, SECRET)['X-Webhook-Signature']!.split('.');
    const none = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${payload}.`;
    expect(await verify({ 'X-Webhook-Signature': none })).toBe(false);
    const header = Buffer.from('{"alg":"HS512"}').toString('base64url');
    const hs512 = `${header}.${payload}.${createHmac('sha512', SECRET).update(`${header}.${payload}`).digest('base64url')}`;
    expect(await verify({ 'X-Webhook-Signature': hs512 })).toBe(false);
  });

  it('returns false for a missing header, a malformed token, and an empty secret', async () => {
    expect(await verify({})).toBe(false);
    for (const garbage of ['x', 'a.b.c', '...', 'e30.e30.', 'ey'.repeat(10_000)]) expect(await verify({ 'X-Webhook-Signature': garbage })).toBe(false);
    const unkeyed = { 'X-Webhook-Signature': signNetlify(BODY, '')['X-Webhook-Signature']! };
    expect(await verify(unkeyed, [''])).toBe(false);
  });

  it('never throws on arbitrary headers, bodies and secrets', async () => {
    await fc.assert(
      fc.asyncProperty(arbitraryContext([HMAC.header]), async (ctx) => {
        expect(typeof (await verifyJwt(HMAC, ctx))).toBe('boolean');
      }),
      { numRuns: 200 },
    );
  });
});

describe("verifyJwt(params, ctx) with a sender's JWKS", () => {
  const key = googleKey('key-1');
  const next = googleKey('key-2');
  const stranger = googleKey('key-1'); // same kid, another key
  const keys = () => memoryFetcher({ [JWKS_URL]: googleJwks(key, next) });
  const claims = { aud: AUDIENCE, email: EMAIL, iat: NOW - 10 };
  const verify = (headers: Record<string, string>, secrets = [PASTED], fetcher = keys()) => verifyJwt(JWKS, contextFor({ body: BODY, headers, secrets, keys: fetcher }));

  it('returns true for a token by a listed key with the pasted audience and email', async () => {
    expect(await verify(await signGooglePush(key, claims))).toBe(true);
    expect(await verify(await signGooglePush(next, { ...claims, iss: 'accounts.google.com' }))).toBe(true);
  });

  it('returns false for a key not in the set, or the right kid with the wrong key', async () => {
    expect(await verify(await signGooglePush(googleKey('key-9'), claims))).toBe(false);
    expect(await verify(await signGooglePush(stranger, claims))).toBe(false);
  });

  it('returns false for another audience, another email, or an unverified email', async () => {
    expect(await verify(await signGooglePush(key, { ...claims, aud: 'https://elsewhere.example' }))).toBe(false);
    expect(await verify(await signGooglePush(key, { ...claims, email: 'attacker@evil.iam.gserviceaccount.com' }))).toBe(false);
    expect(await verify(await signGooglePush(key, { ...claims, email_verified: false }))).toBe(false);
  });

  it('does not mix the audience of one pasted pair with the email of another', async () => {
    const token = await signGooglePush(key, { ...claims, email: 'other@p.iam.gserviceaccount.com' });
    expect(await verify(token, [PASTED, `https://elsewhere.example other@p.iam.gserviceaccount.com`])).toBe(false);
    expect(await verify(token, [PASTED, `${AUDIENCE} other@p.iam.gserviceaccount.com`])).toBe(true);
  });

  it('returns false for an expired token beyond the tolerance, and for another issuer', async () => {
    expect(await verify(await signGooglePush(key, { ...claims, iat: NOW - 4000, exp: NOW - 301 }))).toBe(false);
    expect(await verify(await signGooglePush(key, { ...claims, iat: NOW - 4000, exp: NOW - 299 }))).toBe(true);
    expect(await verify(await signGooglePush(key, { ...claims, iss: 'https://evil.example' }))).toBe(false);
  });

  it('returns false for a header without the Bearer scheme, or no header', async () => {
    const { Authorization } = await signGooglePush(key, claims);
    expect(await verify({ Authorization: Authorization!.replace('Bearer ', '') })).toBe(false);
    expect(await verify({ Authorization: Authorization!.replace('Bearer ', 'Basic ') })).toBe(false);
    expect(await verify({ Authorization: Authorization!.replace('Bearer ', 'bearer ') })).toBe(true);
    expect(await verify({})).toBe(false);
  });

  it('returns false, without fetching, when no pasted value is an audience and an email', async () => {
    const fetcher = keys();
    expect(await verify(await signGooglePush(key, claims), [AUDIENCE], fetcher)).toBe(false);
    expect(fetcher.fetched).toEqual([]);
  });

  it('returns false when the key set cannot be fetched or is not a JWKS', async () => {
    const token = await signGooglePush(key, claims);
    expect(await verify(token, [PASTED], memoryFetcher({}))).toBe(false);
    for (const text of ['', 'not json', '{"keys":"no"}', '{"keys":[{"kty":"RSA"}]}']) {
      expect(await verify(token, [PASTED], memoryFetcher({ [JWKS_URL]: text }))).toBe(false);
    }
  });

  it('never throws on arbitrary headers, bodies and secrets', async () => {
    await fc.assert(
      fc.asyncProperty(arbitraryContext([JWKS.header], keys()), async (ctx) => {
        expect(typeof (await verifyJwt(JWKS, ctx))).toBe('boolean');
      }),
      { numRuns: 200 },
    );
  });
});

describe('checkJwtSecret(secret, params)', () => {
  it('wants a non-empty secret as shown for an HMAC row', () => {
    expect(checkJwtSecret(SECRET, HMAC)).toBeUndefined();
    expect(checkJwtSecret('', HMAC)).toMatch(/empty/);
    expect(checkJwtSecret(` ${SECRET}`, HMAC)).toMatch(/spaces/);
  });

  it('wants an audience and an email for a JWKS row', () => {
    expect(checkJwtSecret(PASTED, JWKS)).toBeUndefined();
    expect(checkJwtSecret(AUDIENCE, JWKS)).toMatch(/audience, a space, and its service account email/);
  });
});
