import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { DynamoStreamStore } from '../../functions/adapters/aws/dynamo-stream-store.js';
import { ConsumerService } from '../../functions/domain/streams/consumers.js';
import { StreamService } from '../../functions/domain/streams/service.js';
import type { StreamRef } from '../../functions/domain/streams/types.js';
import { parseStreamConfig } from '../../functions/domain/streams/validation.js';
import { useEngines } from '../support/engines.js';

/** The use cases over dynalite with a clock the test moves: sleeping moves it, so waits cost no real time. */
const local = useEngines();
let store: DynamoStreamStore;
beforeAll(() => {
  store = new DynamoStreamStore(local.dynamo, local.engines.env.KV_TABLE!);
});

const LEASE_MS = 60_000;
const DEADLINE_MS = 29_000;
function fixture() {
  const clock = { now: 1_800_000_000_000 };
  const options = {
    store, now: () => clock.now, randomBytes,
    sleep: async (ms: number) => { clock.now += ms; },
    sweeps: { enqueue: async () => undefined }, settleMs: 0,
    writeDeadlineMs: DEADLINE_MS, leaseMs: LEASE_MS, commitWaitMs: 200,
  };
  const streams = new StreamService(options);
  const consumers = new ConsumerService({ ...options, streams });
  return { clock, streams, consumers };
}
let counter = 0;
const newRef = (): StreamRef => ({ accountId: `svc-${++counter}`, name: `s-${counter}` });
const message = (data: unknown, msgId: string | null = null) => ({ data: JSON.stringify(data), headers: null, msgId });

describe('a publisher that dies between reserving and writing', () => {
  it('stops the watermark for a lease, after which its sequences are skipped and never filled', async () => {
    const { clock, streams } = fixture();
    const ref = newRef();
    const created = await streams.createStream(ref, parseStreamConfig({}));
    // The dead publisher: it reserved sequence 1 and never wrote it.
    expect(await store.reserve(ref, { generation: created.stream.head.generation, count: 1, bytes: 5, now: clock.now })).toMatchObject({ head: { reserved: 1 } });

    // A publisher after it writes sequence 2 but cannot commit past the hole: 503, and readers see nothing.
    await expect(streams.publish(ref, [message('second')])).rejects.toMatchObject({ code: 'unavailable' });
    expect((await streams.readMessages(ref, { start: { afterSeq: 0 }, limit: 10 })).messages).toEqual([]);

    // Once sequence 2 is older than the lease, any reader or publisher skips 1 and commits 2.
    clock.now += LEASE_MS + 1;
    const read = await streams.readMessages(ref, { start: { afterSeq: 0 }, limit: 10 });
    expect(read.messages.map((m) => [m.seq, JSON.parse(m.data)])).toEqual([[2, 'second']]);
    expect(read.stream.head).toMatchObject({ lastSeq: 2, firstSeq: 1 });
    await expect(streams.getMessage(ref, 1)).rejects.toMatchObject({ code: 'not_found' });
    expect(await streams.publish(ref, [message('third')])).toEqual([3]);
  });

  it('a publisher whose reservation is past its write deadline does not write (the lease may have skipped it)', async () => {
    const { clock, streams } = fixture();
    const ref = newRef();
    await streams.createStream(ref, parseStreamConfig({}));
    const slowStore = Object.create(store) as DynamoStreamStore;
    slowStore.reserve = async (...args) => {
      const result = await store.reserve(...args);
      clock.now += DEADLINE_MS + 1;
      return result;
    };
    const slow = new StreamService({ store: slowStore, now: () => clock.now, randomBytes, sleep: async () => undefined, sweeps: { enqueue: async () => undefined }, settleMs: 0, writeDeadlineMs: DEADLINE_MS, leaseMs: LEASE_MS, commitWaitMs: 0 });
    await expect(slow.publish(ref, [message('late')])).rejects.toMatchObject({ code: 'unavailable' });
    clock.now += LEASE_MS;
    expect(await streams.publish(ref, [message('next')])).toEqual([2]);
    expect((await streams.readMessages(ref, { start: { afterSeq: 0 }, limit: 10 })).messages.map((m) => m.seq)).toEqual([2]);
  });

  it('a msg_id claimed by a publisher that died is taken over after the lease', async () => {
    const { clock, streams } = fixture();
    const ref = newRef();
    const { stream } = await streams.createStream(ref, parseStreamConfig({}));
    const at = { ...ref, generation: stream.head.generation };
    expect(await store.claimMsgId(at, { msgId: 'm', seq: null, at: clock.now, token: 'dead' }, { windowBefore: 0, claimBefore: 0 })).toEqual({ claimed: true });
    await expect(streams.publish(ref, [message('x', 'm')])).rejects.toMatchObject({ code: 'unavailable' });
    clock.now += LEASE_MS + 1;
    expect(await streams.publish(ref, [message('x', 'm')])).toEqual([1]);
    expect(await streams.publish(ref, [message('x again', 'm')])).toEqual([1]);
  });
});

describe('msg_id records', () => {
  it('a record naming a sequence that was skipped (its publisher died before writing) is replaced, not answered', async () => {
    const { clock, streams } = fixture();
    const ref = newRef();
    const { stream } = await streams.createStream(ref, parseStreamConfig({}));
    const at = { ...ref, generation: stream.head.generation };
    // The dead publisher: it claimed msg_id m, reserved sequence 1, recorded it, and died before writing the message.
    await store.claimMsgId(at, { msgId: 'm', seq: null, at: clock.now, token: 'dead' }, { windowBefore: 0, claimBefore: 0 });
    await store.reserve(ref, { generation: at.generation, count: 1, bytes: 3, now: clock.now });
    await store.putMessages(at, [], [{ msgId: 'm', seq: 1, at: clock.now, token: 'dead' }]);
    clock.now += LEASE_MS + 1;
    expect(await streams.publish(ref, [message('x', 'm')])).toEqual([2]);
    expect(await streams.publish(ref, [message('x again', 'm')])).toEqual([2]);
    expect((await streams.readMessages(ref, { start: { afterSeq: 0 }, limit: 10 })).messages.map((m) => [m.seq, m.msgId])).toEqual([[2, 'm']]);
  });

  it('a duplicate of a publish not yet committed waits for it and answers its sequence', async () => {
    const { clock, streams } = fixture();
    const ref = newRef();
    await streams.createStream(ref, parseStreamConfig({}));
    const [first, second] = await Promise.all([streams.publish(ref, [message('a', 'same')]), streams.publish(ref, [message('b', 'same')])]);
    expect(first).toEqual(second);
    expect((await streams.readMessages(ref, { start: { afterSeq: 0 }, limit: 10 })).messages).toHaveLength(1);
    void clock;
  });
});

describe('time on the injected clock', () => {
  it('start_time and by_start_time find the first message at or after the time, past many earlier ones', async () => {
    const { clock, streams, consumers } = fixture();
    const ref = newRef();
    await streams.createStream(ref, parseStreamConfig({}));
    for (let i = 0; i < 3; i++) await streams.publish(ref, Array.from({ length: 100 }, (_, k) => message(i * 100 + k)));
    clock.now += 1000;
    const from = clock.now;
    await streams.publish(ref, [message('late')]);
    const read = await streams.readMessages(ref, { start: { startTime: from }, limit: 1 });
    expect(read.messages.map((m) => m.seq)).toEqual([301]);
    const created = await consumers.createConsumer(ref, 't', { deliverPolicy: 'by_start_time', optStartSeq: null, optStartTime: from, ackWaitSeconds: 30, maxDeliver: null, backoffSeconds: [], maxAckPending: 10 });
    expect(created.deliveredSeq).toBe(300);
    const later = await consumers.createConsumer(ref, 'none', { deliverPolicy: 'by_start_time', optStartSeq: null, optStartTime: clock.now + 1, ackWaitSeconds: 30, maxDeliver: null, backoffSeconds: [], maxAckPending: 10 });
    expect(later.deliveredSeq).toBe(301);
  });


  it('max_age_seconds hides a message the moment it is older, and the next read drops it', async () => {
    const { clock, streams } = fixture();
    const ref = newRef();
    await streams.createStream(ref, parseStreamConfig({ max_age_seconds: 10 }));
    await streams.publish(ref, [message(1)]);
    clock.now += 10_000;
    expect((await streams.readMessages(ref, { start: { afterSeq: 0 }, limit: 10 })).messages).toHaveLength(1);
    clock.now += 1;
    expect((await streams.readMessages(ref, { start: { afterSeq: 0 }, limit: 10 })).messages).toEqual([]);
    expect((await streams.getStream(ref)).head).toMatchObject({ firstSeq: 2, lastSeq: 1 });
  });

  it('a message is delivered again exactly when its ack wait has passed', async () => {
    const { clock, streams, consumers } = fixture();
    const ref = newRef();
    await streams.createStream(ref, parseStreamConfig({}));
    await streams.publish(ref, [message('job')]);
    await consumers.createConsumer(ref, 'w', { deliverPolicy: 'all', optStartSeq: null, optStartTime: null, ackWaitSeconds: 30, maxDeliver: 2, backoffSeconds: [], maxAckPending: 10 });
    expect((await consumers.fetch(ref, 'w', { batch: 1, waitMs: 0 })).map((d) => d.deliveries)).toEqual([1]);
    clock.now += 29_999;
    expect(await consumers.fetch(ref, 'w', { batch: 1, waitMs: 0 })).toEqual([]);
    clock.now += 1;
    expect((await consumers.fetch(ref, 'w', { batch: 1, waitMs: 0 })).map((d) => d.deliveries)).toEqual([2]);
    clock.now += 30_000;
    expect(await consumers.fetch(ref, 'w', { batch: 1, waitMs: 0 })).toEqual([]);
    expect((await consumers.listDead(ref, 'w', { limit: 10 })).dead).toEqual([{ seq: 1, deliveries: 2, deadAt: clock.now }]);
  });
});
