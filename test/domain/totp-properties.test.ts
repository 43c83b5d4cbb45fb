import fc from 'fast-check';
import { ScureBase32Plugin } from 'otplib';
import { describe, expect, it } from 'vitest';
import { AppError } from '../../functions/shared/errors.js';
import { normalizeTotpSecret, verifyTotpCode } from '../../functions/domain/totp/index.js';
import { totpCodeAt } from '../support/totp.js';

// otplib's plugin (scure) is the reference encoder, independent of the domain's own.
const base32 = new ScureBase32Plugin();

/** Arbitrary text near the base32 alphabet, so valid and almost-valid inputs are both reached. */
const base32ish = fc.string({ unit: fc.constantFrom(...'ABCXYZabcxyz234567=01 8\t\u0131'), maxLength: 120 });

/** A base32 spelling a user might type: random case, random spaces, padding or not. */
const typedSpelling = (canonical: string) =>
  fc
    .tuple(
      fc.array(fc.boolean(), { minLength: canonical.length, maxLength: canonical.length }),
      fc.array(fc.constantFrom('', '', '', ' ', '  '), { minLength: canonical.length, maxLength: canonical.length }),
      fc.boolean(),
    )
    .map(([lower, spaces, padded]) => {
      const body = [...canonical].map((char, i) => (lower[i] ? char.toLowerCase() : char) + spaces[i]).join('');
      return padded ? body + '='.repeat((8 - (canonical.length % 8)) % 8) : body;
    });

describe('normalizeTotpSecret properties', () => {
  it.each([
    ['any unicode string', fc.string({ unit: 'binary', maxLength: 200 })],
    ['strings near the base32 alphabet', base32ish],
  ])('throws nothing but AppError validation_error for %s', (_, strings) => {
    fc.assert(
      fc.property(strings, (input) => {
        try {
          normalizeTotpSecret(input);
        } catch (error) {
          expect(error).toBeInstanceOf(AppError);
          expect((error as AppError).code).toBe('validation_error');
        }
      }),
    );
  });

  it('returns only canonical secrets of 16–64 bytes', () => {
    fc.assert(
      fc.property(base32ish, (input) => {
        let secret: string;
        try {
          secret = normalizeTotpSecret(input);
        } catch {
          return;
        }
        expect(secret).toMatch(/^[A-Z2-7]+$/);
        const bytes = base32.decode(secret);
        expect(bytes.length).toBeGreaterThanOrEqual(16);
        expect(bytes.length).toBeLessThanOrEqual(64);
        expect(base32.encode(bytes)).toBe(secret);
      }),
    );
  });

  it('normalises any 16–64 bytes, however typed, to their canonical encoding, which decodes back', () => {
    const typed = fc
      .uint8Array({ minLength: 16, maxLength: 64 })
      .chain((bytes) => typedSpelling(base32.encode(bytes)).map((input) => ({ bytes, input })));
    fc.assert(
      fc.property(typed, ({ bytes, input }) => {
        const secret = normalizeTotpSecret(input);
        expect(secret).toBe(base32.encode(bytes));
        expect(base32.decode(secret)).toEqual(bytes);
        expect(normalizeTotpSecret(secret)).toBe(secret);
      }),
    );
  });
});

describe('verifyTotpCode properties', () => {
  it('accepts a code generated at t from t − 29 s to t + 29 s, matching the step of t', async () => {
    const secrets = fc.uint8Array({ minLength: 16, maxLength: 64 }).map((bytes) => base32.encode(bytes));
    const t = fc.integer({ min: 30_000, max: 4_102_444_800_000 }); // up to 2100
    const offset = fc.integer({ min: -29_000, max: 29_000 });
    await fc.assert(
      fc.asyncProperty(secrets, t, offset, async (secret, generatedAtMs, offsetMs) => {
        const code = totpCodeAt(secret, generatedAtMs);
        // A neighbouring step may show the same code (1 in 10⁶); otplib then reports the earlier step.
        const neighbours = [-30_000, 30_000].map((stepMs) => totpCodeAt(secret, generatedAtMs + stepMs));
        fc.pre(!neighbours.includes(code));
        const result = await verifyTotpCode({ secret, code, nowMs: generatedAtMs + offsetMs });
        expect(result).toEqual({ valid: true, timeStep: Math.floor(generatedAtMs / 30_000) });
      }),
    );
  });
});
