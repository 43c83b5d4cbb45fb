import type { Counts, CountChange } from './outcomes.js';

/** An hour's item: how often late counts changed it, and the total a reader cached, with the version it was cached at. */
export interface HourItem {
  version: number;
  cached?: { counts: Counts; version: number };
}

/**
 * Delivery counts of triggers, per minute, kept as deliveries are recorded (never by reading the
 * executions), with hour totals that readers cache. Items expire with the executions (7 days).
 */
export interface DeliveryStatsStore {
  /** Adds `change` to the trigger's minute: one write, on the trigger's shard for `shardKey` (an execution id). */
  add(triggerId: string, minute: number, shardKey: string, change: CountChange): Promise<void>;
  /** Marks an hour's cached total stale: a late count changed one of its minutes. */
  markHourChanged(triggerId: string, hour: number): Promise<void>;
  /** The trigger's counts by minute in [fromMinute, toMinute], summed over its shards; minutes without counts are absent. */
  minutes(triggerId: string, fromMinute: number, toMinute: number): Promise<Map<number, Counts>>;
  /** The trigger's hour items in [fromHour, toHour]; hours without one are absent. */
  hours(triggerId: string, fromHour: number, toHour: number): Promise<Map<number, HourItem>>;
  /** Caches an hour's total, unless the hour changed since `version` was read; false then. */
  cacheHour(triggerId: string, hour: number, counts: Counts, version: number): Promise<boolean>;
}
