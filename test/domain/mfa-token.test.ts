import { generateKeyPairSync, sign, verify } from 'node:crypto';
import { createLocalJWKSet, jwtVerify } from 'jose';
import { describe, expect, it } from 'vitest';
import { derToJoseSignature } from '../../functions/adapters/aws/ecdsa-signature.js';
import { generateLocalSigningKey, LocalTokenSigner } from '../../functions/adapters/local-token-signer.js';
import { isFreshMfaToken, issueMfaToken, readFreshMfaToken } from '../../functions/domain/accounts/mfa-token.js';

const NOW = 1_750_000_000_000;
const ISSUER = 'https://gateway.example';
const AUDIENCE = 'app-client-1';
const issue = (signer: LocalTokenSigner, nowMs = NOW) =>
  issueMfaToken(signer, { issuer: ISSUER, audience: AUDIENCE, subject: 'alice', accountId: 'acct-1', method: 'otp', purpose: 'sign_in', jti: 'jti-1', nowMs });

describe('derToJoseSignature', () => {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });

  it('turns 200 DER signatures (as KMS returns them) into r || s that verify as JOSE signatures', () => {
    for (let i = 0; i < 200; i++) {
      const data = Buffer.from(`message ${i}`);
      const raw = derToJoseSignature(sign('sha256', data, { key: privateKey, dsaEncoding: 'der' }));
      expect(raw).toHaveLength(64);
      expect(verify('sha256', data, { key: publicKey, dsaEncoding: 'ieee-p1363' }, raw)).toBe(true);
    }
  });

  it('pads a short integer and drops the sign byte of a long one', () => {
    // r = 0x01 (one octet), s = 0x80 followed by 31 octets (a leading 0x00 in DER).
    const s = Buffer.concat([Buffer.from([0x80]), Buffer.alloc(31, 0x11)]);
    const der = Buffer.concat([Buffer.from([0x30, 3 + 35, 0x02, 0x01, 0x01, 0x02, 0x21, 0x00]), s]);
    const raw = derToJoseSignature(der);
    expect(raw.subarray(0, 32)).toEqual(Buffer.concat([Buffer.alloc(31), Buffer.from([1])]));
    expect(raw.subarray(32)).toEqual(s);
  });

  it.each([[Buffer.from([])], [Buffer.from([0x30, 0x02, 0x02, 0x00])], [Buffer.from([0x31, 0x06, 0x02, 0x01, 0x01, 0x02, 0x01, 0x01])]])('refuses %j with a TypeError', (der) => {
    expect(() => derToJoseSignature(der)).toThrow(TypeError);
  });
});

describe('step-up proof', () => {
  it('is an ES256 JWS with the claims other services need, verified by jose against the JWKS', async () => {
    const signer = new LocalTokenSigner([generateLocalSigningKey()]);
    const { token } = await issue(signer);
    const { payload, protectedHeader } = await jwtVerify(token, createLocalJWKSet({ keys: await signer.publicKeys() }), { issuer: ISSUER, currentDate: new Date(NOW) });
    expect(protectedHeader).toEqual({ alg: 'ES256', typ: 'JWT', kid: (await signer.publicKeys())[0]!.kid });
    expect(payload).toEqual({
      iss: ISSUER, aud: AUDIENCE, sub: 'alice', account_id: 'acct-1', amr: ['otp'], auth_time: NOW / 1000, iat: NOW / 1000, exp: NOW / 1000 + 600,
      jti: 'jti-1', purpose: 'sign_in',
    });
  });

  it('is fresh for 10 minutes and then not', async () => {
    const signer = new LocalTokenSigner([generateLocalSigningKey()]);
    const { token } = await issue(signer);
    const keys = await signer.publicKeys();
    const check = (nowMs: number, subject = 'alice') => isFreshMfaToken(token, { keys, issuer: ISSUER, audience: AUDIENCE, subject, nowMs });
    expect(await check(NOW + 599_000)).toBe(true);
    expect(await check(NOW + 600_000)).toBe(false);
    expect(await check(NOW, 'bob')).toBe(false);
  });

  it('is not a proof for another app (aud), and a proof from before purposes (no jti, no purpose) is none', async () => {
    const signer = new LocalTokenSigner([generateLocalSigningKey()]);
    const keys = await signer.publicKeys();
    const { token } = await issue(signer);
    expect(await isFreshMfaToken(token, { keys, issuer: ISSUER, audience: 'another-app', subject: 'alice', nowMs: NOW })).toBe(false);
    expect(await readFreshMfaToken(token, { keys, issuer: ISSUER, audience: AUDIENCE, subject: 'alice', nowMs: NOW })).toEqual({ jti: 'jti-1', exp: NOW / 1000 + 600, purpose: 'sign_in' });
    // As proofs were signed before: no aud, jti nor purpose.
    const now = NOW / 1000;
    const legacyClaims = { iss: ISSUER, sub: 'alice', account_id: 'acct-1', amr: ['otp'], auth_time: now, iat: now, exp: now + 600 };
    const input = `${Buffer.from(JSON.stringify({ alg: 'ES256', typ: 'JWT', kid: keys[0]!.kid })).toString('base64url')}.${Buffer.from(JSON.stringify(legacyClaims)).toString('base64url')}`;
    const legacy = `${input}.${Buffer.from(await signer.sign(keys[0]!.kid, Buffer.from(input))).toString('base64url')}`;
    expect(await readFreshMfaToken(legacy, { keys, issuer: ISSUER, audience: ISSUER, subject: 'alice', nowMs: NOW })).toBeUndefined();
  });

  it('after a rotation, a proof of the previous key still verifies while new ones use the new key', async () => {
    const [oldKey, newKey] = [generateLocalSigningKey(), generateLocalSigningKey()];
    const before = new LocalTokenSigner([oldKey]);
    const after = new LocalTokenSigner([newKey, oldKey]);
    const { token: old } = await issue(before);
    const keys = await after.publicKeys();
    expect(keys.map((k) => k.kid)).toEqual([(await new LocalTokenSigner([newKey]).publicKeys())[0]!.kid, (await before.publicKeys())[0]!.kid]);
    expect(await isFreshMfaToken(old, { keys, issuer: ISSUER, audience: AUDIENCE, subject: 'alice', nowMs: NOW })).toBe(true);
    const { token: fresh } = await issue(after);
    expect(JSON.parse(Buffer.from(fresh.split('.')[0]!, 'base64url').toString()).kid).toBe(keys[0]!.kid);
    expect(await isFreshMfaToken(fresh, { keys: await before.publicKeys(), issuer: ISSUER, audience: AUDIENCE, subject: 'alice', nowMs: NOW })).toBe(false);
  });
});
