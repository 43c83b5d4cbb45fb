import { timingSafeEqual } from 'node:crypto';
import { NobleCryptoPlugin, ScureBase32Plugin, TOTP } from 'otplib';
import { TOTP_ALLOWED_DRIFT_STEPS, TOTP_CODE_PATTERN, TOTP_DIGITS, TOTP_PERIOD_SECONDS } from './constants.js';
import { decodeTotpSecret } from './secret.js';

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

const totp = new TOTP({
  algorithm: 'sha1',
  digits: TOTP_DIGITS,
  period: TOTP_PERIOD_SECONDS,
  crypto: new TimingSafeNobleCrypto(),
  base32: new ScureBase32Plugin(),
});

// otplib checks the steps of epoch - tolerance … epoch + tolerance, so a tolerance of whole
// periods accepts exactly that many steps either side, wherever `now` falls inside its step.
const EPOCH_TOLERANCE_SECONDS = TOTP_ALLOWED_DRIFT_STEPS * TOTP_PERIOD_SECONDS;

/** True when `code` is exactly six ASCII digits (no spaces, no other scripts' digits). */
export function isTotpCodeFormat(code: string): boolean {
  return TOTP_CODE_PATTERN.test(code);
}

/** Result of {@link verifyTotpCode}; `timeStep` is `floor(epochSeconds / 30)` of the matched code. */
export type TotpVerification = { valid: true; timeStep: number } | { valid: false };

/**
 * Verifies a 6-digit SHA-1 30-second code at `nowMs`, accepting one step either side.
 * A malformed code is simply invalid. Callers refuse reuse by storing the returned `timeStep`
 * and rejecting any later match at or below it.
 *
 * @throws AppError `validation_error` when `secret` is not a valid base32 secret.
 * @throws TypeError when `nowMs` is negative or not finite.
 */
export async function verifyTotpCode(input: {
  secret: string;
  code: string;
  nowMs: number;
}): Promise<TotpVerification> {
  const { secret, code, nowMs } = input;
  if (!Number.isFinite(nowMs) || nowMs < 0) throw new TypeError(`nowMs must be a non-negative time, got ${nowMs}`);
  const key = decodeTotpSecret(secret);
  if (!isTotpCodeFormat(code)) return { valid: false };
  const result = await totp.verify(code, {
    secret: key,
    epoch: Math.floor(nowMs / 1000),
    epochTolerance: EPOCH_TOLERANCE_SECONDS,
  });
  return result.valid ? { valid: true, timeStep: result.timeStep } : { valid: false };
}
