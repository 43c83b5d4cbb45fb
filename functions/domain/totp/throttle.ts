/** Failures within the window that block further attempts. */
export const MAX_FAILED_ATTEMPTS = 5;

/** Sliding window over which failures count, in seconds (15 minutes). */
export const ATTEMPT_WINDOW_SECONDS = 900;

/** Result of {@link attemptThrottle}; `retryAfterSeconds` suits a `Retry-After` header (≥ 1). */
export type ThrottleDecision = { blocked: false } | { blocked: true; retryAfterSeconds: number };

/**
 * Whether another attempt may be made. Blocked while {@link MAX_FAILED_ATTEMPTS} failures lie
 * within the last {@link ATTEMPT_WINDOW_SECONDS} (or `maxFailures` within `windowSeconds`); a
 * failure at `t` counts while `now - t < window`.
 *
 * ```
 *  window: now - 900 s ──────────────────────────────── now
 *  failures:     f5        f4     f3   f2        f1        (most recent first)
 *  unblocked at f5 + 900 s, when f5 leaves and only four remain
 * ```
 */
export function attemptThrottle(input: { failureTimesMs: readonly number[]; nowMs: number; maxFailures?: number; windowSeconds?: number }): ThrottleDecision {
  const { failureTimesMs, nowMs, maxFailures = MAX_FAILED_ATTEMPTS, windowSeconds = ATTEMPT_WINDOW_SECONDS } = input;
  const windowMs = windowSeconds * 1000;
  const recent = failureTimesMs.filter((time) => nowMs - time < windowMs).sort((a, b) => b - a);
  if (recent.length < maxFailures) return { blocked: false };
  const unblockAtMs = recent[maxFailures - 1]! + windowMs;
  return { blocked: true, retryAfterSeconds: Math.max(1, Math.ceil((unblockAtMs - nowMs) / 1000)) };
}
