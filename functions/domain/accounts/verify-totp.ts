import { AppError } from '../../shared/errors.js';
import type { SecretBox } from '../secret-box.js';
import { isTotpCodeFormat, verifyTotpCode } from '../totp/index.js';
import { withAttemptBudget } from './attempt-budget.js';
import { audited, type AuditDeps } from './audit.js';
import { totpSecretContext } from './confirm-registration.js';
import type { ClientInfo, MfaStore } from './ports.js';
import type { ProofPurpose } from './mfa-token.js';
import { signThenSpend } from './sign-then-spend.js';
import type { StepUpDeps } from './step-up.js';

export interface VerifyTotpDeps extends StepUpDeps, AuditDeps {
  mfa: Pick<MfaStore, 'getMfa' | 'advanceTimeStep'>;
  secretBox: Pick<SecretBox, 'open'>;
}

/**
 * Checks a code at sign-in or before a sensitive action and answers a step-up proof.
 *
 * The code must match one of the user's factors (the one named, when `factorId` is given) at a
 * time step later than the last accepted one for that factor. Recording the new step is one
 * conditional write (`time_step < :step`), so of two requests with one code exactly one passes,
 * and neither the enrolment code nor any code from before it is ever accepted again.
 *
 * @throws AppError `validation_error` (costs nothing), `too_many_attempts`, `unavailable` when
 *   the proof cannot be signed (costs nothing, spends nothing: the same code works on retry), or
 *   `invalid_code` for anything else that fails: a wrong, replayed or old code, an unknown factor, no factor.
 */
export async function verifyTotp(
  deps: VerifyTotpDeps,
  input: { subject: string; accountId: string; code: string; factorId?: string; client: ClientInfo; purpose?: ProofPurpose; app?: string },
): Promise<{ mfaToken: string; expiresAt: string; factorId: string }> {
  const { subject, code } = input;
  if (!isTotpCodeFormat(code)) throw new AppError('validation_error', undefined, undefined, 'code must be 6 ASCII digits');
  const nowMs = deps.now();
  return audited(deps, {
    subject, client: input.client, failed: 'verification_failed', factorId: input.factorId,
    succeeded: (result) => ({ type: 'verification_succeeded', factorId: result.factorId }),
  }, () => withAttemptBudget(deps, { subject, bucket: 'totp', nowMs }, async () => {
    const record = await deps.mfa.getMfa(subject);
    const candidates = (record?.factors ?? []).filter((factor) => input.factorId === undefined || factor.id === input.factorId);
    // Signed before the step is recorded, so a signing failure spends nothing (see signThenSpend).
    const spend = signThenSpend(deps, { subject, accountId: input.accountId, method: 'otp', purpose: input.purpose, app: input.app });
    for (const factor of candidates) {
      const secret = await deps.secretBox.open(factor.sealedSecret, totpSecretContext(subject));
      const verification = await verifyTotpCode({ secret, code, nowMs });
      if (!verification.valid || verification.timeStep <= factor.timeStep) continue;
      const usedAt = new Date(nowMs).toISOString();
      const won = await spend(async () => (await deps.mfa.advanceTimeStep(subject, { factorId: factor.id, timeStep: verification.timeStep, usedAt })) || undefined);
      if (won) return { ...won.proof, factorId: factor.id };
    }
    throw new AppError('invalid_code', 'no factor of this user accepts the code at a new time step');
  }));
}
