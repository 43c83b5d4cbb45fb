import { TOTP_ALLOWED_DRIFT_STEPS, TOTP_CODE_PATTERN, TOTP_DIGITS, TOTP_PERIOD_SECONDS } from './constants.js';
import { decodeTotpSecret } from './secret.js';

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
  // otplib, and the hashes it computes codes with, load with the first code checked: of the
  // accounts routes only a confirmation checks one. The module system keeps them once loaded.
  const { otplibTotp } = await import('./otplib-totp.js');
  const result = await otplibTotp.verify(code, {
    secret: key,
    algorithm: 'sha1',
    digits: TOTP_DIGITS,
    period: TOTP_PERIOD_SECONDS,
    epoch: Math.floor(nowMs / 1000),
    epochTolerance: EPOCH_TOLERANCE_SECONDS,
  });
  return result.valid ? { valid: true, timeStep: result.timeStep } : { valid: false };
}
