import { AppError } from '../../shared/errors.js';
import type { Clock } from '../clock.js';
import type { SecretBox } from '../secret-box.js';
import { SECRET_PURPOSES, SECRET_PURPOSE_KEY } from '../secret-purposes.js';
import {
  generateRecoveryCodes,
  hashRecoveryCode,
  isTotpCodeFormat,
  normalizeTotpSecret,
  verifyTotpCode,
} from '../totp/index.js';
import { withAttemptBudget, type AttemptBudgetDeps } from './attempt-budget.js';
import type { MfaStore } from './ports.js';

export interface ConfirmRegistrationDeps extends AttemptBudgetDeps {
  mfa: Pick<MfaStore, 'hasTotpFactor' | 'createTotpFactor'>;
  secretBox: Pick<SecretBox, 'seal'>;
  now: Clock;
}

/** The SecretBox context of a user's TOTP secret: a sealed secret copied to another user will not open. */
export const totpSecretContext = (subject: string): Record<string, string> => ({ subject, [SECRET_PURPOSE_KEY]: SECRET_PURPOSES.totp });

/**
 * Confirms a TOTP registration: when `code` matches `secret` now (± one 30 s step), stores the
 * factor for the user and returns 10 recovery codes, the only time they are ever shown.
 *
 * In order: malformed input is refused first and costs no attempt; a user who already has a factor
 * gets 409 before any code is checked (nothing is guessed, so nothing is counted); then the code is
 * checked against the failure budget. The factor is created with one conditional write, so of two
 * concurrent confirmations exactly one succeeds and the other gets 409 — which is also what refuses
 * a replay of the accepted code; its time step is stored for later checks to refuse older codes.
 *
 * @throws AppError `validation_error`, `already_registered`, `too_many_attempts` or `invalid_code`.
 */
export async function confirmRegistration(
  deps: ConfirmRegistrationDeps,
  input: { subject: string; code: string; secret: string },
): Promise<{ recoveryCodes: string[] }> {
  const { subject, code } = input;
  const secret = normalizeTotpSecret(input.secret);
  if (!isTotpCodeFormat(code)) throw new AppError('validation_error', 'code must be 6 ASCII digits');
  if (await deps.mfa.hasTotpFactor(subject)) throw new AppError('already_registered');

  const nowMs = deps.now();
  return withAttemptBudget(deps, { subject, bucket: 'totp', nowMs }, async () => {
    const verification = await verifyTotpCode({ secret, code, nowMs });
    if (!verification.valid) throw new AppError('invalid_code', 'code does not match the secret within one step');

    const recoveryCodes = generateRecoveryCodes(deps.randomBytes);
    const created = await deps.mfa.createTotpFactor(subject, {
      sealedSecret: await deps.secretBox.seal(secret, totpSecretContext(subject)),
      timeStep: verification.timeStep,
      confirmedAt: new Date(nowMs).toISOString(),
      recoveryCodeHashes: recoveryCodes.map((recoveryCode) => hashRecoveryCode(subject, recoveryCode)),
    });
    if (!created) throw new AppError('already_registered', 'a concurrent confirmation stored its factor first');
    return { recoveryCodes };
  });
}
