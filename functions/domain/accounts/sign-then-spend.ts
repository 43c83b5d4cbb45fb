import { AppError } from '../../shared/errors.js';
import { stepUpProof, type StepUpDeps } from './step-up.js';

/** How long a client waits before trying a code again after the proof could not be signed. */
export const SIGNING_RETRY_AFTER_SECONDS = 1;

export type StepUpProof = Awaited<ReturnType<typeof stepUpProof>>;

/**
 * Signs the step-up proof for a code that was checked and found right, and only then spends the
 * code: the proof is answered only when the spend, one conditional write, wins.
 *
 * ```
 *  code checked (a read) ─▶ proof signed (kms:Sign) ─▶ code spent (conditional write) ─▶ proof answered
 *                             │ fails: 503 + Retry-After; nothing was spent, the same code works again
 *                                                        │ lost to a concurrent request or a replay:
 *                                                        │ the signed proof is dropped, never answered
 * ```
 *
 * Why this order: spending first burns a code the user typed correctly whenever signing then
 * fails (KMS's 300/s ECC quota is below the stage's 500 rps). Giving the code back on failure
 * instead would leave a window in which the right code is refused to the user's own retry, and
 * a give-back that itself fails (or that lands after the recovery codes were regenerated) would
 * lose the code or revive an old one. Signing first leaves nothing server-side after the spend
 * but the answer, and single use still rests on the conditional write alone: two concurrent
 * requests with one code may both sign, but only the one whose write succeeds gets its proof.
 *
 * @param proof - the proof's content, signed at most once however many times `spend` is tried.
 * @returns a `spend` function: it signs (once) and runs `write`; undefined when the write lost.
 * @throws AppError `unavailable` (503, `Retry-After`) when the proof cannot be signed: a
 *   server-side failure, never counted as a failed attempt.
 */
export function signThenSpend(deps: StepUpDeps, proof: Parameters<typeof stepUpProof>[1]) {
  let signed: Promise<StepUpProof> | undefined;
  return async <S>(write: () => Promise<S | undefined>): Promise<{ proof: StepUpProof; spent: S } | undefined> => {
    signed ??= stepUpProof(deps, proof).catch((error: unknown) => {
      throw new AppError('unavailable', `the step-up proof could not be signed: ${(error as Error).message}`, { 'retry-after': String(SIGNING_RETRY_AFTER_SECONDS) });
    });
    const answer = await signed;
    const spent = await write();
    return spent === undefined ? undefined : { proof: answer, spent };
  };
}
