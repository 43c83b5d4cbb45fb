import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkEd25519Secret, verifyEd25519, type Ed25519Params } from '../../../../functions/domain/webhooks/senders/primitives/ed25519.js';
import { arbitraryContext, contextFor, NOW } from '../../../support/verify-context.js';

const PARAMS: Ed25519Params = {
  signatureHeader: 'x-signature-ed25519',
  signatureEncoding: 'hex',
  timestampHeader: 'x-signature-timestamp',
  toleranceSeconds: 300,
};
const BODY = '{"type":1,"id":"123"}';

function keyPair() {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  // The last 32 bytes of the SPKI DER are the raw key, shown in hex as Discord shows it.
  const hex = publicKey.export({ format: 'der', type: 'spki' }).subarray(-32).toString('hex');
  return { privateKey, hex };
}

function signed(privateKey: KeyObject, body = BODY, timestamp = String(NOW)) {
  return {
    'x-signature-ed25519': sign(null, Buffer.from(timestamp + body), privateKey).toString('hex'),
    'x-signature-timestamp': timestamp,
  };
}

describe('verifyEd25519(params, ctx)', () => {
  const key = keyPair();
  const other = keyPair();

  it('returns true for a signature over the timestamp and the raw body', () => {
    expect(verifyEd25519(PARAMS, contextFor({ body: BODY, headers: signed(key.privateKey), secrets: [key.hex] }))).toBe(true);
  });

  it('accepts the key in upper-case hex or with surrounding spaces, as pasted', () => {
    expect(verifyEd25519(PARAMS, contextFor({ body: BODY, headers: signed(key.privateKey), secrets: [` ${key.hex.toUpperCase()} `] }))).toBe(true);
  });

  it('returns false for a changed body', () => {
    expect(verifyEd25519(PARAMS, contextFor({ body: BODY + ' ', headers: signed(key.privateKey), secrets: [key.hex] }))).toBe(false);
  });

  it('returns false for a changed timestamp (it is signed)', () => {
    const headers = { ...signed(key.privateKey), 'x-signature-timestamp': String(NOW + 1) };
    expect(verifyEd25519(PARAMS, contextFor({ body: BODY, headers, secrets: [key.hex] }))).toBe(false);
  });

  it('returns false for another key', () => {
    expect(verifyEd25519(PARAMS, contextFor({ body: BODY, headers: signed(key.privateKey), secrets: [other.hex] }))).toBe(false);
  });

  it('returns false when the signature or the timestamp header is missing', () => {
    const { 'x-signature-ed25519': signature, 'x-signature-timestamp': timestamp } = signed(key.privateKey);
    expect(verifyEd25519(PARAMS, contextFor({ body: BODY, headers: { 'x-signature-timestamp': timestamp }, secrets: [key.hex] }))).toBe(false);
    expect(verifyEd25519(PARAMS, contextFor({ body: BODY, headers: { 'x-signature-ed25519': signature }, secrets: [key.hex] }))).toBe(false);
  });

  it('returns false for a timestamp outside the tolerance, and true without one', () => {
    const stale = String(NOW - PARAMS.toleranceSeconds! - 1);
    const headers = signed(key.privateKey, BODY, stale);
    expect(verifyEd25519(PARAMS, contextFor({ body: BODY, headers, secrets: [key.hex] }))).toBe(false);
    const { toleranceSeconds: _, ...noTolerance } = PARAMS;
    expect(verifyEd25519(noTolerance, contextFor({ body: BODY, headers, secrets: [key.hex] }))).toBe(true);
  });

  it('returns false for a garbage signature: not hex, a byte short, a byte long, empty', () => {
    const good = signed(key.privateKey)['x-signature-ed25519'];
    for (const garbage of ['zz'.repeat(64), good.slice(2), `${good}00`, ' ', 'x'.repeat(10_000)]) {
      const headers = { ...signed(key.privateKey), 'x-signature-ed25519': garbage };
      expect(verifyEd25519(PARAMS, contextFor({ body: BODY, headers, secrets: [key.hex] }))).toBe(false);
    }
  });

  it('returns false, without throwing, for a key of the wrong length or not hex', () => {
    for (const bad of [key.hex.slice(2), `${key.hex}00`, 'g'.repeat(64), '', 'MCowBQYDK2VwAyEA']) {
      expect(verifyEd25519(PARAMS, contextFor({ body: BODY, headers: signed(key.privateKey), secrets: [bad] }))).toBe(false);
    }
  });

  it('accepts a signature by any of several keys (rotation)', () => {
    const headers = signed(key.privateKey);
    expect(verifyEd25519(PARAMS, contextFor({ body: BODY, headers, secrets: [other.hex, key.hex] }))).toBe(true);
    expect(verifyEd25519(PARAMS, contextFor({ body: BODY, headers, secrets: ['not a key', key.hex] }))).toBe(true);
  });

  it('never throws on arbitrary headers, bodies and keys', () => {
    fc.assert(
      fc.property(arbitraryContext([PARAMS.signatureHeader, PARAMS.timestampHeader]), (ctx) => {
        expect(typeof verifyEd25519(PARAMS, ctx)).toBe('boolean');
      }),
      { numRuns: 300 },
    );
  });
});

describe('checkEd25519Secret(secret)', () => {
  it('accepts 64 hex characters that are a public key', () => {
    expect(checkEd25519Secret(keyPair().hex)).toBeUndefined();
  });

  it('names the expected form for anything else', () => {
    for (const bad of ['', 'abc', 'g'.repeat(64), 'a'.repeat(66)]) expect(checkEd25519Secret(bad)).toMatch(/64 hex characters/);
  });
});
