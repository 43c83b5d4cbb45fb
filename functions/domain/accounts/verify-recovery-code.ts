import { AppError } from '../../shared/errors.js';
import { hashRecoveryCode, normalizeRecoveryCode } from '../totp/index.js';
import { withAttemptBudget } from './attempt-budget.js';
import { audited, type AuditDeps } from './audit.js';
import type { ClientInfo, MfaStore } from './ports.js';
import type { ProofPurpose } from './mfa-token.js';
import { signThenSpend } from './sign-then-spend.js';
import type { StepUpDeps } from './step-up.js';

export interface VerifyRecoveryCodeDeps extends StepUpDeps, AuditDeps {
  mfa: Pick<MfaStore, 'hasRecoveryCode' | 'consumeRecoveryCode'>;
}

/**
 * Uses up one of the user's recovery codes and answers a step-up proof (`amr: ["recovery_code"]`).
 *
 * A string that is not in recovery-code form (10 Crockford base32 characters; case, spaces and
 * dashes ignored) is `invalid_code` without costing an attempt, since nothing is compared. Any
 * other miss — a wrong or already used code, or a user without a factor — costs one attempt of the
 * recovery budget, which is separate from the TOTP one (and of the ceiling across both).
 *
 * @returns How many unused codes the user has left, and the proof.
 * @throws AppError `invalid_code`, `too_many_attempts`, or `unavailable` when the proof cannot be
 *   signed (the code is not spent and works on retry).
 */
export async function verifyRecoveryCode(
  deps: VerifyRecoveryCodeDeps,
  input: { subject: string; accountId: string; code: string; client: ClientInfo; purpose?: ProofPurpose; app?: string },
): Promise<{ remaining: number; mfaToken: string; expiresAt: string }> {
  const { subject } = input;
  if (normalizeRecoveryCode(input.code) === undefined) throw new AppError('invalid_code', 'not in recovery code form');
  const codeHash = hashRecoveryCode(subject, input.code);
  return audited(deps, { subject, client: input.client, failed: 'recovery_code_failed', succeeded: () => ({ type: 'recovery_code_used' }) }, () =>
    withAttemptBudget(deps, { subject, bucket: 'recovery', nowMs: deps.now() }, async () => {
      // Looked up before the proof is signed, so that a wrong guess costs no kms:Sign; the spend
      // after signing is still the conditional write that decides (see signThenSpend).
      if (!(await deps.mfa.hasRecoveryCode(subject, codeHash))) throw new AppError('invalid_code', 'no such unused recovery code');
      const won = await signThenSpend(deps, { subject, accountId: input.accountId, method: 'recovery_code', purpose: input.purpose, app: input.app })(() => deps.mfa.consumeRecoveryCode(subject, codeHash));
      if (!won) throw new AppError('invalid_code', 'the recovery code was used meanwhile');
      return { remaining: won.spent, ...won.proof };
    }));
}
