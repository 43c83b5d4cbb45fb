import { AppError } from '../../shared/errors.js';
import type { Clock } from '../clock.js';
import { addCounts, OUTCOMES, zeroCounts, type Counts } from './outcomes.js';
import { HOUR_MS, isSettled, MINUTE_MS } from './periods.js';
import type { DeliveryStatsStore } from './ports.js';

export type BucketSize = 'minute' | 'hour';
const BUCKET_MS: Record<BucketSize, number> = { minute: MINUTE_MS, hour: HOUR_MS };
/** The most buckets one answer holds: 6 hours by minute, 8 days by hour (deliveries are kept 7). */
export const MAX_BUCKETS: Record<BucketSize, number> = { minute: 360, hour: 192 };
/** Without `since`: the last hour by minute, the last day by hour. */
const DEFAULT_BUCKETS: Record<BucketSize, number> = { minute: 60, hour: 24 };
/** Counts are kept as long as the executions they count. */
const RETENTION_MS = 7 * 24 * HOUR_MS;
/** Hour totals written at once by one read (a week's, the first time): enough to be quick, few enough not to flood. */
const CACHE_WRITES_AT_ONCE = 16;

/** A period to count, whole buckets from `since` (inclusive) to `until` (exclusive), in epoch ms. */
export interface StatsQuery {
  since: number;
  until: number;
  bucket: BucketSize;
}

export type CountsWithTotal = Counts & { total: number };
export interface StatsAnswer {
  bucket: BucketSize;
  since: string;
  until: string;
  /** Every bucket of the period, oldest first, with `start` its first instant. */
  buckets: (CountsWithTotal & { start: string })[];
  totals: CountsWithTotal;
}

const ISO_8601 = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2}))?$/;
const invalid = (detail: string) => new AppError('validation_error', detail, undefined, detail);

function time(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  const ms = ISO_8601.test(value) ? Date.parse(value) : Number.NaN;
  if (!Number.isFinite(ms)) throw invalid(`${name} must be an ISO 8601 date or date-time`);
  return ms;
}

/**
 * `since`, `until` and `bucket` from a query string. `since` is rounded down and `until` up to
 * whole buckets (the answer says the period it counted); without `until` the period ends with the
 * current bucket, without `since` it holds the last 60 minutes or 24 hours.
 */
export function parseStatsQuery(query: Record<string, string | undefined>, nowMs: number): StatsQuery {
  const bucket = query.bucket ?? 'hour';
  if (bucket !== 'minute' && bucket !== 'hour') throw invalid('bucket must be minute or hour');
  const size = BUCKET_MS[bucket];
  const untilMs = time(query.until, 'until');
  const until = Math.ceil((untilMs ?? nowMs + 1) / size) * size;
  const sinceMs = time(query.since, 'since');
  const since = sinceMs === undefined ? until - DEFAULT_BUCKETS[bucket] * size : Math.floor(sinceMs / size) * size;
  if (since >= until) throw invalid('since must be before until');
  if ((until - since) / size > MAX_BUCKETS[bucket]) throw invalid(`at most ${MAX_BUCKETS[bucket]} buckets of a ${bucket} at once`);
  return { since, until, bucket };
}

export interface ReadStatsDeps {
  stats: DeliveryStatsStore;
  now: Clock;
}

const withTotal = (counts: Counts): CountsWithTotal => ({ ...counts, total: OUTCOMES.reduce((sum, outcome) => sum + counts[outcome], 0) });

/** Consecutive runs of the sorted numbers: [1, 2, 3, 7, 8] → [[1, 3], [7, 8]]. */
function runs(sorted: number[]): [number, number][] {
  const found: [number, number][] = [];
  for (const n of sorted) {
    const last = found.at(-1);
    if (last && last[1] === n - 1) last[1] = n;
    else found.push([n, n]);
  }
  return found;
}

/**
 * The trigger's deliveries counted by outcome, per bucket of the period. Minutes are read from the
 * minute counters (one Query per shard). Hours are read from their cached totals where an hour is
 * settled (over 75 minutes past) and its total was cached since its last change; the other hours
 * (the last two or three, those no read cached yet, and those a late count changed) are summed from
 * their minutes, and each settled one's total is cached for the next read. Nothing before the
 * trigger was created, or older than the 7 days counts are kept, is read.
 */
export async function readDeliveryStats(deps: ReadStatsDeps, trigger: { id: string; created_at: string }, query: StatsQuery): Promise<StatsAnswer> {
  const nowMs = deps.now();
  const size = BUCKET_MS[query.bucket];
  const starts = Array.from({ length: (query.until - query.since) / size }, (_, i) => query.since + i * size);
  // Buckets wholly before the trigger existed, or whose counts have all expired, hold nothing to read.
  const firstKept = Math.max(Date.parse(trigger.created_at), nowMs - RETENTION_MS - HOUR_MS);
  const read = starts.filter((start) => start + size > firstKept);
  const counts = new Map<number, Counts>(starts.map((start) => [start, zeroCounts()]));
  const unit = (ms: number) => Math.floor(ms / size);

  const addMinutes = async (fromMinute: number, toMinute: number) => {
    for (const [minute, found] of await deps.stats.minutes(trigger.id, fromMinute, toMinute)) {
      const bucket = counts.get(Math.floor((minute * MINUTE_MS) / size) * size);
      if (bucket) addCounts(bucket, found);
    }
  };

  if (read.length > 0 && query.bucket === 'minute') {
    await addMinutes(unit(read[0]!), unit(read.at(-1)!));
  } else if (read.length > 0) {
    const hourItems = await deps.stats.hours(trigger.id, unit(read[0]!), unit(read.at(-1)!));
    const fromMinutes: number[] = [];
    for (const start of read) {
      const item = hourItems.get(unit(start));
      if (isSettled(unit(start), nowMs) && item?.cached && item.cached.version === item.version) addCounts(counts.get(start)!, item.cached.counts);
      else fromMinutes.push(unit(start));
    }
    await Promise.all(runs(fromMinutes).map(([first, last]) => addMinutes(first * 60, last * 60 + 59)));
    // A settled hour none of whose minutes has expired yet: its total stays right until the hour item expires.
    const toCache = fromMinutes.filter((hour) => isSettled(hour, nowMs) && nowMs < hour * HOUR_MS + RETENTION_MS);
    for (let i = 0; i < toCache.length; i += CACHE_WRITES_AT_ONCE) {
      await Promise.all(toCache.slice(i, i + CACHE_WRITES_AT_ONCE).map((hour) =>
        deps.stats.cacheHour(trigger.id, hour, counts.get(hour * HOUR_MS)!, hourItems.get(hour)?.version ?? 0)));
    }
  }

  const totals = zeroCounts();
  for (const bucket of counts.values()) addCounts(totals, bucket);
  return {
    bucket: query.bucket,
    since: new Date(query.since).toISOString(),
    until: new Date(query.until).toISOString(),
    buckets: starts.map((start) => ({ start: new Date(start).toISOString(), ...withTotal(counts.get(start)!) })),
    totals: withTotal(totals),
  };
}

/** Triggers whose counts one call reads at once (each is one Query of hours and one per shard). */
const TRIGGERS_AT_ONCE = 4;

/**
 * The counts of several triggers over one period (a page of the triggers list, for a dashboard),
 * each with its id, name (its own, or its flow's when it has none), flow and whether it is enabled.
 */
export async function readManyDeliveryStats(
  deps: ReadStatsDeps,
  triggers: readonly { id: string; created_at: string; name?: string | null; flow: string; enabled: boolean }[],
  query: StatsQuery,
) {
  const answers: (Omit<StatsAnswer, 'bucket' | 'since' | 'until'> & { trigger_id: string; name: string; flow: string; enabled: boolean })[] = [];
  for (let i = 0; i < triggers.length; i += TRIGGERS_AT_ONCE) {
    answers.push(...await Promise.all(triggers.slice(i, i + TRIGGERS_AT_ONCE).map(async (trigger) => {
      const { buckets, totals } = await readDeliveryStats(deps, trigger, query);
      return { trigger_id: trigger.id, name: trigger.name ?? trigger.flow, flow: trigger.flow, enabled: trigger.enabled, buckets, totals };
    })));
  }
  return { bucket: query.bucket, since: new Date(query.since).toISOString(), until: new Date(query.until).toISOString(), triggers: answers };
}
