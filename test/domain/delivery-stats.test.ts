import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CountingExecutionStore } from '../../functions/adapters/counting-execution-store.js';
import { newExecutionId } from '../../functions/domain/flows/execution-id.js';
import type { ExecutionChange, ExecutionStatus, ExecutionStore, NewExecution, RecordState, ReplacingUpdate } from '../../functions/domain/flows/ports.js';
import { addCounts, countOfChange, countOfRecord, countOfState, LIST_STATUSES, OUTCOMES, zeroCounts, type Outcome } from '../../functions/domain/stats/outcomes.js';
import { HOUR_MS, isLate, isSettled, MINUTE_MS } from '../../functions/domain/stats/periods.js';
import { parseStatsQuery, readDeliveryStats } from '../../functions/domain/stats/read-stats.js';
import { countAtOnce, StatsTally } from '../../functions/domain/stats/tally.js';
import { AppError } from '../../functions/shared/errors.js';
import { MemoryDeliveryStats } from '../support/memory-delivery-stats.js';

const T0 = Date.parse('2026-05-04T10:00:00.000Z');
const TRIGGER = 'a'.repeat(32);
let ids = 0;
const idAt = (ms: number) => newExecutionId(ms, `r${(ids++).toString(36).padStart(6, '0')}`);
const ref = (ms: number) => ({ triggerId: TRIGGER, executionId: idAt(ms) });
const running = (attempt: number) => ({ attempt, started_at: '', status: 'running' as const });
const finished = (attempt: number, status: 'succeeded' | 'failed') => ({ attempt, started_at: '', finished_at: '', status });

/**
 * Records' statuses and attempts only: what `CountingExecutionStore` needs below it, with the
 * store's rule that a change is written unless the record shows a later attempt or a success
 * (a success is written over a later attempt all the same, keeping its number).
 */
function statusStore() {
  const statuses = new Map<string, ExecutionStatus>();
  const states = new Map<string, RecordState>();
  const store = {
    record: async (r: { executionId: string }, execution: NewExecution) => {
      statuses.set(r.executionId, execution.status);
      states.set(r.executionId, { status: execution.status, attempts: execution.attempts });
    },
    updateReplacing: async (r: { executionId: string }, change: ExecutionChange): Promise<ReplacingUpdate> => {
      const before = states.get(r.executionId)!;
      if (before.status === 'succeeded') return { result: 'succeeded_already' };
      if (before.attempts > change.attempts && change.status !== 'succeeded') return { result: 'outdated' };
      states.set(r.executionId, { status: change.status, attempts: Math.max(before.attempts, change.attempts) });
      statuses.set(r.executionId, change.status);
      return { result: 'written', replaced: before };
    },
  } as unknown as ExecutionStore;
  return { statuses, states, store };
}

describe('what a record or a change of it counts', () => {
  it('countOfRecord counts the outcomes the receiver decides, and nothing for an accepted delivery', () => {
    for (const status of ['refused', 'ignored', 'duplicate', 'handshake'] as const) expect(countOfRecord(status)).toEqual({ [status]: 1 });
    expect(countOfRecord('queued')).toEqual({});
    expect(countOfRecord('running')).toEqual({});
  });

  it('countOfState: an accepted delivery counts nothing until a run of it finishes; then queued while a retry is due or runs, then its outcome', () => {
    expect(countOfState({ status: 'queued', attempts: 0 })).toEqual({});
    expect(countOfState({ status: 'running', attempts: 1 })).toEqual({});
    expect(countOfState({ status: 'queued', attempts: 1 })).toEqual({ queued: 1 });
    expect(countOfState({ status: 'running', attempts: 2 })).toEqual({ queued: 1 });
    expect(countOfState({ status: 'succeeded', attempts: 3 })).toEqual({ succeeded: 1 });
    expect(countOfState({ status: 'failed', attempts: 5 })).toEqual({ failed: 1 });
  });

  it('countOfChange moves a delivery from what it counted as to what it counts as: a first run, a retry, a restart, a redrive', () => {
    expect(countOfChange({ status: 'queued', attempts: 0 }, { status: 'running', attempts: 1 })).toEqual({});
    expect(countOfChange({ status: 'running', attempts: 1 }, { status: 'succeeded', attempts: 1 })).toEqual({ succeeded: 1 });
    expect(countOfChange({ status: 'running', attempts: 1 }, { status: 'queued', attempts: 1 })).toEqual({ queued: 1 });
    expect(countOfChange({ status: 'queued', attempts: 1 }, { status: 'running', attempts: 2 })).toEqual({});
    expect(countOfChange({ status: 'running', attempts: 2 }, { status: 'succeeded', attempts: 2 })).toEqual({ succeeded: 1, queued: -1 });
    expect(countOfChange({ status: 'running', attempts: 5 }, { status: 'failed', attempts: 5 })).toEqual({ failed: 1, queued: -1 });
    // A restart marks a delivery failed whose run it cannot finish: queued goes only where one was counted.
    expect(countOfChange({ status: 'queued', attempts: 0 }, { status: 'failed', attempts: 0 })).toEqual({ failed: 1 });
    expect(countOfChange({ status: 'queued', attempts: 2 }, { status: 'failed', attempts: 2 })).toEqual({ failed: 1, queued: -1 });
    // A redriven event's new run moves it out of failed.
    expect(countOfChange({ status: 'failed', attempts: 5 }, { status: 'succeeded', attempts: 6 })).toEqual({ succeeded: 1, failed: -1 });
  });

  /**
   * Every way a delivery's record is written (the receiver's outcomes, wait mode, acknowledged
   * runs with retries, a local restart interrupting a run), in any mix: at rest, the counts are the
   * records by status, less the accepted deliveries whose first run has not finished.
   */
  it('at rest, the counts equal the records by status (property)', async () => {
    // Acknowledged: runs that fail with a retry due, or that a restart interrupts (then recorded as a
    // failed attempt and queued again); then a success, a last failure, a restart that cannot queue
    // it again (marked failed, with or without a run under way), or nothing yet.
    type End = 'succeed' | 'fail_last' | 'pending' | 'unreplayable_running' | 'unreplayable_waiting';
    const delivery = fc.oneof(
      fc.record({ kind: fc.constantFrom('refused', 'ignored', 'duplicate', 'handshake') }),
      fc.record({ kind: fc.constant('wait'), ok: fc.boolean() }),
      fc.record({
        kind: fc.constant('acknowledge'),
        failures: fc.array(fc.constantFrom('retry', 'interrupted'), { maxLength: 4 }),
        end: fc.constantFrom<End>('succeed', 'fail_last', 'pending', 'unreplayable_running', 'unreplayable_waiting'),
      }),
    );
    await fc.assert(fc.asyncProperty(fc.array(delivery, { maxLength: 30 }), fc.boolean(), async (deliveries, batched) => {
      const stats = new MemoryDeliveryStats();
      const { statuses, store } = statusStore();
      const tally = new StatsTally();
      const counted = new CountingExecutionStore(store, batched ? tally : countAtOnce(stats, () => T0));
      const firstRunOpen = new Set<string>();
      for (const d of deliveries) {
        const r = ref(T0);
        if (d.kind === 'wait') {
          await counted.record(r, { event_id: 'e', received_at: '', status: 'running', attempts: 1 });
          await counted.update(r, { status: d.ok ? 'succeeded' : 'failed', attempts: 1, attempt: finished(1, d.ok ? 'succeeded' : 'failed') });
        } else if (d.kind === 'acknowledge') {
          await counted.record(r, { event_id: 'e', received_at: '', status: 'queued', attempts: 0 });
          let attempt = 0;
          const run = () => counted.update(r, { status: 'running', attempts: ++attempt, attempt: running(attempt) });
          const finish = (status: 'queued' | 'succeeded' | 'failed', error?: string) =>
            counted.update(r, { status, attempts: attempt, ...(error && { error }), attempt: finished(attempt, status === 'succeeded' ? 'succeeded' : 'failed') });
          for (const failure of d.failures) {
            await run();
            await finish('queued', failure === 'interrupted' ? 'interrupted' : 'Fixture.Failed');
          }
          if (d.end === 'succeed') {
            await run();
            await finish('succeeded');
          } else if (d.end === 'fail_last') {
            await run();
            await finish('failed', 'Fixture.Failed');
          } else if (d.end === 'unreplayable_running') {
            await run();
            await finish('failed', 'interrupted: its trigger was deleted');
          } else if (d.end === 'unreplayable_waiting') {
            await counted.update(r, { status: 'failed', attempts: attempt, error: 'interrupted: its trigger was deleted' });
          } else if (attempt === 0) {
            firstRunOpen.add(r.executionId);
          }
        } else {
          await counted.record(r, { event_id: 'e', received_at: '', status: d.kind, attempts: 0 });
        }
      }
      await tally.flush(stats, () => T0);
      const [counts = zeroCounts()] = (await stats.minutes(TRIGGER, 0, Number.MAX_SAFE_INTEGER)).values();
      const expected = zeroCounts();
      for (const [id, status] of statuses) {
        if (firstRunOpen.has(id)) continue;
        const outcome = OUTCOMES.find((o) => LIST_STATUSES[o].includes(status)) as Outcome;
        expected[outcome]++;
      }
      expect(counts).toEqual(expected);
    }), { numRuns: 200 });
  });
});

describe('CountingExecutionStore and copies of one event', () => {
  const countsOf = async (stats: MemoryDeliveryStats) => (await stats.minutes(TRIGGER, 0, Number.MAX_SAFE_INTEGER)).values().next().value ?? zeroCounts();

  it('a change that finds the record succeeded already counts nothing: the success was counted by the write that made it', async () => {
    const stats = new MemoryDeliveryStats();
    const { store } = statusStore();
    const counted = new CountingExecutionStore(store, countAtOnce(stats, () => T0));
    const r = ref(T0);
    await counted.record(r, { event_id: 'e', received_at: '', status: 'queued', attempts: 0 });
    // A direct run and its queued fallback, both attempt 1: the first succeeds, the second fails after it.
    await counted.update(r, { status: 'succeeded', attempts: 1, attempt: finished(1, 'succeeded') });
    expect(await counted.update(r, { status: 'queued', attempts: 1, attempt: finished(1, 'failed') })).toBe('succeeded_already');
    expect(await countsOf(stats)).toEqual({ ...zeroCounts(), succeeded: 1 });
  });

  it('whatever order two copies write in, the delivery is counted once, as the record shows (property)', async () => {
    // Each copy writes its run's start and its end under its own attempt numbers; the writes interleave.
    const copy = fc.record({ from: fc.integer({ min: 1, max: 3 }), runs: fc.array(fc.constantFrom('failed', 'succeeded', 'last_failed'), { minLength: 1, maxLength: 3 }) });
    await fc.assert(fc.asyncProperty(copy, copy, fc.array(fc.boolean(), { maxLength: 24 }), async (a, b, order) => {
      const stats = new MemoryDeliveryStats();
      const { states, store } = statusStore();
      const counted = new CountingExecutionStore(store, countAtOnce(stats, () => T0));
      const r = ref(T0);
      await counted.record(r, { event_id: 'e', received_at: '', status: 'queued', attempts: 0 });
      const writes = (c: typeof a) => c.runs.flatMap((end, i): ExecutionChange[] => {
        const attempt = c.from + i;
        return [
          { status: 'running', attempts: attempt, attempt: running(attempt) },
          end === 'succeeded' ? { status: 'succeeded', attempts: attempt, attempt: finished(attempt, 'succeeded') }
            : { status: end === 'last_failed' ? 'failed' : 'queued', attempts: attempt, attempt: finished(attempt, 'failed') },
        ];
      });
      const [left, right] = [writes(a), writes(b)];
      for (const takeLeft of order) {
        const next = (takeLeft ? left : right).shift() ?? (takeLeft ? right : left).shift();
        if (next) await counted.update(r, next);
      }
      for (const next of [...left, ...right]) await counted.update(r, next);
      // The counts are what the record, as it ends, counts as: once, whatever the order.
      expect(await countsOf(stats)).toEqual(addCounts(zeroCounts(), countOfState(states.get(r.executionId)!)));
    }), { numRuns: 300 });
  });
});

describe('StatsTally', () => {
  it('writes one ADD per trigger and minute, whatever the batch holds', async () => {
    const stats = new MemoryDeliveryStats();
    const tally = new StatsTally();
    for (let i = 0; i < 10; i++) await tally.count(ref(T0 + i * 1000), { succeeded: 1 });
    await tally.count(ref(T0 + MINUTE_MS), { failed: 1 });
    await tally.count({ triggerId: 'b'.repeat(32), executionId: idAt(T0) }, { succeeded: 1 });
    await tally.count(ref(T0), {});
    await tally.flush(stats, () => T0 + 2 * MINUTE_MS);
    expect(stats.calls.add).toBe(3);
    expect(stats.calls.markHourChanged).toBe(0);
    const minutes = await stats.minutes(TRIGGER, 0, Number.MAX_SAFE_INTEGER);
    expect(minutes.get(T0 / MINUTE_MS)).toMatchObject({ succeeded: 10 });
    expect(minutes.get(T0 / MINUTE_MS + 1)).toMatchObject({ failed: 1 });
    // Flushed: a second flush writes nothing.
    await tally.flush(stats, () => T0);
    expect(stats.calls.add).toBe(3);
  });

  it('a change that cancels out writes nothing; a late one marks its hour changed', async () => {
    const stats = new MemoryDeliveryStats();
    const tally = new StatsTally();
    await tally.count(ref(T0), { queued: 1 });
    await tally.count(ref(T0), { queued: -1 });
    await tally.flush(stats, () => T0);
    expect(stats.calls.add).toBe(0);
    await tally.count(ref(T0), { succeeded: 1, queued: -1 });
    await tally.flush(stats, () => T0 + 2 * HOUR_MS);
    expect([stats.calls.add, stats.calls.markHourChanged]).toEqual([1, 1]);
  });

  it('a count is late an hour after its hour ended; an hour is settled 75 minutes after', () => {
    const minute = T0 / MINUTE_MS + 30;
    expect(isLate(minute, T0 + 2 * HOUR_MS - 1)).toBe(false);
    expect(isLate(minute, T0 + 2 * HOUR_MS)).toBe(true);
    expect(isSettled(T0 / HOUR_MS, T0 + HOUR_MS + 75 * MINUTE_MS - 1)).toBe(false);
    expect(isSettled(T0 / HOUR_MS, T0 + HOUR_MS + 75 * MINUTE_MS)).toBe(true);
  });
});

describe('parseStatsQuery', () => {
  const now = T0 + 90 * MINUTE_MS + 12_345;
  const iso = (ms: number) => new Date(ms).toISOString();

  it('defaults to the last 24 hours by hour, ending with the current hour', () => {
    expect(parseStatsQuery({}, now)).toEqual({ bucket: 'hour', since: T0 + 2 * HOUR_MS - 24 * HOUR_MS, until: T0 + 2 * HOUR_MS });
  });

  it('by minute, the last 60 minutes ending with the current one', () => {
    const until = T0 + 91 * MINUTE_MS;
    expect(parseStatsQuery({ bucket: 'minute' }, now)).toEqual({ bucket: 'minute', since: until - HOUR_MS, until });
  });

  it('rounds since down and until up to whole buckets', () => {
    expect(parseStatsQuery({ since: iso(T0 + 61_000), until: iso(T0 + 3 * MINUTE_MS + 1), bucket: 'minute' }, now)).toEqual({ bucket: 'minute', since: T0 + MINUTE_MS, until: T0 + 4 * MINUTE_MS });
    expect(parseStatsQuery({ since: '2026-05-04', until: '2026-05-04T10:00:00Z' }, now)).toEqual({ bucket: 'hour', since: Date.parse('2026-05-04'), until: T0 });
  });

  it.each([
    [{ bucket: 'day' }, 'bucket must be minute or hour'],
    [{ since: 'yesterday' }, 'since must be an ISO 8601 date or date-time'],
    [{ until: '2026-13-45T99:00Z' }, 'until must be an ISO 8601 date or date-time'],
    [{ since: iso(T0), until: iso(T0) }, 'since must be before until'],
    [{ since: iso(T0), until: iso(T0 + 361 * MINUTE_MS), bucket: 'minute' }, 'at most 360 buckets of a minute at once'],
    [{ since: iso(T0), until: iso(T0 + 193 * HOUR_MS) }, 'at most 192 buckets of a hour at once'],
  ])('%j is a validation_error: %s', (query, message) => {
    let thrown: unknown;
    try {
      parseStatsQuery(query, now);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(AppError);
    expect(thrown).toMatchObject({ code: 'validation_error', publicMessage: message });
  });
});

describe('readDeliveryStats', () => {
  const created_at = new Date(T0 - 30 * 24 * HOUR_MS).toISOString();
  const trigger = { id: TRIGGER, created_at };
  const minute = (ms: number) => ms / MINUTE_MS;

  it('by minute: every bucket of the period, zeros included, summed over shards, with totals', async () => {
    const stats = new MemoryDeliveryStats();
    await stats.add(TRIGGER, minute(T0), 'x0', { succeeded: 2, refused: 1 });
    await stats.add(TRIGGER, minute(T0), 'x1', { succeeded: 1 });
    await stats.add(TRIGGER, minute(T0) + 2, 'x0', { failed: 1 });
    await stats.add(TRIGGER, minute(T0) + 3, 'x0', { failed: 9 }); // outside the period
    const answer = await readDeliveryStats({ stats, now: () => T0 + 5 * MINUTE_MS }, trigger, { bucket: 'minute', since: T0, until: T0 + 3 * MINUTE_MS });
    expect(answer.buckets.map((b) => [b.start, b.succeeded, b.failed, b.refused, b.total])).toEqual([
      ['2026-05-04T10:00:00.000Z', 3, 0, 1, 4], ['2026-05-04T10:01:00.000Z', 0, 0, 0, 0], ['2026-05-04T10:02:00.000Z', 0, 1, 0, 1],
    ]);
    expect(answer.totals).toEqual({ ...zeroCounts(), succeeded: 3, failed: 1, refused: 1, total: 5 });
    expect([answer.since, answer.until, answer.bucket]).toEqual(['2026-05-04T10:00:00.000Z', '2026-05-04T10:03:00.000Z', 'minute']);
  });

  it('by hour: a settled hour is summed from its minutes once and cached; the next read takes the cache and reads only the recent minutes', async () => {
    const stats = new MemoryDeliveryStats();
    await stats.add(TRIGGER, minute(T0) + 5, 'x0', { succeeded: 4 });
    await stats.add(TRIGGER, minute(T0) + 59, 'x3', { failed: 1 });
    await stats.add(TRIGGER, minute(T0 + 3 * HOUR_MS) + 1, 'x3', { ignored: 2 });
    const now = () => T0 + 3 * HOUR_MS + 10 * MINUTE_MS;
    const query = { bucket: 'hour' as const, since: T0 - HOUR_MS, until: T0 + 4 * HOUR_MS };
    const first = await readDeliveryStats({ stats, now }, trigger, query);
    expect(first.buckets.map((b) => b.total)).toEqual([0, 5, 0, 0, 2]);
    // At 13:10, 09:00 and 10:00 are settled (ended over 75 minutes ago); 11:00 (ended 70 minutes ago) is not.
    expect(stats.calls.cacheHour).toBe(2);
    stats.calls.minutes.length = 0;
    const second = await readDeliveryStats({ stats, now }, trigger, query);
    expect(second).toEqual(first);
    // Only 11:00 to 13:59 are read from minutes.
    expect(stats.calls.minutes).toEqual([[minute(T0 + HOUR_MS), minute(T0 + 4 * HOUR_MS) - 1]]);
    expect(stats.calls.cacheHour).toBe(2);
  });

  it('a late count marks its hour changed: the next read sums its minutes again and caches the new total', async () => {
    const stats = new MemoryDeliveryStats();
    await stats.add(TRIGGER, minute(T0) + 5, 'x0', { queued: 1 });
    const now = () => T0 + 5 * HOUR_MS;
    const query = { bucket: 'hour' as const, since: T0, until: T0 + HOUR_MS };
    expect((await readDeliveryStats({ stats, now }, trigger, query)).totals).toMatchObject({ queued: 1, total: 1 });
    const tally = new StatsTally();
    await tally.count({ triggerId: TRIGGER, executionId: idAt(T0 + 5 * MINUTE_MS) }, { queued: -1, succeeded: 1 });
    await tally.flush(stats, now);
    expect((await readDeliveryStats({ stats, now }, trigger, query)).totals).toMatchObject({ queued: 0, succeeded: 1, total: 1 });
    stats.calls.minutes.length = 0;
    expect((await readDeliveryStats({ stats, now }, trigger, query)).totals).toMatchObject({ queued: 0, succeeded: 1, total: 1 });
    expect(stats.calls.minutes).toEqual([]);
  });

  it('reads nothing for hours before the trigger was created', async () => {
    const stats = new MemoryDeliveryStats();
    const now = () => T0 + 30 * MINUTE_MS;
    const answer = await readDeliveryStats({ stats, now }, { id: TRIGGER, created_at: new Date(T0 + MINUTE_MS).toISOString() }, { bucket: 'hour', since: T0 - 24 * HOUR_MS, until: T0 + HOUR_MS });
    expect(answer.buckets).toHaveLength(25);
    expect(stats.calls.minutes).toEqual([[minute(T0), minute(T0) + 59]]);
    expect(stats.calls.cacheHour).toBe(0);
  });
});
