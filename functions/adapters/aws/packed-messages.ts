import { seqKey } from '../../domain/streams/log.js';
import { MAX_PUBLISH_BATCH } from '../../domain/streams/limits.js';
import type { StoredMessage } from '../../domain/streams/types.js';

/**
 * How a stream's messages are laid out in DynamoDB items. A write unit is 1 KB of an item, rounded
 * up per item: a 1 KB message alone in an item with its keys is 2 units, 100 of them in shared
 * items about 1.02 units each. So one publish's messages are packed into items of consecutive
 * sequences, each up to `PACKED_ITEM_BYTES`:
 *
 *   sk = last sequence (16 digits), first, ts, sizes: [n…], msgs: [{d: data, h?: headers, i?: msg_id}…]
 *
 * Keyed by the *last* sequence, the item holding sequence s is the first at or after `seqKey(s)`,
 * and no item holding s is keyed past `s + MAX_PACKED_SEQS - 1` (a publish has at most 100
 * messages): one Query finds any sequence or range. A skipped sequence is an item of its own,
 * keyed by its sequence (`skipped: true`); where a late write overlaps one, the lower key, the
 * skip, wins for every reader (`unpackItems`), so what a reader saw skipped stays skipped.
 */
export const MAX_PACKED_SEQS = MAX_PUBLISH_BATCH;
/**
 * An item's bound: far under DynamoDB's 400 KB, so that reading one message of it costs at most
 * 8 read units (4 KB each, strongly consistent), while the rounding up to whole write units is
 * paid once per 32 messages of 1 KB. A message larger than this has an item of its own.
 */
export const PACKED_ITEM_BYTES = 32 * 1024;
/** Per message in an item: the map's names and type bytes, the size's number, with room to spare. */
const PER_MESSAGE_OVERHEAD_BYTES = 24;

/** A message item as stored: packed, or a skipped sequence. */
export interface PackedItem extends Record<string, unknown> {
  sk: string;
  first?: number;
  ts: number;
  sizes?: number[];
  msgs?: { d: string; h?: Record<string, string>; i?: string }[];
  skipped?: boolean;
}

const bytesOf = (message: StoredMessage) => message.size + (message.msgId?.length ?? 0) + PER_MESSAGE_OVERHEAD_BYTES;

/** Items for `messages` (ascending): a new item at each gap, change of `ts`, or when the next message would pass the bound. */
export function packMessages(messages: readonly StoredMessage[]): PackedItem[] {
  const runs: StoredMessage[][] = [];
  let bytes = 0;
  for (const message of messages) {
    const run = runs.at(-1);
    const last = run?.at(-1);
    if (run && last && message.seq === last.seq + 1 && message.ts === last.ts && bytes + bytesOf(message) <= PACKED_ITEM_BYTES) {
      run.push(message);
      bytes += bytesOf(message);
    } else {
      runs.push([message]);
      bytes = bytesOf(message);
    }
  }
  return runs.map((run) => ({
    sk: seqKey(run.at(-1)!.seq),
    first: run[0]!.seq,
    ts: run[0]!.ts,
    sizes: run.map((m) => m.size),
    msgs: run.map((m) => ({ d: m.data, ...(m.headers && { h: m.headers }), ...(m.msgId !== null && { i: m.msgId }) })),
  }));
}

/** The messages of `items` (in key order), ascending; a sequence two items hold is read from the first (a skip). */
export function unpackItems(items: readonly PackedItem[]): (StoredMessage & { skipped?: boolean })[] {
  const bySeq = new Map<number, StoredMessage & { skipped?: boolean }>();
  for (const item of items) {
    const last = Number(item.sk);
    if (!item.msgs) {
      if (!bySeq.has(last)) bySeq.set(last, { seq: last, ts: item.ts, size: 0, data: 'null', headers: null, msgId: null, ...(item.skipped === true && { skipped: true }) });
      continue;
    }
    item.msgs.forEach((m, k) => {
      const seq = item.first! + k;
      if (!bySeq.has(seq)) bySeq.set(seq, { seq, ts: item.ts, size: item.sizes![k]!, data: m.d, headers: m.h ?? null, msgId: m.i ?? null });
    });
  }
  return [...bySeq.values()].sort((a, b) => a.seq - b.seq);
}
