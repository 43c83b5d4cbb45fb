import { timingSafeEqual } from 'node:crypto';
import { NobleCryptoPlugin, ScureBase32Plugin, TOTP } from 'otplib';

/**
 * otplib compares the expected code with the given one through its crypto plugin, by default an
 * XOR loop of its own; here it is Node's `timingSafeEqual`, the one comparison every other secret
 * in this codebase goes through. The length check may return early: a code's length is not secret.
 */
class TimingSafeNobleCrypto extends NobleCryptoPlugin {
  override constantTimeEqual(a: string | Uint8Array, b: string | Uint8Array): boolean {
    const expected = Buffer.from(a);
    const given = Buffer.from(b);
    return expected.length === given.length && timingSafeEqual(expected, given);
  }
}

/**
 * otplib with its plugins, and nothing of ours: `code.ts` loads this module with the first code it
 * checks and passes the code's parameters (algorithm, digits, period) with each check. A module of
 * ours imported here as well as at init would be split by the bundler into a chunk of its own, one
 * more file to load at init.
 */
export const otplibTotp = new TOTP({ crypto: new TimingSafeNobleCrypto(), base32: new ScureBase32Plugin() });
