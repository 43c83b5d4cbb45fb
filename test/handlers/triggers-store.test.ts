import { GetCommand, PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { DynamoTriggerStore } from '../../functions/adapters/aws/dynamo-trigger-store.js';
import type { TriggerRecord } from '../../functions/domain/triggers/trigger.js';
import { useEngines } from '../support/engines.js';
import { DEFAULT_TRIGGER_SETTINGS } from '../support/webhooks.js';

/**
 * The trigger store against the embedded DynamoDB, with a client that can hold one write back, so
 * that a change can be overtaken by another exactly where the two copies of a trigger are written.
 */
const local = useEngines();
const table = () => local.engines.env.TRIGGERS_TABLE!;

let sequence = 0;
function newRecord(): TriggerRecord {
  sequence++;
  return {
    id: sequence.toString(16).padStart(32, '0'),
    account_id: 'acct-store',
    webhook_id: `wh${String(sequence).padStart(30, '0')}`,
    ...DEFAULT_TRIGGER_SETTINGS,
    created_at: '2024-01-01T00:00:00.000Z',
    updated_at: '2024-01-01T00:00:00.000Z',
    version: 1,
  };
}
const changed = (record: TriggerRecord, change: Partial<TriggerRecord>): TriggerRecord => ({ ...record, ...change, version: record.version + 1 });

/** A store whose next write of a receiver copy (`WEBHOOK#…`) waits until `release()`. */
function storeHoldingReceiverCopy() {
  let release!: () => void;
  const released = new Promise<void>((done) => (release = done));
  let reached!: () => void;
  const held = new Promise<void>((done) => (reached = done));
  let holding = true;
  const client = {
    async send(command: unknown) {
      const item = command instanceof PutCommand ? command.input.Item : undefined;
      if (holding && typeof item?.pk === 'string' && item.pk.startsWith('WEBHOOK#') && item.retired === undefined) {
        holding = false;
        reached();
        await released;
      }
      return local.dynamo.send(command as PutCommand);
    },
  } as unknown as DynamoDBDocumentClient;
  return { store: new DynamoTriggerStore(client, table(), Date.now), held, release };
}

const store = () => new DynamoTriggerStore(local.dynamo, table(), Date.now);

describe('DynamoTriggerStore', () => {
  it('findByWebhookId reads the receiver copy of a new trigger', async () => {
    const record = newRecord();
    await store().create(record);
    expect(await store().findByWebhookId(record.webhook_id)).toEqual(record);
  });

  it('replace refuses a stale previous version', async () => {
    const record = newRecord();
    await store().create(record);
    expect(await store().replace(record, changed(record, { flow: 'a' }))).toBe(true);
    expect(await store().replace(record, changed(record, { flow: 'b' }))).toBe(false);
    expect((await store().get(record.account_id, record.id))?.flow).toBe('a');
  });

  it('a new webhook id retires the old one', async () => {
    const record = newRecord();
    await store().create(record);
    const next = changed(record, { webhook_id: `${record.webhook_id}-2` });
    await store().replace(record, next);
    expect(await store().findByWebhookId(record.webhook_id)).toBeUndefined();
    expect(await store().findByWebhookId(next.webhook_id)).toEqual(next);
  });

  it('a retired id\'s marker expires after a day, so markers do not pile up', async () => {
    const record = newRecord();
    await store().create(record);
    const before = Math.floor(Date.now() / 1000);
    await store().delete(record);
    const { Item } = await local.dynamo.send(new GetCommand({ TableName: table(), Key: { pk: `WEBHOOK#${record.webhook_id}`, sk: 'TRIGGER' } }));
    expect(Item).toMatchObject({ retired: true });
    expect(Item!.expires_at).toBeGreaterThanOrEqual(before + 24 * 60 * 60);
    expect(Item!.expires_at).toBeLessThanOrEqual(Math.floor(Date.now() / 1000) + 24 * 60 * 60);
  });

  it('a late receiver copy of an older version never replaces a newer one', async () => {
    const v1 = newRecord();
    await store().create(v1);
    const slow = storeHoldingReceiverCopy();
    const v2 = changed(v1, { flow: 'slow' });
    const slowChange = slow.store.replace(v1, v2);
    await slow.held;
    const v3 = changed(v2, { flow: 'fast' });
    expect(await store().replace(v2, v3)).toBe(true);
    slow.release();
    expect(await slowChange).toBe(true);
    expect((await store().findByWebhookId(v1.webhook_id))?.version).toBe(3);
  });

  it('a change overtaken by a delete does not bring the deleted trigger\'s URL back', async () => {
    const v1 = newRecord();
    await store().create(v1);
    const slow = storeHoldingReceiverCopy();
    const v2 = changed(v1, { flow: 'slow' });
    const slowChange = slow.store.replace(v1, v2);
    await slow.held; // the owner's item is at v2; its receiver copy is not written yet
    expect(await store().delete((await store().get(v1.account_id, v1.id))!)).toBe(true);
    slow.release();
    await slowChange;
    expect(await store().findByWebhookId(v1.webhook_id)).toBeUndefined();
    expect(await store().get(v1.account_id, v1.id)).toBeUndefined();
  });

  it('a change overtaken by a new webhook id does not bring the old URL back', async () => {
    const v1 = newRecord();
    await store().create(v1);
    const slow = storeHoldingReceiverCopy();
    const v2 = changed(v1, { flow: 'slow' });
    const slowChange = slow.store.replace(v1, v2);
    await slow.held;
    const v3 = changed(v2, { webhook_id: `${v1.webhook_id}-new` });
    expect(await store().replace(v2, v3)).toBe(true);
    slow.release();
    await slowChange;
    expect(await store().findByWebhookId(v1.webhook_id)).toBeUndefined();
    expect(await store().findByWebhookId(v3.webhook_id)).toEqual(v3);
  });

  it('delete refuses a stale read, so the caller reads again rather than leave a newer URL behind', async () => {
    const v1 = newRecord();
    await store().create(v1);
    const v2 = changed(v1, { webhook_id: `${v1.webhook_id}-new` });
    await store().replace(v1, v2);
    expect(await store().delete(v1)).toBe(false);
    expect(await store().delete(v2)).toBe(true);
    expect(await store().findByWebhookId(v2.webhook_id)).toBeUndefined();
  });
});
