import { createHash } from 'node:crypto';
import { AppError } from '../../shared/errors.js';

/** Recovery codes issued at registration. */
export const RECOVERY_CODE_COUNT = 10;

/** Crockford base32, lower case: no i, l, o or u to misread. */
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
const CODE_CHARS = 10; // 50 bits
const LOOK_ALIKES: Record<string, string> = { i: '1', l: '1', o: '0' };

/**
 * {@link RECOVERY_CODE_COUNT} distinct recovery codes, `xxxxx-xxxxx`, 50 bits each.
 *
 * @param randomBytes - a cryptographically secure source, e.g. `crypto.randomBytes`.
 * @throws Error when the source yields duplicate codes, which only a broken source does.
 */
export function generateRecoveryCodes(randomBytes: (n: number) => Uint8Array): string[] {
  const needed = RECOVERY_CODE_COUNT * CODE_CHARS;
  const bytes = randomBytes(needed);
  if (bytes.length !== needed) throw new TypeError(`randomBytes(${needed}) returned ${bytes.length} bytes`);
  const codes: string[] = [];
  for (let start = 0; start < needed; start += CODE_CHARS) {
    // The low 5 bits of a uniform byte are uniform (256 is a multiple of 32): no rejection needed.
    const chars = Array.from(bytes.subarray(start, start + CODE_CHARS), (byte) => ALPHABET[byte & 31]).join('');
    codes.push(`${chars.slice(0, 5)}-${chars.slice(5)}`);
  }
  if (new Set(codes).size !== codes.length) throw new Error('random source produced duplicate recovery codes');
  return codes;
}

/**
 * Canonical form of a typed recovery code: lower case, whitespace and dashes removed, Crockford
 * look-alikes mapped (i, l → 1; o → 0).
 *
 * @returns The 10-character code, or undefined when it is not one.
 */
export function normalizeRecoveryCode(input: string): string | undefined {
  const compact = input.replace(/[\s-]+/g, '');
  // Checked before lower-casing: toLowerCase maps some non-ASCII letters to ASCII (Kelvin sign → k).
  if (!/^[0-9A-Za-z]{10}$/.test(compact)) return undefined;
  const canonical = compact.toLowerCase().replace(/[ilo]/g, (char) => LOOK_ALIKES[char]!);
  return [...canonical].every((char) => ALPHABET.includes(char)) ? canonical : undefined;
}

/**
 * What is stored instead of a recovery code: hex SHA-256 of `${accountId}:${canonicalCode}`.
 * The account id salts it, so equal codes of two accounts hash differently. 50 random bits make a
 * slow hash unnecessary.
 *
 * @param code - as issued or as typed; it is normalised first.
 * @throws AppError `invalid_code` when `code` is not a recovery code.
 */
export function hashRecoveryCode(accountId: string, code: string): string {
  const canonical = normalizeRecoveryCode(code);
  if (canonical === undefined) throw new AppError('invalid_code', 'not a recovery code');
  return createHash('sha256').update(`${accountId}:${canonical}`, 'utf8').digest('hex');
}
