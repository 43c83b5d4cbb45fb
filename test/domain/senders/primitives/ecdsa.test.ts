import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkEcdsaP256Secret, verifyEcdsaP256, type EcdsaP256Params } from '../../../../functions/domain/webhooks/senders/primitives/ecdsa.js';
import { arbitraryContext, contextFor, NOW } from '../../../support/verify-context.js';

const PARAMS: EcdsaP256Params = {
  signatureHeader: 'x-twilio-email-event-webhook-signature',
  signatureEncoding: 'base64',
  timestampHeader: 'x-twilio-email-event-webhook-timestamp',
  toleranceSeconds: 300,
};
const BODY = '[{"email":"a@example.com","event":"delivered"}]\r\n';

function keyPair(namedCurve = 'prime256v1') {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve });
  return { privateKey, base64: publicKey.export({ format: 'der', type: 'spki' }).toString('base64'), pem: publicKey.export({ format: 'pem', type: 'spki' }).toString() };
}

function signed(privateKey: KeyObject, body = BODY, timestamp = String(NOW)) {
  return {
    'x-twilio-email-event-webhook-signature': sign('sha256', Buffer.from(timestamp + body), privateKey).toString('base64'),
    'x-twilio-email-event-webhook-timestamp': timestamp,
  };
}

describe('verifyEcdsaP256(params, ctx)', () => {
  const key = keyPair();
  const other = keyPair();

  it('returns true for a DER signature over the timestamp and the raw body', () => {
    expect(verifyEcdsaP256(PARAMS, contextFor({ body: BODY, headers: signed(key.privateKey), secrets: [key.base64] }))).toBe(true);
  });

  it('accepts the key pasted as PEM too', () => {
    expect(verifyEcdsaP256(PARAMS, contextFor({ body: BODY, headers: signed(key.privateKey), secrets: [key.pem] }))).toBe(true);
  });

  it('returns false for a changed body', () => {
    expect(verifyEcdsaP256(PARAMS, contextFor({ body: BODY.replace('delivered', 'bounce'), headers: signed(key.privateKey), secrets: [key.base64] }))).toBe(false);
  });

  it('returns false for another key', () => {
    expect(verifyEcdsaP256(PARAMS, contextFor({ body: BODY, headers: signed(key.privateKey), secrets: [other.base64] }))).toBe(false);
  });

  it('returns false when the signature or the timestamp header is missing', () => {
    const headers = signed(key.privateKey);
    for (const name of Object.keys(headers)) {
      const partial: Record<string, string> = { ...headers };
      delete partial[name];
      expect(verifyEcdsaP256(PARAMS, contextFor({ body: BODY, headers: partial, secrets: [key.base64] }))).toBe(false);
    }
  });

  it('returns false for a stale timestamp', () => {
    const headers = signed(key.privateKey, BODY, String(NOW - 301));
    expect(verifyEcdsaP256(PARAMS, contextFor({ body: BODY, headers, secrets: [key.base64] }))).toBe(false);
  });

  it('returns false for a garbage signature: not base64, not DER, r||s instead of DER, empty', () => {
    const rs = sign('sha256', Buffer.from(String(NOW) + BODY), { key: key.privateKey, dsaEncoding: 'ieee-p1363' }).toString('base64');
    for (const garbage of ['not base64!', Buffer.from('hello').toString('base64'), rs, ' ', 'A'.repeat(10_000)]) {
      const headers = { ...signed(key.privateKey), 'x-twilio-email-event-webhook-signature': garbage };
      expect(verifyEcdsaP256(PARAMS, contextFor({ body: BODY, headers, secrets: [key.base64] }))).toBe(false);
    }
  });

  it('returns false, without throwing, for a key that is truncated, on another curve, RSA, or not base64', () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({ format: 'der', type: 'spki' }).toString('base64');
    for (const bad of [key.base64.slice(0, 40), keyPair('secp384r1').base64, rsa, 'MFkw!!', '']) {
      expect(verifyEcdsaP256(PARAMS, contextFor({ body: BODY, headers: signed(key.privateKey), secrets: [bad] }))).toBe(false);
    }
  });

  it('accepts a signature by any of several keys (rotation)', () => {
    expect(verifyEcdsaP256(PARAMS, contextFor({ body: BODY, headers: signed(key.privateKey), secrets: [other.base64, key.base64] }))).toBe(true);
  });

  it('never throws on arbitrary headers, bodies and keys', () => {
    fc.assert(
      fc.property(arbitraryContext([PARAMS.signatureHeader, PARAMS.timestampHeader]), (ctx) => {
        expect(typeof verifyEcdsaP256(PARAMS, ctx)).toBe('boolean');
      }),
      { numRuns: 300 },
    );
  });
});

describe('checkEcdsaP256Secret(secret)', () => {
  it('accepts a base64 DER P-256 public key', () => {
    expect(checkEcdsaP256Secret(keyPair().base64)).toBeUndefined();
  });

  it('names the expected form for anything else', () => {
    for (const bad of ['', 'MFkw', keyPair('secp384r1').base64]) expect(checkEcdsaP256Secret(bad)).toMatch(/base64 DER P-256 public key/);
  });
});
