import { AppError } from '../../shared/errors.js';
import type { Clock } from '../clock.js';
import { withAttemptBudget, type AttemptBudgetDeps } from './attempt-budget.js';
import { issueMfaToken, readFreshMfaToken, MFA_TOKEN_TTL_SECONDS, type AuthMethod, type FreshProof, type ProofPurpose } from './mfa-token.js';
import type { ProofLedger, TokenSigner } from './ports.js';

export interface StepUpDeps extends AttemptBudgetDeps {
  signer: TokenSigner;
  /** The `iss` of step-up proofs: the gateway's base URL. */
  tokenIssuer: string;
  /** The proofs already spent. */
  proofs: ProofLedger;
  now: Clock;
}

/** 16 random bytes: a proof's `jti`. */
const JTI_BYTES = 16;

/** A proof's audience: the app of the user's token, else (a token naming no app) the issuer itself. */
export const proofAudience = (deps: Pick<StepUpDeps, 'tokenIssuer'>, app: string | undefined): string => app ?? deps.tokenIssuer;

const askFor = (purposes: readonly ProofPurpose[]) =>
  `ask POST /accounts/totp/verify (or /accounts/recovery-codes/verify) with "purpose": "${purposes.at(-1)}" for one`;

/**
 * Requires a fresh step-up proof of `subject` (an `mfa_token` from verify or a recovery code, no
 * older than 10 minutes) made for `app` and for one of `purposes`. None at all is 403
 * `mfa_required` at no cost; one that does not hold (forged, expired, another user's or app's,
 * made for another purpose, already spent) is also 403 but spends an attempt of the TOTP budget,
 * like a wrong code, since it too is a guess at a sensitive operation.
 *
 * A proof that holds passes even while the TOTP budget is locked: it is no guess (it took a code
 * to get), and a user whose TOTP someone else's guessing has locked for the day must still be able
 * to use a recovery code's proof to regenerate codes or replace a factor.
 *
 * With `spend`, the proof is spent in the same step (one conditional write of its `jti`), so it
 * never serves twice; without, the caller spends it with {@link spendProof} once its own checks hold.
 */
export async function requireFreshProof(
  deps: StepUpDeps,
  input: { subject: string; mfaToken: string | undefined; app?: string; purposes: readonly ProofPurpose[]; spend: boolean },
): Promise<FreshProof> {
  const { subject, mfaToken, purposes } = input;
  if (!mfaToken) throw new AppError('mfa_required', 'no X-MFA-Token');
  const nowMs = deps.now();
  const proof = await readFreshMfaToken(mfaToken, { keys: await deps.signer.publicKeys(), issuer: deps.tokenIssuer, audience: proofAudience(deps, input.app), subject, nowMs });
  let refusal: unknown = !proof
    ? new AppError('mfa_required', 'X-MFA-Token is not a fresh proof of this user for this app')
    : !purposes.includes(proof.purpose)
      ? new AppError('mfa_required', `proof for ${proof.purpose}`, undefined, `this step-up proof was made for ${proof.purpose}, not for this operation: ${askFor(purposes)}`)
      : undefined;
  if (proof && refusal === undefined) {
    try {
      if (input.spend) await spendProof(deps, proof);
      return proof;
    } catch (error) {
      refusal = error;
    }
  }
  // Only a proof that does not hold is a guess: it spends the TOTP budget (and is 429 while that is locked).
  return withAttemptBudget(deps, { subject, bucket: 'totp', nowMs }, async (): Promise<never> => {
    throw refusal;
  });
}

/** Spends a proof read by {@link requireFreshProof}: 403 `mfa_required` when it was spent before. */
export async function spendProof(deps: Pick<StepUpDeps, 'proofs'>, proof: FreshProof): Promise<void> {
  // Kept until well after the proof expires: by then no check would accept it anyway.
  const spent = await deps.proofs.spend({ jti: proof.jti, expiresAt: proof.exp + MFA_TOKEN_TTL_SECONDS });
  if (!spent) throw new AppError('mfa_required', 'proof already spent', undefined, 'this step-up proof was already used; each proof for a sensitive operation serves once');
}

/** A new step-up proof for `subject`, as the API returns it: for `purpose` (default `sign_in`), made for `app`. */
export async function stepUpProof(deps: StepUpDeps, input: { subject: string; accountId: string; method: AuthMethod; purpose?: ProofPurpose; app?: string }) {
  const { token, claims } = await issueMfaToken(deps.signer, {
    subject: input.subject, accountId: input.accountId, method: input.method, purpose: input.purpose ?? 'sign_in',
    issuer: deps.tokenIssuer, audience: proofAudience(deps, input.app),
    jti: Buffer.from(deps.randomBytes(JTI_BYTES)).toString('base64url'), nowMs: deps.now(),
  });
  return { mfaToken: token, expiresAt: new Date(claims.exp * 1000).toISOString(), purpose: claims.purpose };
}
