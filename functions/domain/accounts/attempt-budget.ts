import { AppError } from '../../shared/errors.js';
import type { RandomBytes } from '../random-bytes.js';
import { ATTEMPT_WINDOW_SECONDS, MAX_FAILED_ATTEMPTS, attemptThrottle } from '../totp/index.js';
import type { AttemptBucket, AttemptStore } from './ports.js';

const WINDOW_MS = ATTEMPT_WINDOW_SECONDS * 1000;
const RESERVATION_BYTES = 16;

/**
 * Failures across the TOTP and recovery budgets together within the window: fewer than the two
 * budgets' sum, so an attacker alternating between them gets 8 guesses, not 10, while a user
 * whose TOTP budget is spent still has 3 recovery-code tries (and a right code spends nothing).
 */
export const MAX_FAILED_ATTEMPTS_ACROSS_BUDGETS = 8;

const SLOTS: Record<AttemptBucket, number> = { totp: MAX_FAILED_ATTEMPTS, recovery: MAX_FAILED_ATTEMPTS, any: MAX_FAILED_ATTEMPTS_ACROSS_BUDGETS };

export interface AttemptBudgetDeps {
  attempts: AttemptStore;
  randomBytes: RandomBytes;
}

interface HeldSlot {
  subject: string;
  bucket: AttemptBucket;
  slot: number;
  reservation: string;
}

/** A wrong code, or a step-up proof that was presented but does not hold: both are guesses. */
const isCountedFailure = (error: unknown) => error instanceof AppError && (error.code === 'invalid_code' || error.code === 'mfa_required');

const tooManyAttempts = (retryAfterSeconds: number, detail: string) =>
  new AppError('too_many_attempts', detail, { 'retry-after': String(retryAfterSeconds) });

/**
 * Runs one code check against the user's failure budget in `bucket` and against the ceiling
 * across budgets: at most {@link MAX_FAILED_ATTEMPTS} failed checks within
 * {@link ATTEMPT_WINDOW_SECONDS} in `bucket` (and {@link MAX_FAILED_ATTEMPTS_ACROSS_BUDGETS} in
 * all), else 429 `too_many_attempts` with `Retry-After` until the oldest of them leaves the window.
 *
 * ```
 *  slots       [0]   [1]   [2]   [3]   [4]        one item each, per bucket
 *  claim       conditional put: slot absent, or its attempt is ≥ 900 s old
 *  check fails (invalid_code)  → the slots stay claimed: a failure that counts for 900 s
 *  otherwise (success, 409, …) → the slots are given back: only wrong codes spend the budget
 * ```
 *
 * The slot is claimed before `check` runs and the claim is a single conditional write, so a burst
 * of concurrent guesses cannot get more than five checks in any window: each needs a slot of its
 * own. An attempt in flight counts as a failure until it resolves.
 *
 * @param check - throws AppError `invalid_code` for a wrong code (or `mfa_required` for a presented proof that does not hold).
 */
export async function withAttemptBudget<T>(
  deps: AttemptBudgetDeps,
  input: { subject: string; bucket: Exclude<AttemptBucket, 'any'>; nowMs: number },
  check: () => Promise<T>,
): Promise<T> {
  const own = await claimSlot(deps, input);
  let ceiling: HeldSlot;
  try {
    ceiling = await claimSlot(deps, { ...input, bucket: 'any' });
  } catch (error) {
    await giveBack(deps.attempts, own);
    throw error;
  }
  try {
    const result = await check();
    await Promise.all([giveBack(deps.attempts, own), giveBack(deps.attempts, ceiling)]);
    return result;
  } catch (error) {
    if (!isCountedFailure(error)) await Promise.all([giveBack(deps.attempts, own), giveBack(deps.attempts, ceiling)]);
    throw error;
  }
}

async function claimSlot(deps: AttemptBudgetDeps, input: { subject: string; bucket: AttemptBucket; nowMs: number }): Promise<HeldSlot> {
  const { subject, bucket, nowMs } = input;
  const slotCount = SLOTS[bucket];
  const reservation = Buffer.from(deps.randomBytes(RESERVATION_BYTES)).toString('hex');
  // A failure at t counts while now - t < window (as attemptThrottle has it): free once t <= now - window.
  const freeIfAttemptedAtOrBeforeMs = nowMs - WINDOW_MS;
  const expiresAt = Math.ceil((nowMs + WINDOW_MS) / 1000);
  // Read-then-claim rounds lost to concurrent attempts before answering 429 anyway.
  for (let round = 0; round <= slotCount; round++) {
    const slots = await deps.attempts.listSlots(subject, bucket);
    const decision = attemptThrottle({ failureTimesMs: slots.map((s) => s.attemptedAtMs), nowMs, maxFailures: slotCount });
    if (decision.blocked) throw tooManyAttempts(decision.retryAfterSeconds, `${bucket} failure budget spent`);
    const busy = new Set(slots.filter((s) => s.attemptedAtMs > freeIfAttemptedAtOrBeforeMs).map((s) => s.slot));
    for (let slot = 0; slot < slotCount; slot++) {
      if (busy.has(slot)) continue;
      const claimed = await deps.attempts.claimSlot({ subject, bucket, slot, reservation, attemptedAtMs: nowMs, freeIfAttemptedAtOrBeforeMs, expiresAt });
      if (claimed) return { subject, bucket, slot, reservation };
    }
    // Concurrent attempts took every slot this round looked free; read again.
  }
  throw tooManyAttempts(1, `${bucket} slots contended by concurrent attempts`);
}

async function giveBack(attempts: AttemptStore, held: HeldSlot): Promise<void> {
  try {
    await attempts.releaseSlot(held);
  } catch {
    // Losing the release only leaves this slot counted as a failure until the window passes;
    // it must not turn an accepted code (already stored or consumed) into an error.
  }
}
