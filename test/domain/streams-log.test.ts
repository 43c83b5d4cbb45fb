import { describe, expect, it } from 'vitest';
import { ackWaitAfter, commitStep, countsOf, isExpired, refusesNew, retentionStep, seqKey } from '../../functions/domain/streams/log.js';
import type { ConsumerConfig, MessageMark, StreamConfig, StreamHead } from '../../functions/domain/streams/types.js';
import { parseAck, parseConsumerConfig, parseFetch, parseNak, parsePublishBody, parseReadStart, parseStreamConfig } from '../../functions/domain/streams/validation.js';

const NOW = 1_800_000_000_000;
const LEASE = 60_000;
const head = (over: Partial<StreamHead> = {}): StreamHead => ({
  generation: 'g', reserved: 0, reservedBytes: 0, reservedAt: NOW, lastSeq: 0, lastBytes: 0, lastTs: null, firstSeq: 1, droppedBytes: 0, sweptSeq: 0, ...over,
});
const mark = (seq: number, ts = NOW, size = 10, skipped = false): MessageMark => ({ seq, ts, size, skipped });
const config = (over: Partial<StreamConfig> = {}): StreamConfig => ({
  description: null, maxMsgs: null, maxBytes: null, maxAgeSeconds: null, maxMsgSize: 1000, discard: 'old', duplicateWindowSeconds: 120, ...over,
});

describe('commitStep: how far the watermark moves', () => {
  it('moves over every written sequence after it, adding their bytes', () => {
    expect(commitStep(head({ reserved: 3 }), [mark(1), mark(2), mark(3, NOW + 5)], 3, NOW, LEASE)).toEqual({ lastSeq: 3, lastBytes: 30, lastTs: NOW + 5, skip: [] });
  });

  it('stops at a missing sequence whose publisher may still write it', () => {
    expect(commitStep(head({ reserved: 3 }), [mark(1), mark(3)], 3, NOW, LEASE)).toMatchObject({ lastSeq: 1, skip: [] });
  });

  it('skips a missing sequence once a message written after it is older than the lease', () => {
    const step = commitStep(head({ reserved: 3, reservedAt: NOW }), [mark(1), mark(3, NOW - LEASE - 1)], 3, NOW, LEASE);
    expect(step).toMatchObject({ lastSeq: 3, lastBytes: 20, skip: [2] });
  });

  it('skips missing sequences at the end once the latest reservation is older than the lease', () => {
    expect(commitStep(head({ reserved: 2, reservedAt: NOW - LEASE - 1 }), [], 2, NOW, LEASE)).toMatchObject({ lastSeq: 2, skip: [1, 2] });
    expect(commitStep(head({ reserved: 2, reservedAt: NOW - LEASE + 1 }), [], 2, NOW, LEASE)).toMatchObject({ lastSeq: 0, skip: [] });
  });

  it('counts a skipped mark as committed, with no bytes and no time', () => {
    expect(commitStep(head({ reserved: 2, lastTs: 5 }), [mark(1, NOW, 0, true), mark(2, 7)], 2, NOW, LEASE)).toEqual({ lastSeq: 2, lastBytes: 10, lastTs: 7, skip: [] });
  });
});

describe('retentionStep: what retention drops', () => {
  const marks = [mark(1, NOW - 5000), mark(2, NOW - 3000), mark(3, NOW - 1000), mark(4, NOW)];
  const full = head({ reserved: 4, lastSeq: 4, lastBytes: 40 });

  it('by count, with discard old', () => {
    expect(retentionStep(full, config({ maxMsgs: 2 }), marks, NOW)).toEqual({ firstSeq: 3, droppedBytes: 20 });
  });

  it('by size, with discard old', () => {
    expect(retentionStep(full, config({ maxBytes: 25 }), marks, NOW)).toEqual({ firstSeq: 3, droppedBytes: 20 });
  });

  it('by age, whatever the discard policy', () => {
    expect(retentionStep(full, config({ maxAgeSeconds: 2, discard: 'new' }), marks, NOW)).toEqual({ firstSeq: 3, droppedBytes: 20 });
    expect(isExpired(config({ maxAgeSeconds: 2 }), NOW - 2001, NOW)).toBe(true);
    expect(isExpired(config({ maxAgeSeconds: 2 }), NOW - 2000, NOW)).toBe(false);
  });

  it('never by count or size with discard new (that refuses publishes instead)', () => {
    expect(retentionStep(full, config({ maxMsgs: 1, maxBytes: 1, discard: 'new' }), marks, NOW)).toEqual({ firstSeq: 1, droppedBytes: 0 });
  });

  it('drops skipped sequences at the front', () => {
    expect(retentionStep(head({ lastSeq: 2, lastBytes: 10 }), config(), [mark(1, NOW, 0, true), mark(2)], NOW)).toEqual({ firstSeq: 2, droppedBytes: 0 });
  });

  it('stays within the marks it was given', () => {
    expect(retentionStep(full, config({ maxMsgs: 1 }), marks.slice(0, 2), NOW)).toEqual({ firstSeq: 3, droppedBytes: 20 });
  });
});

describe('refusesNew: discard new', () => {
  it('refuses a publish that would pass max_msgs or max_bytes, counting reserved sequences', () => {
    const h = head({ reserved: 2, reservedBytes: 20, lastSeq: 1, lastBytes: 10 });
    expect(refusesNew(h, config({ discard: 'new', maxMsgs: 3 }), 1, 10)).toBe(false);
    expect(refusesNew(h, config({ discard: 'new', maxMsgs: 3 }), 2, 10)).toBe(true);
    expect(refusesNew(h, config({ discard: 'new', maxBytes: 30 }), 1, 10)).toBe(false);
    expect(refusesNew(h, config({ discard: 'new', maxBytes: 30 }), 1, 11)).toBe(true);
    expect(refusesNew(h, config({ discard: 'old', maxMsgs: 1 }), 5, 10)).toBe(false);
  });
});

describe('ackWaitAfter: the wait before a redelivery', () => {
  const consumer = (over: Partial<ConsumerConfig>): ConsumerConfig => ({
    deliverPolicy: 'all', optStartSeq: null, optStartTime: null, ackWaitSeconds: 30, maxDeliver: null, backoffSeconds: [], maxAckPending: 10, ...over,
  });
  it('is ack_wait_seconds without backoff, and the n-th backoff step after the n-th delivery, the last repeating', () => {
    expect(ackWaitAfter(consumer({}), 3)).toBe(30);
    const backoff = consumer({ backoffSeconds: [1, 5, 60] });
    expect([1, 2, 3, 4, 9].map((n) => ackWaitAfter(backoff, n))).toEqual([1, 5, 60, 60, 60]);
  });
});

describe('counts and keys', () => {
  it('counts messages and bytes from the head; sequence keys sort as numbers', () => {
    expect(countsOf(head({ firstSeq: 3, lastSeq: 7, lastBytes: 100, droppedBytes: 30 }))).toEqual({ messages: 5, bytes: 70 });
    expect(countsOf(head({ firstSeq: 6, lastSeq: 5 }))).toEqual({ messages: 0, bytes: 0 });
    expect([seqKey(10), seqKey(9), seqKey(100)].sort()).toEqual([seqKey(9), seqKey(10), seqKey(100)]);
  });
});

describe('validation', () => {
  it('a stream configuration takes defaults and refuses what is out of range', () => {
    expect(parseStreamConfig({})).toEqual({ description: null, maxMsgs: null, maxBytes: null, maxAgeSeconds: null, maxMsgSize: 262_144, discard: 'old', duplicateWindowSeconds: 120 });
    for (const bad of [[], { max_msgs: 1.5 }, { max_bytes: '1' }, { discard: null }, { duplicate_window_seconds: 86_401 }, { description: 'x'.repeat(1025) }]) {
      expect(() => parseStreamConfig(bad), JSON.stringify(bad)).toThrow(expect.objectContaining({ code: 'validation_error' }));
    }
  });

  it('a publish body keeps data as JSON text and refuses a malformed batch whole', () => {
    expect(parsePublishBody({ messages: [{ data: { a: 1 }, headers: { k: 'v' }, msg_id: 'x' }] })).toEqual([{ data: '{"a":1}', headers: { k: 'v' }, msgId: 'x' }]);
    expect(() => parsePublishBody({ messages: [{ data: 1 }, { data: 2, msg_id: 'a b' }] })).toThrow(expect.objectContaining({ code: 'validation_error' }));
    expect(() => parsePublishBody({ messages: [{ data: 'x'.repeat(20) }] }, 10)).toThrow(expect.objectContaining({ code: 'payload_too_large' }));
  });

  it('reads, fetches, acks and naks', () => {
    expect(parseReadStart({})).toEqual({ afterSeq: 0 });
    expect(parseReadStart({ startTime: '2026-01-01T00:00:00Z' })).toEqual({ startTime: Date.parse('2026-01-01T00:00:00Z') });
    expect(parseFetch({})).toEqual({ batch: 1, waitMs: 0 });
    expect(() => parseFetch({ wait_ms: 20_001 })).toThrow();
    expect(parseAck({ seqs: [3, 3, 4] })).toEqual([3, 4]);
    expect(() => parseAck({ seqs: [0] })).toThrow();
    expect(parseNak({ seq: 2 })).toEqual({ seq: 2, delaySeconds: 0 });
    expect(parseConsumerConfig({ deliver_policy: 'by_start_time', opt_start_time: '2026-01-01T00:00:00Z' })).toMatchObject({ optStartTime: Date.parse('2026-01-01T00:00:00Z') });
  });
});
