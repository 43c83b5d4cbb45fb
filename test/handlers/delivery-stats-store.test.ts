import { QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { DynamoDeliveryStats } from '../../functions/adapters/aws/dynamo-delivery-stats.js';
import { EXECUTION_SHARDS, EXECUTION_TTL_SECONDS, shardOf } from '../../functions/adapters/aws/dynamo-execution-store.js';
import { newExecutionId } from '../../functions/domain/flows/execution-id.js';
import { OUTCOMES, zeroCounts } from '../../functions/domain/stats/outcomes.js';
import { HOUR_MS, MINUTE_MS } from '../../functions/domain/stats/periods.js';
import { useEngines } from '../support/engines.js';

/** The delivery counters against the embedded DynamoDB: small sharded minute items, summed on read; hour totals cached under a version. */
const local = useEngines();
const table = () => local.engines.env.EXECUTIONS_TABLE!;
const NOW = Date.parse('2026-11-01T12:30:00.000Z');
const store = (now = NOW) => new DynamoDeliveryStats(local.dynamo, table(), () => now);
const MINUTE = NOW / MINUTE_MS;
const HOUR = Math.floor(NOW / HOUR_MS);
let n = 0;
const trigger = () => `${(++n).toString(16).padStart(32, '0')}`;
const ids = (count: number) => Array.from({ length: count }, (_, i) => newExecutionId(NOW, `id${i}x${n}`));

describe('DynamoDeliveryStats', () => {
  it('adds to a minute on the shard of the counted execution, and sums the shards when read', async () => {
    const id = trigger();
    const stats = store();
    const executions = ids(40);
    for (const executionId of executions) await stats.add(id, MINUTE, executionId, { succeeded: 1 });
    await stats.add(id, MINUTE, executions[0]!, { failed: 2, queued: 1 });
    await stats.add(id, MINUTE, executions[1]!, { queued: -1 });
    await stats.add(id, MINUTE + 1, executions[0]!, { refused: 1 });
    const minutes = await stats.minutes(id, MINUTE - 5, MINUTE + 5);
    expect([...minutes.keys()]).toEqual([MINUTE, MINUTE + 1]);
    expect(minutes.get(MINUTE)).toEqual({ ...zeroCounts(), succeeded: 40, failed: 2 });
    expect(minutes.get(MINUTE + 1)).toEqual({ ...zeroCounts(), refused: 1 });
    // 40 executions' shards: spread over the trigger's partitions, each holding one small item for the minute.
    const partitions = await Promise.all(Array.from({ length: EXECUTION_SHARDS }, (_, shard) => local.dynamo.send(new QueryCommand({
      TableName: table(), KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': `STATS#${id}#${shard}` },
    }))));
    expect(partitions.filter((p) => (p.Items ?? []).length > 0).length).toBeGreaterThan(4);
    const item = partitions.flatMap((p) => p.Items ?? []).find((i) => i.sk === '2026-11-01T12:30')!;
    expect(JSON.stringify(item).length).toBeLessThan(300);
    expect(item.expires_at).toBe((MINUTE + 1) * 60 + EXECUTION_TTL_SECONDS);
  });

  it('an item whose expiry passed is not read (TTL deletion is lazy)', async () => {
    const id = trigger();
    await store().add(id, MINUTE, 'x', { ignored: 1 });
    const later = store(NOW + (EXECUTION_TTL_SECONDS + 61) * 1000);
    expect((await later.minutes(id, MINUTE, MINUTE)).size).toBe(0);
  });

  it('an hour total is cached at the version read; a late change bumps the version and a cache at the old one is refused', async () => {
    const id = trigger();
    const stats = store();
    const counts = { ...zeroCounts(), succeeded: 3 };
    expect(await stats.hours(id, HOUR - 2, HOUR)).toEqual(new Map());
    expect(await stats.cacheHour(id, HOUR - 2, counts, 0)).toBe(true);
    expect(await stats.hours(id, HOUR - 2, HOUR)).toEqual(new Map([[HOUR - 2, { version: 0, cached: { counts, version: 0 } }]]));
    await stats.markHourChanged(id, HOUR - 2);
    await stats.markHourChanged(id, HOUR - 1);
    const read = await stats.hours(id, HOUR - 2, HOUR);
    expect(read.get(HOUR - 2)).toEqual({ version: 1, cached: { counts, version: 0 } });
    expect(read.get(HOUR - 1)).toEqual({ version: 1 });
    expect(await stats.cacheHour(id, HOUR - 2, { ...counts, succeeded: 4 }, 0)).toBe(false);
    expect(await stats.cacheHour(id, HOUR - 2, { ...counts, succeeded: 4 }, 1)).toBe(true);
    expect((await stats.hours(id, HOUR - 2, HOUR - 2)).get(HOUR - 2)).toEqual({ version: 1, cached: { counts: { ...counts, succeeded: 4 }, version: 1 } });
  });

  it('an ADD bills one write unit, with every outcome counted on the item', async () => {
    const id = trigger();
    const all = Object.fromEntries(OUTCOMES.map((outcome) => [outcome, 123_456])) as Record<string, number>;
    await store().add(id, MINUTE, 'x', all);
    const result = await local.dynamo.send(new UpdateCommand({
      TableName: table(), Key: { pk: `STATS#${id}#${shardOf('x')}`, sk: '2026-11-01T12:30' },
      UpdateExpression: 'ADD #s :one', ExpressionAttributeNames: { '#s': 'succeeded' }, ExpressionAttributeValues: { ':one': 1 }, ReturnConsumedCapacity: 'TOTAL',
    }));
    expect(result.ConsumedCapacity?.CapacityUnits).toBe(1);
  });
});
