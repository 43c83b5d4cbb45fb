import { AppError } from '../../shared/errors.js';
import { decodeBase32, encodeBase32 } from './base32.js';
import { GENERATED_SECRET_BYTES, MAX_SECRET_BYTES, MIN_SECRET_BYTES } from './constants.js';

// Checked before upper-casing: toUpperCase maps some non-ASCII letters to ASCII ('ı' → 'I').
const BASE32_WITH_PADDING = /^([A-Za-z2-7]*)(=*)$/;

/**
 * Decodes a user-supplied base32 secret (case-insensitive, whitespace ignored, padding optional
 * but correct when present) to its key bytes.
 *
 * @throws AppError `validation_error` when it is not base32 or the key is not 16–64 bytes.
 */
export function decodeTotpSecret(input: string): Uint8Array {
  const match = BASE32_WITH_PADDING.exec(input.replace(/\s+/g, ''));
  if (!match) throw new AppError('validation_error', undefined, undefined, 'secret must be base32 (A–Z, 2–7)');
  const [, data = '', padding = ''] = match;
  if (padding.length > 0 && (padding.length >= 8 || (data.length + padding.length) % 8 !== 0)) {
    throw new AppError('validation_error', undefined, undefined, 'secret has wrong base32 padding');
  }
  const bytes = decodeBase32(data.toUpperCase());
  if (!bytes) throw new AppError('validation_error', undefined, undefined, 'secret has an impossible base32 length');
  if (bytes.length < MIN_SECRET_BYTES || bytes.length > MAX_SECRET_BYTES) {
    throw new AppError(
      'validation_error',
      undefined,
      undefined,
      `secret must decode to ${MIN_SECRET_BYTES}–${MAX_SECRET_BYTES} bytes, got ${bytes.length}`,
    );
  }
  return bytes;
}

/**
 * Normalises a user-supplied base32 secret (RFC 4648, case-insensitive, padding optional,
 * whitespace ignored).
 *
 * @returns The canonical form: upper-case, unpadded, re-encoded from the decoded bytes.
 * @throws AppError `validation_error` when it is not base32 or decodes to fewer than 16 (or more
 *   than 64) bytes.
 */
export function normalizeTotpSecret(input: string): string {
  return encodeBase32(decodeTotpSecret(input));
}

/**
 * A new 160-bit secret, as canonical base32 (32 characters).
 *
 * @param randomBytes - a cryptographically secure source, e.g. `crypto.randomBytes`.
 */
export function generateTotpSecret(randomBytes: (n: number) => Uint8Array): string {
  const bytes = randomBytes(GENERATED_SECRET_BYTES);
  if (bytes.length !== GENERATED_SECRET_BYTES) {
    throw new TypeError(`randomBytes(${GENERATED_SECRET_BYTES}) returned ${bytes.length} bytes`);
  }
  return encodeBase32(bytes);
}
