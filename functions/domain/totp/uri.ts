import { AppError } from '../../shared/errors.js';
import { TOTP_DIGITS, TOTP_PERIOD_SECONDS } from './constants.js';
import { normalizeTotpSecret } from './secret.js';

/**
 * The `otpauth://` URI an authenticator app scans, in the Key Uri Format:
 * `otpauth://totp/Issuer:account?secret=…&issuer=…&algorithm=SHA1&digits=6&period=30`.
 * Every parameter is written out, because some apps ignore the defaults.
 *
 * @see https://github.com/google/google-authenticator/wiki/Key-Uri-Format
 * @throws AppError `validation_error` for an invalid secret, or an empty issuer or account
 *   name, or one containing a colon (the label separator, which apps would split on).
 */
export function otpauthUri(input: { secret: string; accountName: string; issuer: string }): string {
  const { accountName, issuer } = input;
  for (const [name, value] of [['issuer', issuer], ['accountName', accountName]] as const) {
    if (value.length === 0 || value.includes(':')) {
      throw new AppError('validation_error', undefined, undefined, `${name} must be non-empty and contain no colon`);
    }
  }
  const label = `${encodeURIComponent(issuer)}:${encodeURIComponent(accountName)}`;
  const query = [
    `secret=${normalizeTotpSecret(input.secret)}`,
    `issuer=${encodeURIComponent(issuer)}`,
    'algorithm=SHA1',
    `digits=${TOTP_DIGITS}`,
    `period=${TOTP_PERIOD_SECONDS}`,
  ].join('&');
  return `otpauth://totp/${label}?${query}`;
}
