import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeSignature } from '../../functions/domain/webhooks/signatures/hmac.js';

const digest = createHmac('sha256', 'k').update('body').digest();

describe('decodeSignature', () => {
  it('decodes well-formed hex and base64 to the signed bytes', () => {
    expect(decodeSignature(digest.toString('hex'), 'hex')).toEqual(digest);
    expect(decodeSignature(digest.toString('hex').toUpperCase(), 'hex')).toEqual(digest);
    expect(decodeSignature(digest.toString('base64'), 'base64')).toEqual(digest);
  });

  it.each([
    ['odd-length hex', digest.toString('hex').slice(1)],
    ['hex with a non-hex character', `${digest.toString('hex').slice(0, -1)}g`],
    ['hex with a space inside', `${digest.toString('hex').slice(0, 10)} ${digest.toString('hex').slice(11)}`],
  ])('refuses %s', (_name, text) => {
    expect(decodeSignature(text, 'hex')).toBeUndefined();
  });

  it.each([
    ['base64 without its padding', digest.toString('base64').replace(/=+$/, '')],
    ['base64 with a character that is not base64', `${digest.toString('base64').slice(0, 5)}*${digest.toString('base64').slice(6)}`],
    ['base64 with a space inside', `${digest.toString('base64').slice(0, 5)} ${digest.toString('base64').slice(6)}`],
    ['base64 with padding in the middle', `AB==${digest.toString('base64').slice(4)}`],
    ['an empty string', ''],
  ])('refuses %s', (_name, text) => {
    expect(decodeSignature(text, 'base64')).toBeUndefined();
  });

  it('accepts only texts that are exactly the encoding of what they decode to (up to letter case and base64url letters)', () => {
    fc.assert(fc.property(fc.string({ maxLength: 100 }), fc.constantFrom('hex' as const, 'base64' as const), (text, encoding) => {
      const bytes = decodeSignature(text, encoding);
      if (!bytes) return;
      const canonical = bytes.toString(encoding);
      const normalise = (s: string) => (encoding === 'hex' ? s.toLowerCase() : s.replace(/-/g, '+').replace(/_/g, '/'));
      // Base64 may carry non-zero bits in its last character's unused positions; compare the bytes then.
      expect(encoding === 'hex' ? normalise(text) : Buffer.from(normalise(text), 'base64')).toEqual(encoding === 'hex' ? canonical : bytes);
      expect(text.length).toBe(canonical.length);
    }), { numRuns: 2000 });
  });
});
