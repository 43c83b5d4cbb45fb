import { logFault } from '../../shared/logger.js';
import type { Clock } from '../clock.js';
import { receivedAtOf } from '../flows/execution-id.js';
import type { ExecutionRef } from '../flows/ports.js';
import { OUTCOMES, isNoChange, type CountChange } from './outcomes.js';
import { hourOfMinute, isLate, minuteOf } from './periods.js';
import type { DeliveryStatsStore } from './ports.js';

/** Where a recorded change of a delivery's counts goes. */
export interface DeliveryCounter {
  count(ref: ExecutionRef, change: CountChange): Promise<void>;
}

/** A delivery's minute: the one its execution id says it was received in, as the deliveries list's `since`/`until` read it. */
const minuteOfDelivery = (executionId: string) => minuteOf(Date.parse(receivedAtOf(executionId)));

interface Group {
  triggerId: string;
  minute: number;
  /** The first counted execution's id: it picks the shard the group's one write goes to. */
  shardKey: string;
  change: CountChange;
}

/**
 * Counts gathered over a batch of deliveries and written with one ADD per trigger and minute:
 * the flow worker's ten messages of one trigger, received in one minute, cost one write.
 */
export class StatsTally implements DeliveryCounter {
  private readonly groups = new Map<string, Group>();

  async count(ref: ExecutionRef, change: CountChange): Promise<void> {
    if (isNoChange(change)) return;
    const minute = minuteOfDelivery(ref.executionId);
    const key = `${ref.triggerId}#${minute}`;
    let group = this.groups.get(key);
    if (!group) this.groups.set(key, (group = { triggerId: ref.triggerId, minute, shardKey: ref.executionId, change: {} }));
    for (const outcome of OUTCOMES) {
      const by = change[outcome];
      if (by) group.change[outcome] = (group.change[outcome] ?? 0) + by;
    }
  }

  /**
   * Writes what was gathered and starts over. A failed write is logged, not thrown: the deliveries
   * are recorded already, and failing their batch would run their flows again.
   */
  async flush(store: DeliveryStatsStore, now: Clock): Promise<void> {
    const groups = [...this.groups.values()].filter((group) => !isNoChange(group.change));
    this.groups.clear();
    await Promise.all(groups.map(async ({ triggerId, minute, shardKey, change }) => {
      try {
        await store.add(triggerId, minute, shardKey, change);
        if (isLate(minute, now())) await store.markHourChanged(triggerId, hourOfMinute(minute));
      } catch (error) {
        await logFault('delivery counts not recorded', error);
      }
    }));
  }
}

/** A counter that writes each delivery's change as it comes (the receiver: one delivery per request). */
export const countAtOnce = (store: DeliveryStatsStore, now: Clock): DeliveryCounter => ({
  async count(ref, change) {
    if (isNoChange(change)) return;
    const tally = new StatsTally();
    await tally.count(ref, change);
    await tally.flush(store, now);
  },
});
