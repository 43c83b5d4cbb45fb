export {
  MAX_SECRET_BYTES,
  MIN_SECRET_BYTES,
  TOTP_ALLOWED_DRIFT_STEPS,
  TOTP_DIGITS,
  TOTP_PERIOD_SECONDS,
} from './constants.js';
export { generateTotpSecret, normalizeTotpSecret } from './secret.js';
export { isTotpCodeFormat, verifyTotpCode, type TotpVerification } from './code.js';
export { otpauthUri } from './uri.js';
export {
  RECOVERY_CODE_COUNT,
  generateRecoveryCodes,
  hashRecoveryCode,
  normalizeRecoveryCode,
} from './recovery-codes.js';
export { ATTEMPT_WINDOW_SECONDS, MAX_FAILED_ATTEMPTS, attemptThrottle, type ThrottleDecision } from './throttle.js';
