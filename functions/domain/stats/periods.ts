/** Time in the counters' units: epoch minutes and hours (UTC), from the epoch milliseconds a `Clock` gives. */
export const MINUTE_MS = 60_000;
export const HOUR_MS = 60 * MINUTE_MS;

export const minuteOf = (ms: number): number => Math.floor(ms / MINUTE_MS);
export const hourOfMinute = (minute: number): number => Math.floor(minute / 60);

/**
 * A count written this long after its hour ended is late: besides its minute it marks the hour
 * changed, so a cached total of that hour is read again. An hour's deliveries normally finish well
 * within it (five express runs of at most 5 minutes and their backoffs: about half an hour); a
 * worker backlog or a local restart can finish them later.
 */
export const LATE_AFTER_MS = HOUR_MS;
/**
 * The reader caches an hour's total only this long after the hour ended: a count decided not late
 * (before LATE_AFTER_MS) has had 15 minutes to land, far more than one write with its retries.
 */
export const SETTLED_AFTER_MS = LATE_AFTER_MS + 15 * MINUTE_MS;

export const isLate = (minute: number, nowMs: number): boolean => nowMs >= (hourOfMinute(minute) + 1) * HOUR_MS + LATE_AFTER_MS;
export const isSettled = (hour: number, nowMs: number): boolean => nowMs >= (hour + 1) * HOUR_MS + SETTLED_AFTER_MS;
