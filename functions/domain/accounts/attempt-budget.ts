import { AppError } from '../../shared/errors.js';
import type { RandomBytes } from '../random-bytes.js';
import { ATTEMPT_WINDOW_SECONDS, MAX_FAILED_ATTEMPTS, attemptThrottle } from '../totp/index.js';
import type { AttemptBucket, AttemptSlot, AttemptStore } from './ports.js';

const RESERVATION_BYTES = 16;

/**
 * Failures across the TOTP and recovery budgets together within the window: fewer than the two
 * budgets' sum, so an attacker alternating between them gets 8 guesses, not 10, while a user
 * whose TOTP budget is spent still has 3 recovery-code tries (and a right code spends nothing).
 */
export const MAX_FAILED_ATTEMPTS_ACROSS_BUDGETS = 8;

/**
 * TOTP failures within {@link DAILY_WINDOW_SECONDS}: the escalation. Three lock-outs of 15 minutes
 * a day, then a fourth that lasts until the oldest of the 20 failures is a day old, so guessing
 * gets about 20 tries a day instead of 5 every 15 minutes (480).
 */
export const MAX_DAILY_TOTP_FAILURES = 20;
/** The window of {@link MAX_DAILY_TOTP_FAILURES}, in seconds (24 hours, rolling). */
export const DAILY_WINDOW_SECONDS = 86_400;

/** A failure budget: at most `maxFailures` failures within `windowSeconds`, one slot each. */
export interface AttemptLimit {
  maxFailures: number;
  windowSeconds: number;
}

/**
 * The budgets. Recovery codes never escalate: they are 50-bit codes (480 tries a day guess one of
 * ten with odds of about 4 in 10^12), and a rescue path that an attacker's guessing could close
 * for a day would let that attacker lock the real user out.
 */
export const ATTEMPT_LIMITS: Readonly<Record<AttemptBucket, AttemptLimit>> = {
  totp: { maxFailures: MAX_FAILED_ATTEMPTS, windowSeconds: ATTEMPT_WINDOW_SECONDS },
  totp_day: { maxFailures: MAX_DAILY_TOTP_FAILURES, windowSeconds: DAILY_WINDOW_SECONDS },
  recovery: { maxFailures: MAX_FAILED_ATTEMPTS, windowSeconds: ATTEMPT_WINDOW_SECONDS },
  any: { maxFailures: MAX_FAILED_ATTEMPTS_ACROSS_BUDGETS, windowSeconds: ATTEMPT_WINDOW_SECONDS },
};

/** What a check spends, by the kind of code it checks: each budget in order. */
const SPENDS = {
  totp: ['totp', 'totp_day', 'any'],
  recovery: ['recovery', 'any'],
} as const satisfies Record<string, readonly AttemptBucket[]>;

/** The kind of code a check is of: it decides the budgets it spends. */
export type CodeKind = keyof typeof SPENDS;

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

/** When `slots` (of `bucket`) refuse another attempt at `nowMs`: the seconds until they would not. */
function blockedFor(bucket: AttemptBucket, slots: readonly AttemptSlot[], nowMs: number): number | undefined {
  const { maxFailures, windowSeconds } = ATTEMPT_LIMITS[bucket];
  const decision = attemptThrottle({ failureTimesMs: slots.map((s) => s.attemptedAtMs), nowMs, maxFailures, windowSeconds });
  return decision.blocked ? decision.retryAfterSeconds : undefined;
}

/**
 * Runs one code check against the user's failure budgets for its kind of code: for a TOTP code
 * or a step-up proof, at most {@link MAX_FAILED_ATTEMPTS} failed checks within
 * {@link ATTEMPT_WINDOW_SECONDS} and {@link MAX_DAILY_TOTP_FAILURES} within
 * {@link DAILY_WINDOW_SECONDS}; for a recovery code, {@link MAX_FAILED_ATTEMPTS} within the 15
 * minutes and no daily cap; for both, {@link MAX_FAILED_ATTEMPTS_ACROSS_BUDGETS} in all within
 * the 15 minutes. Past any of them: 429 `too_many_attempts` with `Retry-After` until the last
 * budget that refuses has room again (the longest wait, so a day's lock-out is not announced as
 * its first 15 minutes).
 *
 * ```
 *  budgets     totp [0..4]  totp_day [0..19]  any [0..7]      one item per slot
 *  read        every budget first: if one refuses, 429 and nothing is claimed
 *  claim       conditional put per budget: slot absent, or its attempt is a window old
 *  check fails (invalid_code)  → the slots stay claimed: a failure that counts for its window
 *  otherwise (success, 409, 503…) → the slots are given back: only wrong codes spend the budget
 * ```
 *
 * Nothing but time gives a failure back: a success does not reset the budgets, or the real user
 * signing in would hand an attacker guessing alongside a fresh day of guesses.
 *
 * Each slot is claimed before `check` runs and each claim is a single conditional write, so a
 * burst of concurrent guesses cannot get more than five checks in any 15 minutes (nor twenty in
 * a day): each needs a slot of its own in every budget. An attempt in flight counts as a failure
 * until it resolves. Nothing relies on the store's TTL (dynalite has none): a slot is free by the
 * time its attempt was made.
 *
 * @param check - throws AppError `invalid_code` for a wrong code (or `mfa_required` for a presented proof that does not hold).
 */
export async function withAttemptBudget<T>(
  deps: AttemptBudgetDeps,
  input: { subject: string; bucket: CodeKind; nowMs: number },
  check: () => Promise<T>,
): Promise<T> {
  const { subject, nowMs } = input;
  const buckets = SPENDS[input.bucket];
  const listed = await Promise.all(buckets.map((bucket) => deps.attempts.listSlots(subject, bucket)));
  const waits = buckets.map((bucket, i) => blockedFor(bucket, listed[i]!, nowMs)).filter((wait) => wait !== undefined);
  if (waits.length > 0) throw tooManyAttempts(Math.max(...waits), `${input.bucket} failure budget spent`);

  const held: HeldSlot[] = [];
  try {
    for (const [i, bucket] of buckets.entries()) held.push(await claimSlot(deps, { subject, bucket, nowMs }, listed[i]!));
  } catch (error) {
    await giveBack(deps.attempts, held);
    throw error;
  }
  try {
    const result = await check();
    await giveBack(deps.attempts, held);
    return result;
  } catch (error) {
    if (!isCountedFailure(error)) await giveBack(deps.attempts, held);
    throw error;
  }
}

async function claimSlot(
  deps: AttemptBudgetDeps,
  input: { subject: string; bucket: AttemptBucket; nowMs: number },
  firstRead: readonly AttemptSlot[],
): Promise<HeldSlot> {
  const { subject, bucket, nowMs } = input;
  const { maxFailures: slotCount, windowSeconds } = ATTEMPT_LIMITS[bucket];
  const windowMs = windowSeconds * 1000;
  const reservation = Buffer.from(deps.randomBytes(RESERVATION_BYTES)).toString('hex');
  // A failure at t counts while now - t < window (as attemptThrottle has it): free once t <= now - window.
  const freeIfAttemptedAtOrBeforeMs = nowMs - windowMs;
  const expiresAt = Math.ceil((nowMs + windowMs) / 1000);
  // Read-then-claim rounds lost to concurrent attempts before answering 429 anyway.
  for (let round = 0; round <= slotCount; round++) {
    const slots = round === 0 ? firstRead : await deps.attempts.listSlots(subject, bucket);
    const wait = blockedFor(bucket, slots, nowMs);
    if (wait !== undefined) throw tooManyAttempts(wait, `${bucket} failure budget spent`);
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

async function giveBack(attempts: AttemptStore, held: readonly HeldSlot[]): Promise<void> {
  await Promise.all(held.map(async (slot) => {
    try {
      await attempts.releaseSlot(slot);
    } catch {
      // Losing the release only leaves this slot counted as a failure until its window passes;
      // it must not turn an accepted code (already stored or consumed) into an error.
    }
  }));
}
