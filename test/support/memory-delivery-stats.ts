import { addCounts, zeroCounts, type CountChange, type Counts } from '../../functions/domain/stats/outcomes.js';
import type { DeliveryStatsStore, HourItem } from '../../functions/domain/stats/ports.js';

/** The counters in memory, with what each method was asked, for domain tests. */
export class MemoryDeliveryStats implements DeliveryStatsStore {
  readonly minuteItems = new Map<string, Counts>();
  readonly hourItems = new Map<string, HourItem>();
  readonly calls = { add: 0, markHourChanged: 0, minutes: [] as [number, number][], hours: 0, cacheHour: 0 };

  async add(triggerId: string, minute: number, shardKey: string, change: CountChange): Promise<void> {
    this.calls.add++;
    const key = `${triggerId}#${minute}#${shardKey.slice(-1)}`;
    this.minuteItems.set(key, addCounts(this.minuteItems.get(key) ?? zeroCounts(), change));
  }

  async markHourChanged(triggerId: string, hour: number): Promise<void> {
    this.calls.markHourChanged++;
    const item = this.hourItems.get(`${triggerId}#${hour}`);
    this.hourItems.set(`${triggerId}#${hour}`, { ...item, version: (item?.version ?? 0) + 1 });
  }

  async minutes(triggerId: string, fromMinute: number, toMinute: number): Promise<Map<number, Counts>> {
    this.calls.minutes.push([fromMinute, toMinute]);
    const found = new Map<number, Counts>();
    for (const [key, counts] of this.minuteItems) {
      const [trigger, minuteText] = key.split('#');
      const minute = Number(minuteText);
      if (trigger !== triggerId || minute < fromMinute || minute > toMinute) continue;
      found.set(minute, addCounts(found.get(minute) ?? zeroCounts(), counts));
    }
    return found;
  }

  async hours(triggerId: string, fromHour: number, toHour: number): Promise<Map<number, HourItem>> {
    this.calls.hours++;
    const found = new Map<number, HourItem>();
    for (let hour = fromHour; hour <= toHour; hour++) {
      const item = this.hourItems.get(`${triggerId}#${hour}`);
      if (item) found.set(hour, structuredClone(item));
    }
    return found;
  }

  async cacheHour(triggerId: string, hour: number, counts: Counts, version: number): Promise<boolean> {
    this.calls.cacheHour++;
    const item = this.hourItems.get(`${triggerId}#${hour}`);
    if ((item?.version ?? 0) !== version) return false;
    this.hourItems.set(`${triggerId}#${hour}`, { version, cached: { counts: { ...counts }, version } });
    return true;
  }
}
