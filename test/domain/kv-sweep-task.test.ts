import { describe, expect, it } from 'vitest';
import { decodeSweepTask, delaySecondsUntil, encodeSweepTask, settleSecondsFor, type SweepTask } from '../../functions/domain/kv/sweep-task.js';

const task: SweepTask = { accountId: 'acct#1', name: 'cache', generation: 'a'.repeat(32), settleUntil: 1_900_000_000_000 };

describe('sweep tasks', () => {
  it('round-trip through a message, with and without a pass in progress', () => {
    expect(decodeSweepTask(encodeSweepTask(task))).toEqual(task);
    const resumed = { ...task, pass: { startedAt: 1_900_000_000_500, after: 'a/b' } };
    expect(decodeSweepTask(encodeSweepTask(resumed))).toEqual(resumed);
    const started = { ...task, pass: { startedAt: 1_900_000_000_500 } };
    expect(decodeSweepTask(encodeSweepTask(started))).toEqual(started);
  });

  it("an object store's task round-trips with its store id; a KV bucket's message has none", () => {
    const objects = { ...task, objectStoreId: 'b'.repeat(32), pass: { startedAt: 1_900_000_000_500, after: 'photos/a b.png' } };
    expect(decodeSweepTask(encodeSweepTask(objects))).toEqual(objects);
    expect(JSON.parse(encodeSweepTask(task))).not.toHaveProperty('store_id');
  });

  it('a stream task keeps its kind; a bucket task has none', () => {
    for (const kind of ['stream_messages', 'stream_consumers'] as const) expect(decodeSweepTask(encodeSweepTask({ ...task, kind }))).toEqual({ ...task, kind });
    expect(decodeSweepTask(encodeSweepTask(task))).not.toHaveProperty('kind');
  });

  it('a finished pass is not carried into the next message', () =>
    expect(decodeSweepTask(encodeSweepTask({ ...task, pass: undefined }))).toEqual(task));

  it.each([
    ['not JSON', '{'],
    ['another version', JSON.stringify({ ...JSON.parse(encodeSweepTask(task)), v: 2 })],
    ['a bucket name that could not exist', JSON.stringify({ ...JSON.parse(encodeSweepTask(task)), bucket: 'a#b' })],
    ['a generation that is not 32 hex digits', JSON.stringify({ ...JSON.parse(encodeSweepTask(task)), generation: 'current' })],
    ['no account', JSON.stringify({ ...JSON.parse(encodeSweepTask(task)), account_id: '' })],
    ['no settle time', JSON.stringify({ ...JSON.parse(encodeSweepTask(task)), settle_until: undefined })],
    ['an unknown kind', JSON.stringify({ ...JSON.parse(encodeSweepTask(task)), kind: 'objects' })],
    ['a position without a pass', JSON.stringify({ ...JSON.parse(encodeSweepTask(task)), after: 'k' })],
    ['a store id that is not 32 hex digits', JSON.stringify({ ...JSON.parse(encodeSweepTask(task)), store_id: '../other' })],
  ])('refuses %s', (_name, body) => expect(() => decodeSweepTask(body)).toThrow(/validation_error/));
});

describe('timing', () => {
  it('settles after two writer timeouts and a margin', () => expect(settleSecondsFor(29)).toBe(88));

  it('delays round up to whole seconds, never below 0 or above SQS’s 900', () => {
    expect(delaySecondsUntil(10_001, 0)).toBe(11);
    expect(delaySecondsUntil(0, 5_000)).toBe(0);
    expect(delaySecondsUntil(2_000_000, 0)).toBe(900);
  });
});
