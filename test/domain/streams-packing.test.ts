import { describe, expect, it } from 'vitest';
import { PACKED_ITEM_BYTES, packMessages, unpackItems } from '../../functions/adapters/aws/packed-messages.js';
import { seqKey } from '../../functions/domain/streams/log.js';
import type { StoredMessage } from '../../functions/domain/streams/types.js';

const message = (seq: number, size = 1000, ts = 1000): StoredMessage => ({ seq, ts, size, data: JSON.stringify('x'.repeat(size - 2)), headers: null, msgId: null });
const seqs = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe('packed message items', () => {
  it('packMessages keys each item by its last sequence and keeps each under PACKED_ITEM_BYTES', () => {
    const items = packMessages(seqs(1, 100).map((seq) => message(seq)));
    expect(items.map((item) => [item.first, item.sk])).toEqual([[1, seqKey(32)], [33, seqKey(64)], [65, seqKey(96)], [97, seqKey(100)]]);
    for (const item of items) expect(JSON.stringify(item).length).toBeLessThan(PACKED_ITEM_BYTES);
    expect(unpackItems(items)).toEqual(seqs(1, 100).map((seq) => message(seq)));
  });

  it('packMessages starts a new item at a gap, a change of publish time, and for a message larger than the bound', () => {
    const items = packMessages([message(1), message(2), message(4), message(5, 1000, 2000), message(6, 40_000, 2000), message(7, 10, 2000)]);
    expect(items.map((item) => [item.first, Number(item.sk)])).toEqual([[1, 2], [4, 4], [5, 5], [6, 6], [7, 7]]);
  });

  it('unpackItems reads a sequence that a skip and a late packed item both hold as skipped: the lower key wins', () => {
    const skip = { sk: seqKey(3), ts: 5, skipped: true };
    const [packed] = packMessages(seqs(3, 5).map((seq) => message(seq)));
    const read = unpackItems([skip, packed!]);
    expect(read.map((m) => [m.seq, m.skipped === true])).toEqual([[3, true], [4, false], [5, false]]);
  });
});
