import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  RECOVERY_CODE_COUNT,
  generateRecoveryCodes,
  hashRecoveryCode,
  normalizeRecoveryCode,
} from '../../functions/domain/totp/index.js';

const CODE_FORMAT = /^[0-9abcdefghjkmnpqrstvwxyz]{5}-[0-9abcdefghjkmnpqrstvwxyz]{5}$/;

/** Deterministic source: bytes 0, 1, 2, … so each code gets different low 5 bits. */
const countingBytes = (n: number) => Uint8Array.from({ length: n }, (_, i) => i % 256);

describe('generateRecoveryCodes', () => {
  it('gives 10 distinct codes in the format from a deterministic source', () => {
    const codes = generateRecoveryCodes(countingBytes);
    expect(codes).toHaveLength(RECOVERY_CODE_COUNT);
    expect(RECOVERY_CODE_COUNT).toBe(10);
    expect(new Set(codes).size).toBe(10);
    for (const code of codes) expect(code).toMatch(CODE_FORMAT);
  });

  it('maps each byte to the alphabet by its low 5 bits', () => {
    // bytes 0..9 → "0123456789", 10..19 → "abcdefghjk"; high bits are ignored (32 + 1 → "1").
    expect(generateRecoveryCodes(countingBytes).slice(0, 2)).toEqual(['01234-56789', 'abcde-fghjk']);
    const shifted = (n: number) => countingBytes(n).map((byte) => byte + 32 * 3);
    expect(generateRecoveryCodes(shifted)[0]).toBe('01234-56789');
  });

  it('asks the source for one byte per character', () => {
    const requested: number[] = [];
    generateRecoveryCodes((n) => (requested.push(n), countingBytes(n)));
    expect(requested).toEqual([100]);
  });

  it('gives distinct codes in the format with crypto randomness', () => {
    const codes = generateRecoveryCodes(randomBytes);
    expect(new Set(codes).size).toBe(10);
    for (const code of codes) expect(code).toMatch(CODE_FORMAT);
  });

  it('throws when a broken source yields duplicates', () => {
    expect(() => generateRecoveryCodes((n) => new Uint8Array(n))).toThrow(/duplicate/);
  });

  it('throws TypeError when the source returns the wrong number of bytes', () => {
    expect(() => generateRecoveryCodes((n) => new Uint8Array(n - 1))).toThrow(TypeError);
  });
});

describe('normalizeRecoveryCode', () => {
  it('removes the dash', () => expect(normalizeRecoveryCode('abcde-fghjk')).toBe('abcdefghjk'));
  it('lower-cases and removes spaces and dashes', () =>
    expect(normalizeRecoveryCode(' ABC DE--FGH JK ')).toBe('abcdefghjk'),
  );
  it('maps i and l to 1, o to 0, in either case', () =>
    expect(normalizeRecoveryCode('iLoIl-OoabC')).toBe('1101100abc'),
  );
  it.each([
    ['too short', 'abcde-fghj'],
    ['too long', 'abcde-fghjkm'],
    ['u (not in the alphabet)', 'abcde-fghju'],
    ['punctuation', 'abcde_fghjk'],
    ['the Kelvin sign, which lower-cases to k', 'abcde-fghj\u212a'],
    ['empty', ''],
  ])('rejects %s', (_, input) => expect(normalizeRecoveryCode(input)).toBeUndefined());
});

describe('hashRecoveryCode', () => {
  it('is hex SHA-256 of accountId:canonicalCode', () => {
    const expected = createHash('sha256').update('acct-1:abcdefghjk').digest('hex');
    expect(hashRecoveryCode('acct-1', 'abcde-fghjk')).toBe(expected);
  });

  it('gives the same hash for the issued and the typed form', () => {
    const [issued] = generateRecoveryCodes(randomBytes);
    const typed = issued!.toUpperCase().replace('-', ' ').replace(/1/g, 'l').replace(/0/g, 'O');
    expect(hashRecoveryCode('acct-1', typed)).toBe(hashRecoveryCode('acct-1', issued!));
  });

  it('salts with the account id', () => {
    expect(hashRecoveryCode('acct-1', 'abcde-fghjk')).not.toBe(hashRecoveryCode('acct-2', 'abcde-fghjk'));
  });

  it('throws invalid_code for something that is not a recovery code', () => {
    expect(() => hashRecoveryCode('acct-1', 'nope')).toThrow(expect.objectContaining({ code: 'invalid_code' }));
  });
});
