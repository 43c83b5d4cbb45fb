import { randomBytes } from 'node:crypto';
import { ScureBase32Plugin, generateSync } from 'otplib';
import { describe, expect, it } from 'vitest';
import { AppError } from '../../functions/shared/errors.js';
import {
  generateTotpSecret,
  isTotpCodeFormat,
  normalizeTotpSecret,
  otpauthUri,
  verifyTotpCode,
} from '../../functions/domain/totp/index.js';
import { RFC6238_SECRET, RFC6238_SHA1_VECTORS, totpCodeAt } from '../support/totp.js';

/** RFC 6238 Appendix B SHA-1 key: ASCII "12345678901234567890" (20 bytes). */
const RFC_SECRET = RFC6238_SECRET;
const SECRET_16_BYTES = 'GEZDGNBVGY3TQOJQGEZDGNBVGY'; // "1234567890123456"
const SECRET_15_BYTES = 'GEZDGNBVGY3TQOJQGEZDGNBV'; // "123456789012345"

const RFC_VECTORS = RFC6238_SHA1_VECTORS;

const encodeBase32 = (bytes: Uint8Array) => new ScureBase32Plugin().encode(bytes);
const STEP_MS = 30_000;
const stepStartMs = (step: number) => step * STEP_MS;

function expectValidationError(run: () => unknown): void {
  expect(run).toThrow(AppError);
  expect(run).toThrow(expect.objectContaining({ code: 'validation_error' }));
}

describe('RFC 6238 Appendix B SHA-1 vectors', () => {
  it.each(RFC_VECTORS)('otplib gives the published 8-digit code at %i s', (epoch, code8) => {
    const secret = Buffer.from('12345678901234567890', 'ascii');
    expect(generateSync({ secret, epoch, algorithm: 'sha1', digits: 8, period: 30 })).toBe(code8);
  });

  it.each(RFC_VECTORS)('totpCodeAt gives the last 6 digits at %i s', (epoch, code8) => {
    expect(totpCodeAt(RFC_SECRET, epoch * 1000)).toBe(code8.slice(-6));
  });

  it.each(RFC_VECTORS)('verifyTotpCode accepts the last 6 digits at %i s with its time step', async (epoch, code8) => {
    const result = await verifyTotpCode({ secret: RFC_SECRET, code: code8.slice(-6), nowMs: epoch * 1000 });
    expect(result).toEqual({ valid: true, timeStep: Math.floor(epoch / 30) });
  });
});

describe('verifyTotpCode window', () => {
  const secret = generateTotpSecret(() => Buffer.from('a fixed twenty bytes'));
  const step = 58_000_000; // 2025-02-19T21:20:00Z
  const code = totpCodeAt(secret, stepStartMs(step));
  const verifyAt = (nowMs: number) => verifyTotpCode({ secret, code, nowMs });

  it('accepts the code throughout its own step', async () => {
    await expect(verifyAt(stepStartMs(step))).resolves.toEqual({ valid: true, timeStep: step });
    await expect(verifyAt(stepStartMs(step + 1) - 1)).resolves.toEqual({ valid: true, timeStep: step });
  });

  it('accepts it from the first to the last millisecond of the step before', async () => {
    await expect(verifyAt(stepStartMs(step - 1))).resolves.toEqual({ valid: true, timeStep: step });
    await expect(verifyAt(stepStartMs(step) - 1)).resolves.toEqual({ valid: true, timeStep: step });
  });

  it('accepts it from the first to the last millisecond of the step after', async () => {
    await expect(verifyAt(stepStartMs(step + 1))).resolves.toEqual({ valid: true, timeStep: step });
    await expect(verifyAt(stepStartMs(step + 2) - 1)).resolves.toEqual({ valid: true, timeStep: step });
  });

  it('rejects it at the last millisecond of two steps before', async () => {
    await expect(verifyAt(stepStartMs(step - 1) - 1)).resolves.toEqual({ valid: false });
  });

  it('rejects it at the first millisecond of two steps after', async () => {
    await expect(verifyAt(stepStartMs(step + 2))).resolves.toEqual({ valid: false });
  });

  it('rejects a wrong code', async () => {
    const wrong = String((Number(code) + 1) % 1_000_000).padStart(6, '0');
    await expect(verifyTotpCode({ secret, code: wrong, nowMs: stepStartMs(step) })).resolves.toEqual({ valid: false });
  });

  it.each([`${'{code}'} `, '12345', '1234567', ''])('answers invalid for the malformed code %j', async (malformed) => {
    const candidate = malformed.replace('{code}', code);
    await expect(verifyTotpCode({ secret, code: candidate, nowMs: stepStartMs(step) })).resolves.toEqual({
      valid: false,
    });
  });

  it('accepts a secret in any accepted spelling', async () => {
    const spaced = secret.toLowerCase().replace(/(.{4})/g, '$1 ');
    await expect(verifyTotpCode({ secret: spaced, code, nowMs: stepStartMs(step) })).resolves.toEqual({
      valid: true,
      timeStep: step,
    });
  });

  it('throws validation_error for an invalid secret', async () => {
    await expect(verifyTotpCode({ secret: SECRET_15_BYTES, code, nowMs: 0 })).rejects.toMatchObject({
      code: 'validation_error',
    });
  });

  it('throws TypeError for a negative or non-finite time', async () => {
    await expect(verifyTotpCode({ secret, code, nowMs: -1 })).rejects.toThrow(TypeError);
    await expect(verifyTotpCode({ secret, code, nowMs: Number.NaN })).rejects.toThrow(TypeError);
  });
});

describe('normalizeTotpSecret', () => {
  it('keeps a canonical secret', () => expect(normalizeTotpSecret(RFC_SECRET)).toBe(RFC_SECRET));
  it('upper-cases', () => expect(normalizeTotpSecret(RFC_SECRET.toLowerCase())).toBe(RFC_SECRET));
  it('ignores spaces', () => expect(normalizeTotpSecret(' gezd gnbv gy3t qojq gezd gnbv gy3t qojq ')).toBe(RFC_SECRET));
  it('accepts correct padding', () => expect(normalizeTotpSecret(`${SECRET_16_BYTES}======`)).toBe(SECRET_16_BYTES));
  it('rejects wrong padding', () => expectValidationError(() => normalizeTotpSecret(`${SECRET_16_BYTES}==`)));
  it('rejects padding in the middle', () => expectValidationError(() => normalizeTotpSecret(`GEZ=${SECRET_16_BYTES}`)));
  it.each(['0', '1', '8', '9', '-', 'é'])('rejects the character %j', (char) =>
    expectValidationError(() => normalizeTotpSecret(`${SECRET_16_BYTES.slice(0, -1)}${char}`)),
  );
  it('rejects a non-ASCII letter that upper-cases to ASCII (dotless ı)', () =>
    expectValidationError(() => normalizeTotpSecret('ı'.repeat(26))),
  );
  it('rejects an impossible length', () => expectValidationError(() => normalizeTotpSecret(`${SECRET_16_BYTES}A`)));
  it('rejects a 15-byte secret', () => expectValidationError(() => normalizeTotpSecret(SECRET_15_BYTES)));
  it('accepts a 16-byte secret', () => expect(normalizeTotpSecret(SECRET_16_BYTES)).toBe(SECRET_16_BYTES));
  it('rejects a 65-byte secret (otplib refuses keys over 64 bytes)', () =>
    expectValidationError(() => normalizeTotpSecret(encodeBase32(new Uint8Array(65).fill(7)))),
  );
  it('accepts a 64-byte secret', () =>
    expect(normalizeTotpSecret(encodeBase32(new Uint8Array(64).fill(7)))).toHaveLength(103),
  );
  it('rejects the empty string', () => expectValidationError(() => normalizeTotpSecret('')));
  it('rejects whitespace only', () => expectValidationError(() => normalizeTotpSecret('   ')));
});

describe('isTotpCodeFormat', () => {
  it('accepts six ASCII digits', () => expect(isTotpCodeFormat('012345')).toBe(true));
  it.each(['12345', '1234567', '12a456', ' 123456', '123456 ', '123456\n', '１２３４５６', '١٢٣٤٥٦', ''])(
    'rejects %j',
    (code) => expect(isTotpCodeFormat(code)).toBe(false),
  );
});

describe('generateTotpSecret', () => {
  it('encodes the 20 injected bytes as 32 base32 characters', () => {
    const requested: number[] = [];
    const secret = generateTotpSecret((n) => {
      requested.push(n);
      return Buffer.from('12345678901234567890', 'ascii');
    });
    expect(requested).toEqual([20]);
    expect(secret).toBe(RFC_SECRET);
  });

  it('returns a secret normalizeTotpSecret keeps as it is', () => {
    const secret = generateTotpSecret(randomBytes);
    expect(normalizeTotpSecret(secret)).toBe(secret);
  });

  it('throws TypeError when the source returns the wrong number of bytes', () => {
    expect(() => generateTotpSecret(() => new Uint8Array(19))).toThrow(TypeError);
  });
});

describe('otpauthUri', () => {
  it('writes every parameter, URI-encoded', () => {
    const secret = RFC_SECRET.toLowerCase();
    const uri = otpauthUri({ secret, accountName: 'ana+2fa@example.com', issuer: 'Flow Gate & Co' });
    expect(uri).toBe(
      `otpauth://totp/Flow%20Gate%20%26%20Co:ana%2B2fa%40example.com?secret=${RFC_SECRET}` +
        '&issuer=Flow%20Gate%20%26%20Co&algorithm=SHA1&digits=6&period=30',
    );
  });

  it('parses back to the same values', () => {
    const url = new URL(otpauthUri({ secret: RFC_SECRET, accountName: 'zoë?#/', issuer: 'Flöw/Gate' }));
    expect(url.protocol).toBe('otpauth:');
    expect(url.host).toBe('totp');
    expect(decodeURIComponent(url.pathname)).toBe('/Flöw/Gate:zoë?#/');
    expect(url.searchParams.get('issuer')).toBe('Flöw/Gate');
    expect(url.searchParams.get('secret')).toBe(RFC_SECRET);
  });

  it.each([
    ['an issuer with a colon', { issuer: 'a:b', accountName: 'ana' }],
    ['an account name with a colon', { issuer: 'Flow', accountName: 'a:b' }],
    ['an empty issuer', { issuer: '', accountName: 'ana' }],
    ['an empty account name', { issuer: 'Flow', accountName: '' }],
  ])('rejects %s', (_, names) => expectValidationError(() => otpauthUri({ secret: RFC_SECRET, ...names })));

  it('rejects an invalid secret', () =>
    expectValidationError(() => otpauthUri({ secret: SECRET_15_BYTES, accountName: 'ana', issuer: 'Flow' })),
  );
});
