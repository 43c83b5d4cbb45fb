import type { ExecutionStatus, RecordState } from '../flows/ports.js';

/**
 * What a delivery is counted as, in the order charts stack them: its final outcome, or `queued`
 * while a run that failed waits for its retry (see `countOfState`).
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
 * What a record counts as, from its status and attempts alone:
 *
 *   queued, no attempt made ........................ nothing yet (accepted, first run to come)
 *   running, attempt 1 ............................. nothing yet (its first run under way)
 *   queued after an attempt, or running attempt 2+ . queued (a run failed; a retry is due or under way)
 *   succeeded / failed ............................. that outcome
 *   refused / ignored / duplicate / handshake ...... that outcome (the receiver decided it)
 *
 * A change moves the counts from what the record counted as before it (`ExecutionStore.updateReplacing`
 * reads that back with the same write) to what it counts as after: exact whatever order copies of
 * one event write in, and whatever the record was (a redriven event's `failed` moves to its new
 * outcome).
 */
export function countOfState(state: RecordState): CountChange {
  switch (state.status) {
    case 'queued':
      return state.attempts >= 1 ? { queued: 1 } : {};
    case 'running':
      return state.attempts >= 2 ? { queued: 1 } : {};
    default:
      return { [state.status]: 1 };
  }
}

/** What a change that moved a record from `before` to `after` adds to the counts. */
export function countOfChange(before: RecordState, after: RecordState): CountChange {
  const change: CountChange = { ...countOfState(after) };
  for (const [outcome, n] of Object.entries(countOfState(before)) as [Outcome, number][]) change[outcome] = (change[outcome] ?? 0) - n;
  for (const outcome of OUTCOMES) if (change[outcome] === 0) delete change[outcome];
  return change;
}
