import { AppError } from '../../shared/errors.js';
import type { Clock } from '../clock.js';
import { withAttemptBudget, type AttemptBudgetDeps } from './attempt-budget.js';
import { isFreshMfaToken, issueMfaToken, type AuthMethod } from './mfa-token.js';
import type { TokenSigner } from './ports.js';

export interface StepUpDeps extends AttemptBudgetDeps {
  signer: TokenSigner;
  /** The `iss` of step-up proofs: the gateway's base URL. */
  tokenIssuer: string;
  now: Clock;
}

/**
 * Requires a fresh step-up proof of `subject` (an `mfa_token` from verify or a recovery code, no
 * older than 10 minutes). None at all is 403 `mfa_required` at no cost; one that does not hold
 * (forged, expired, another user's) is also 403 but spends an attempt of the TOTP budget, like a
 * wrong code, since it too is a guess at a sensitive operation.
 *
 * A proof that holds passes even while the TOTP budget is locked: it is no guess (it took a code
 * to get), and a user whose TOTP someone else's guessing has locked for the day must still be able
 * to use a recovery code's proof to regenerate codes or replace a factor.
 */
export async function requireFreshProof(deps: StepUpDeps, input: { subject: string; mfaToken: string | undefined }): Promise<void> {
  const { subject, mfaToken } = input;
  if (!mfaToken) throw new AppError('mfa_required', 'no X-MFA-Token');
  const nowMs = deps.now();
  const fresh = await isFreshMfaToken(mfaToken, { keys: await deps.signer.publicKeys(), issuer: deps.tokenIssuer, subject, nowMs });
  if (fresh) return;
  await withAttemptBudget(deps, { subject, bucket: 'totp', nowMs }, async () => {
    throw new AppError('mfa_required', 'X-MFA-Token is not a fresh proof of this user');
  });
}

/** A new step-up proof for `subject`, as the API returns it. */
export async function stepUpProof(deps: StepUpDeps, input: { subject: string; accountId: string; method: AuthMethod }) {
  const { token, claims } = await issueMfaToken(deps.signer, { ...input, issuer: deps.tokenIssuer, nowMs: deps.now() });
  return { mfaToken: token, expiresAt: new Date(claims.exp * 1000).toISOString() };
}
