import { AppError } from '../../shared/errors.js';
import type { Clock } from '../clock.js';
import { hashRecoveryCode, normalizeRecoveryCode } from '../totp/index.js';
import { withAttemptBudget, type AttemptBudgetDeps } from './attempt-budget.js';
import type { MfaStore } from './ports.js';

export interface VerifyRecoveryCodeDeps extends AttemptBudgetDeps {
  mfa: Pick<MfaStore, 'consumeRecoveryCode'>;
  now: Clock;
}

/**
 * Uses up one of the user's recovery codes.
 *
 * A string that is not in recovery-code form (10 Crockford base32 characters; case, spaces and
 * dashes ignored) is `invalid_code` without costing an attempt, since nothing is compared. Any
 * other miss — a wrong or already used code, or a user without a factor — costs one attempt of the
 * recovery budget, which is separate from the TOTP one.
 *
 * @returns How many unused codes the user has left.
 * @throws AppError `invalid_code` or `too_many_attempts`.
 */
export async function verifyRecoveryCode(
  deps: VerifyRecoveryCodeDeps,
  input: { subject: string; code: string },
): Promise<{ remaining: number }> {
  const { subject } = input;
  if (normalizeRecoveryCode(input.code) === undefined) throw new AppError('invalid_code', 'not in recovery code form');
  const codeHash = hashRecoveryCode(subject, input.code);
  return withAttemptBudget(deps, { subject, bucket: 'recovery', nowMs: deps.now() }, async () => {
    const remaining = await deps.mfa.consumeRecoveryCode(subject, codeHash);
    if (remaining === undefined) throw new AppError('invalid_code', 'no such unused recovery code');
    return { remaining };
  });
}
