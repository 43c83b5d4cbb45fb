import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { DynamoExecutionStore } from '../../functions/adapters/aws/dynamo-execution-store.js';
import { useEngines } from '../support/engines.js';

/** The execution store's listing against the embedded DynamoDB, where expired records linger until TTL deletes them. */
const local = useEngines();
const store = () => new DynamoExecutionStore(local.dynamo, local.engines.env.EXECUTIONS_TABLE!, Date.now);
const nowSeconds = () => Math.floor(Date.now() / 1000);

/** Writes records `EXEC#<received_at>#n` for n in `numbers`, expired or not, as TTL would leave them. */
async function putExecutions(triggerId: string, numbers: number[], expired: (n: number) => boolean) {
  for (const n of numbers) {
    const receivedAt = `2024-01-01T00:00:${String(n).padStart(2, '0')}.000Z`;
    await local.dynamo.send(new PutCommand({
      TableName: local.engines.env.EXECUTIONS_TABLE!,
      Item: {
        pk: `TRIGGER#${triggerId}`,
        sk: `EXEC#${receivedAt}#${n}`,
        event_id: `evt_${n}`,
        received_at: receivedAt,
        status: 'succeeded',
        attempts: 1,
        expires_at: expired(n) ? nowSeconds() - 60 : nowSeconds() + 3600,
      },
    }));
  }
}

const range = (count: number) => Array.from({ length: count }, (_, i) => i);

describe('DynamoExecutionStore.list', () => {
  it('fills a page past expired records, newest first, and pages on from there', async () => {
    // 40 records: the newest 6 have expired, and below them only every third is alive.
    await putExecutions('t-expired-run', range(40), (n) => n >= 34 || n % 3 !== 0);
    const first = await store().list('t-expired-run', { limit: 3 });
    expect(first.items.map((item) => item.event_id)).toEqual(['evt_33', 'evt_30', 'evt_27']);
    expect(first.nextCursor).not.toBeNull();

    const rest = await store().list('t-expired-run', { limit: 10, cursor: first.nextCursor! });
    expect(rest.items.map((item) => item.event_id)).toEqual(['evt_24', 'evt_21', 'evt_18', 'evt_15', 'evt_12', 'evt_9', 'evt_6', 'evt_3', 'evt_0']);
    expect(rest.nextCursor).toBeNull();
  });

  it('stops after a bounded number of queries behind a long run of expired records, with a cursor to go on', async () => {
    // Only the oldest record is alive; 30 expired ones are newer. A page of 2 reads at most 8 × 2.
    await putExecutions('t-long-run', range(31), (n) => n !== 0);
    const first = await store().list('t-long-run', { limit: 2 });
    expect(first.items).toEqual([]);
    expect(first.nextCursor).not.toBeNull();
    const second = await store().list('t-long-run', { limit: 2, cursor: first.nextCursor! });
    expect(second).toEqual({ items: [expect.objectContaining({ event_id: 'evt_0' })], nextCursor: null });
  });

  it('a page that takes the last records is followed by an empty one without a cursor', async () => {
    await putExecutions('t-all-alive', range(5), () => false);
    const page = await store().list('t-all-alive', { limit: 5 });
    expect(page.items).toHaveLength(5);
    const next = await store().list('t-all-alive', { limit: 5, cursor: page.nextCursor ?? undefined });
    expect(next).toEqual({ items: [], nextCursor: null });
  });
});
