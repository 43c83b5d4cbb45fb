import { PutCommand, QueryCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { epochSeconds, type Clock } from '../../domain/clock.js';
import { OUTCOMES, zeroCounts, type CountChange, type Counts } from '../../domain/stats/outcomes.js';
import { HOUR_MS, MINUTE_MS } from '../../domain/stats/periods.js';
import type { DeliveryStatsStore, HourItem } from '../../domain/stats/ports.js';
import { ifConditionHolds } from './conditional.js';
import { EXECUTION_SHARDS, EXECUTION_TTL_SECONDS, shardOf, statsMinuteExpiry, statsMinuteKey } from './dynamo-execution-store.js';

/** `2026-05-01T12:34`: a minute's sort key; an hour's is its first 13 characters. Both sort as time does. */
const minuteKey = (minute: number) => new Date(minute * MINUTE_MS).toISOString().slice(0, 16);
const hourKey = (hour: number) => new Date(hour * HOUR_MS).toISOString().slice(0, 13);
const minuteFromKey = (sk: string) => Date.parse(`${sk}:00Z`) / MINUTE_MS;
const hourFromKey = (sk: string) => Date.parse(`${sk}:00:00Z`) / HOUR_MS;
const minutesPk = (triggerId: string, shard: number) => `STATS#${triggerId}#${shard}`;
const hoursPk = (triggerId: string) => `STATS#${triggerId}#hours`;
const countsOf = (item: Record<string, unknown>): Counts => {
  const counts = zeroCounts();
  for (const outcome of OUTCOMES) counts[outcome] = Number(item[outcome] ?? 0);
  return counts;
};

/**
 * Layout, in the executions table (`pk`, `sk`, TTL `expires_at`), beside the trigger's records:
 *
 *   STATS#<trigger>#<shard>  <minute, 2026-05-01T12:34>   counts by outcome, ADDed as deliveries are recorded;
 *                                                         on the trigger's own shard also `budget`, the refusals
 *                                                         and handshakes recorded that minute (`countRefusal`)
 *   STATS#<trigger>#hours    <hour, 2026-05-01T12>        v: late changes; an hour's total a reader cached, at cached_v
 *
 * A minute item holds at most seven numbers and its expiry (well under 1 KB), so each ADD bills one
 * write unit; the shard is the counted execution's (`shardOf`), so a trigger's counting spreads
 * over EXECUTION_SHARDS partitions as its records do. Items expire 7 days after their minute or
 * hour, with the executions they count.
 */
export class DynamoDeliveryStats implements DeliveryStatsStore {
  constructor(private readonly client: DynamoDBDocumentClient, private readonly table: string, private readonly now: Clock) {}

  async add(triggerId: string, minute: number, shardKey: string, change: CountChange): Promise<void> {
    const changed = OUTCOMES.filter((outcome) => change[outcome]);
    if (changed.length === 0) return;
    await this.client.send(new UpdateCommand({
      TableName: this.table,
      Key: statsMinuteKey(triggerId, shardOf(shardKey), minute),
      UpdateExpression: `ADD ${changed.map((outcome) => `#${outcome} :${outcome}`).join(', ')} SET expires_at = :expires`,
      // Outcome names as attribute names, through placeholders: several are DynamoDB reserved words.
      ExpressionAttributeNames: Object.fromEntries(changed.map((outcome) => [`#${outcome}`, outcome])),
      ExpressionAttributeValues: {
        ...Object.fromEntries(changed.map((outcome) => [`:${outcome}`, change[outcome]])),
        ':expires': statsMinuteExpiry(minute),
      },
    }));
  }

  async markHourChanged(triggerId: string, hour: number): Promise<void> {
    await this.client.send(new UpdateCommand({
      TableName: this.table,
      Key: { pk: hoursPk(triggerId), sk: hourKey(hour) },
      UpdateExpression: 'ADD v :one SET expires_at = :expires',
      ExpressionAttributeValues: { ':one': 1, ':expires': epochSeconds((hour + 1) * HOUR_MS) + EXECUTION_TTL_SECONDS },
    }));
  }

  async minutes(triggerId: string, fromMinute: number, toMinute: number): Promise<Map<number, Counts>> {
    const found = new Map<number, Counts>();
    const shards = await Promise.all(Array.from({ length: EXECUTION_SHARDS }, (_, shard) =>
      this.queryAll(minutesPk(triggerId, shard), minuteKey(fromMinute), minuteKey(toMinute))));
    for (const item of shards.flat()) {
      const minute = minuteFromKey(item.sk as string);
      const counts = countsOf(item);
      const sum = found.get(minute);
      if (!sum) found.set(minute, counts);
      else for (const outcome of OUTCOMES) sum[outcome] += counts[outcome];
    }
    return found;
  }

  async hours(triggerId: string, fromHour: number, toHour: number): Promise<Map<number, HourItem>> {
    const items = await this.queryAll(hoursPk(triggerId), hourKey(fromHour), hourKey(toHour));
    return new Map(items.map((item) => [hourFromKey(item.sk as string), {
      version: Number(item.v ?? 0),
      ...(item.cached_v !== undefined && { cached: { counts: countsOf(item), version: Number(item.cached_v) } }),
    }]));
  }

  cacheHour(triggerId: string, hour: number, counts: Counts, version: number): Promise<boolean> {
    return ifConditionHolds(() => this.client.send(new PutCommand({
      TableName: this.table,
      Item: { pk: hoursPk(triggerId), sk: hourKey(hour), ...counts, v: version, cached_v: version, expires_at: epochSeconds((hour + 1) * HOUR_MS) + EXECUTION_TTL_SECONDS },
      // A late count that changed the hour since its version was read wins: the total is read again next time.
      ConditionExpression: version === 0 ? 'attribute_not_exists(v) OR v = :v' : 'v = :v',
      ExpressionAttributeValues: { ':v': version },
    })));
  }

  /** Every item of one partition between two sort keys (inclusive), unexpired (TTL deletion is lazy). */
  private async queryAll(pk: string, lo: string, hi: string): Promise<Record<string, unknown>[]> {
    const nowSeconds = epochSeconds(this.now());
    const items: Record<string, unknown>[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const page = await this.client.send(new QueryCommand({
        TableName: this.table,
        KeyConditionExpression: 'pk = :pk AND sk BETWEEN :lo AND :hi',
        FilterExpression: 'expires_at > :now',
        ExpressionAttributeValues: { ':pk': pk, ':lo': lo, ':hi': hi, ':now': nowSeconds },
        ConsistentRead: true,
        ExclusiveStartKey: start,
      }));
      items.push(...(page.Items ?? []));
      start = page.LastEvaluatedKey;
    } while (start);
    return items;
  }
}
