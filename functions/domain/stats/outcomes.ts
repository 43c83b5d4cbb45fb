import type { ExecutionChange, ExecutionStatus } from '../flows/ports.js';

/**
 * What a delivery is counted as, in the order charts stack them: its final outcome, or `queued`
 * while a run that failed waits for its retry (see `countOfUpdate`).
 */
export const OUTCOMES = ['succeeded', 'failed', 'refused', 'ignored', 'duplicate', 'handshake', 'queued'] as const;
export type Outcome = (typeof OUTCOMES)[number];
export type Counts = Record<Outcome, number>;
/** A change to counts: outcomes not named are unchanged (a count may go down: `queued: -1`). */
export type CountChange = Partial<Counts>;

/** The statuses of the deliveries list (`GET /triggers/{id}/executions?status=`) each outcome counts. */
export const LIST_STATUSES: Record<Outcome, readonly ExecutionStatus[]> = {
  succeeded: ['succeeded'],
  failed: ['failed'],
  refused: ['refused'],
  ignored: ['ignored'],
  duplicate: ['duplicate'],
  handshake: ['handshake'],
  queued: ['queued', 'running'],
};

export const zeroCounts = (): Counts => ({ succeeded: 0, failed: 0, refused: 0, ignored: 0, duplicate: 0, handshake: 0, queued: 0 });

/** `into` plus `change`, in place. */
export function addCounts(into: Counts, change: CountChange): Counts {
  for (const outcome of OUTCOMES) into[outcome] += change[outcome] ?? 0;
  return into;
}

export const isNoChange = (change: CountChange): boolean => OUTCOMES.every((outcome) => !change[outcome]);

/** Statuses whose first record is already the delivery's outcome: the receiver decided it. */
const DECIDED_AT_RECORD: ReadonlySet<ExecutionStatus> = new Set(['refused', 'ignored', 'duplicate', 'handshake']);

/**
 * What a new execution record adds to its trigger's counts. An accepted delivery (`queued`, or
 * `running` in wait mode) adds nothing yet: its outcome is counted by the write that records it.
 */
export const countOfRecord = (status: ExecutionStatus): CountChange => (DECIDED_AT_RECORD.has(status) ? { [status]: 1 } : {});

/**
 * What a change of an execution record adds to the counts. The rule follows the record's own life,
 * so it needs no read of the record:
 *
 *   accepted ── run 1 ──┬── succeeded / failed ...................... +1 that outcome
 *   (not counted)       └── failed, retry due: queued ............... +1 queued
 *                             ── run n ──┬── succeeded / failed ..... -1 queued, +1 that outcome
 *                                        └── failed again: queued ... (already counted)
 *
 * A delivery is counted `queued` once an attempt of it has finished without a final outcome: the
 * attempts finished before this write are the attempt's number less one when the change finishes
 * an attempt (`change.attempt`), else `attempts`. A `running` change counts nothing.
 */
export function countOfUpdate(change: Pick<ExecutionChange, 'status' | 'attempts' | 'attempt'>): CountChange {
  const finishedBefore = change.attempt ? change.attempt.attempt - 1 : change.attempts;
  const waiting = finishedBefore >= 1;
  switch (change.status) {
    case 'queued':
      return waiting ? {} : { queued: 1 };
    case 'succeeded':
    case 'failed':
      return waiting ? { [change.status]: 1, queued: -1 } : { [change.status]: 1 };
    default:
      return {};
  }
}
