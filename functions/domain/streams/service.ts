import { AppError, notFound } from '../../shared/errors.js';
import type { Clock } from '../clock.js';
import { FIRST_SWEEP_DELAY_SECONDS, type SweepKind, type SweepQueue } from '../kv/sweep-task.js';
import type { RandomBytes } from '../random-bytes.js';
import { GENERATION_BYTES, MAX_ANSWER_BYTES } from './limits.js';
import { commitStep, countsOf, isExpired, refusesNew, retentionStep } from './log.js';
import type { DedupRecord, MessagesRef, NewMessage, StoredMessage, Stream, StreamConfig, StreamHead, StreamPage, StreamRef, StreamStore } from './types.js';
import { answerBytes, messageSize } from './validation.js';

export interface StreamServiceOptions {
  store: StreamStore;
  /** The KV sweeper's queue: it reclaims a purged generation's messages and a deleted stream's partitions. */
  sweeps: SweepQueue;
  /** See `SweepTask.settleUntil`: `settleSecondsFor(streams function timeout)` in production. */
  settleMs: number;
  now: Clock;
  randomBytes: RandomBytes;
  sleep: (ms: number) => Promise<void>;
  /** A publisher writes its messages only this soon after its reservation: the function's timeout. */
  writeDeadlineMs: number;
  /** A missing sequence is skipped once its reservation is older than this: the deadline and a margin. */
  leaseMs: number;
  /** How long a publish waits for earlier publishes to commit before answering 503. */
  commitWaitMs: number;
}

/** Sequences one commit step examines, and retention one trim. */
const STEP_SEQS = 1000;
/** Messages deleted from the table per sweep step (those retention already hides). */
const SWEEP_SEQS = 500;
const RESERVE_ATTEMPTS = 50;
const POLL_MS = 10;

export const messagesOf = (stream: Stream): MessagesRef => ({ accountId: stream.accountId, name: stream.name, generation: stream.head.generation });

/** What reading a stream shows beside its configuration. */
export interface StreamInfo {
  stream: Stream;
  firstTs: number | null;
  consumers: number;
}

/**
 * Streams and their messages: create, read, list, delete, purge, publish, read back. Every
 * operation is scoped by `StreamRef.accountId`, so another account's stream is simply not found.
 *
 * Publishing is three steps, none of which waits for another publisher unless it must:
 *
 *   reserve  one conditional update of the head: `reserved += n` hands out n contiguous sequences
 *   write    the messages, unconditionally (BatchWriteItem): the sequences are the caller's own
 *   commit   move the watermark `last_seq` over every written sequence after it, helping earlier
 *            publishers, and answer once it covers the caller's own
 *
 * Readers never look past `last_seq`, and the watermark only passes a sequence that is written,
 * so no reader sees a sequence missing that is filled later. A publisher that dies between
 * reserve and write leaves a hole that stops the watermark; once its reservation is older than
 * the lease (longer than any publisher writes after reserving), the hole is recorded as skipped
 * and the watermark moves on (`commitStep`).
 */

/** What a publish says of one message: its sequence, and whether its `msg_id` made it a duplicate. */
export interface PublishAck {
  seq: number;
  duplicate: boolean;
}

export class StreamService {
  constructor(private readonly options: StreamServiceOptions) {}

  async createStream(ref: StreamRef, config: StreamConfig): Promise<StreamInfo> {
    const now = this.options.now();
    const head: StreamHead = {
      generation: this.newGeneration(), reserved: 0, reservedBytes: 0, reservedAt: now,
      lastSeq: 0, lastBytes: 0, lastTs: null, firstSeq: 1, droppedBytes: 0, sweptSeq: 0,
    };
    const stream: Stream = { ...ref, config, createdAt: new Date(now).toISOString(), consumerGeneration: this.newGeneration(), head };
    if (!(await this.options.store.createStream(stream))) throw new AppError('already_exists');
    return { stream, firstTs: null, consumers: 0 };
  }

  /**
   * PUT: creates the stream, or replaces the configuration of the one there (`created: false`).
   * Limits apply from the update on: with `discard: old`, a lowered `max_msgs` or `max_bytes` drops
   * the oldest messages at once (a step of up to 1,000 here, the rest on the next reads and
   * publishes); with `discard: new` the messages stay and publishes are refused until the stream is
   * under its limits again. Messages over a lowered `max_msg_size` stay; new ones are checked.
   */
  async putStream(ref: StreamRef, config: StreamConfig): Promise<{ info: StreamInfo; created: boolean }> {
    try {
      return { info: await this.createStream(ref, config), created: true };
    } catch (error) {
      if (!(error instanceof AppError && error.code === 'already_exists')) throw error;
    }
    if (!(await this.options.store.updateConfig(ref, config))) throw notFound('stream');
    return { info: await this.describeStream(ref), created: false };
  }

  /** The stream, with commits and retention brought up to date first (a read enforces them too). */
  async getStream(ref: StreamRef): Promise<Stream> {
    let stream = await this.read(ref);
    if (await this.advance(stream)) stream = await this.read(ref);
    if (await this.retain(stream)) stream = await this.read(ref);
    return stream;
  }

  async describeStream(ref: StreamRef): Promise<StreamInfo> {
    const stream = await this.getStream(ref);
    return this.describe(stream);
  }

  async listStreams(accountId: string, page: { limit: number; cursor?: string }): Promise<{ streams: StreamInfo[]; nextCursor: string | null }> {
    const { streams, nextCursor }: StreamPage = await this.options.store.listStreams(accountId, page);
    return { streams: await Promise.all(streams.map((stream) => this.describe(stream))), nextCursor };
  }

  private async describe(stream: Stream): Promise<StreamInfo> {
    const { head } = stream;
    const [first] = countsOf(head).messages > 0 ? await this.options.store.marks(messagesOf(stream), { fromSeq: head.firstSeq, toSeq: head.lastSeq, limit: 1 }) : [];
    return { stream, firstTs: first?.ts ?? null, consumers: await this.options.store.countConsumers(stream) };
  }

  private async read(ref: StreamRef): Promise<Stream> {
    const stream = await this.options.store.getStream(ref);
    if (!stream) throw notFound('stream');
    return stream;
  }

  /**
   * Removes every message in one conditional write, whatever the stream holds: the stream moves
   * to a new generation and `first_seq` past every sequence reserved so far. Sequences go on
   * from there; configuration and consumers stay (their positions move to the new first sequence).
   */
  async purgeStream(ref: StreamRef): Promise<Stream> {
    const stream = await this.read(ref);
    // Enqueued first, as for KV buckets: a refused sweep changes nothing (503); the sweeper leaves a current generation alone.
    await this.enqueueSweep(stream, 'stream_messages', stream.head.generation);
    // Lost to a concurrent purge: it did our work during our request.
    if (!(await this.options.store.swapGeneration(ref, stream.head.generation, this.newGeneration()))) await this.read(ref);
    return this.read(ref);
  }

  async deleteStream(ref: StreamRef): Promise<void> {
    for (let attempt = 0; attempt < 5; attempt++) {
      const stream = await this.read(ref);
      await this.enqueueSweep(stream, 'stream_messages', stream.head.generation);
      await this.enqueueSweep(stream, 'stream_consumers', stream.consumerGeneration);
      if (await this.options.store.deleteStream(ref, stream.head.generation)) return;
    }
    throw new AppError('unavailable', 'stream kept changing generation during delete');
  }

  /** Publishes a batch in order; the sequence of each message (a duplicate's is its first publish's). */
  async publish(ref: StreamRef, batch: NewMessage[]): Promise<number[]> {
    return (await this.publishAcks(ref, batch)).map((ack) => ack.seq);
  }

  /**
   * Publishes a batch in order and says of each message what NATS's `PubAck` says: its sequence,
   * and `duplicate` when its `msg_id` was already published in the duplicate window (or earlier in
   * the batch), so nothing new was stored for it and the sequence is its first publish's.
   */
  async publishAcks(ref: StreamRef, batch: NewMessage[]): Promise<PublishAck[]> {
    const { store, now } = this.options;
    // The head as it is: a publish does not stop to help others before it has its own sequences,
    // except to skip reservations past their lease (its own reservation will reset `reservedAt`).
    let stream = await this.read(ref);
    if (stream.head.reserved > stream.head.lastSeq && now() - stream.head.reservedAt > this.options.leaseMs && (await this.advance(stream))) stream = await this.read(ref);
    const { config } = stream;
    const sizes = batch.map(messageSize);
    if (sizes.some((size) => size > config.maxMsgSize)) {
      throw new AppError('payload_too_large', 'message over max_msg_size', undefined, `a message is larger than the stream's max_msg_size (${config.maxMsgSize} bytes)`);
    }
    const at = messagesOf(stream);
    const seqs: (number | undefined)[] = new Array(batch.length).fill(undefined);
    const claims = await this.claimMsgIds(at, config, batch, seqs);
    const fresh = batch.map((_, i) => i).filter((i) => seqs[i] === undefined && !claims.sameAs.has(i));
    if (fresh.length > 0) {
      const bytes = fresh.reduce((sum, i) => sum + sizes[i]!, 0);
      let reservation: { head: StreamHead; at: number } | undefined;
      try {
        for (let attempt = 0; !reservation; attempt++) {
          if (attempt >= RESERVE_ATTEMPTS) throw new AppError('unavailable', 'head kept changing during publish');
          if (refusesNew(stream.head, config, fresh.length, bytes)) {
            throw new AppError('stream_full', 'discard new', undefined, 'the stream is at max_msgs or max_bytes and its discard policy is "new"');
          }
          const result = await store.reserve(ref, { generation: at.generation, count: fresh.length, bytes, now: now(), expect: config.discard === 'new' ? stream.head : undefined });
          if (typeof result === 'object') reservation = result;
          else if (result === 'moved') throw new AppError('conflict', 'stream purged or deleted during publish', undefined, 'the stream was purged or deleted during the publish; nothing was stored');
          else stream = await this.read(ref);
        }
      } catch (error) {
        await Promise.all(claims.mine.map((record) => store.releaseMsgId(at, record.msgId, record.token)));
        throw error;
      }
      const last = reservation.head.reserved;
      const first = last - fresh.length + 1;
      fresh.forEach((i, k) => { seqs[i] = first + k; });
      // Past the deadline the lease may already let others skip our sequences: writing now could fill a hole a reader has passed.
      if (now() - reservation.at > this.options.writeDeadlineMs) throw new AppError('unavailable', 'publish too slow to write its reservation');
      const messages: StoredMessage[] = fresh.map((i) => ({ ...batch[i]!, seq: seqs[i]!, ts: reservation.at, size: sizes[i]! }));
      const records = claims.mine.map((record) => ({ ...record, seq: seqs[claims.indexOf.get(record.msgId)!]! }));
      // The msg_ids' sequences first: a publish killed after writing its messages is then never stored twice, and a
      // record whose sequence was skipped instead (killed before writing) is found void and replaced (`isStored`).
      if (records.length > 0) await store.putMessages(at, [], records);
      await store.putMessages(at, messages, []);
      // The fast path: every earlier sequence is committed, so ours go in one conditional write.
      const committed = await store.commit(ref, { generation: at.generation, fromSeq: first - 1, toSeq: last, addBytes: bytes, lastTs: reservation.at });
      if (committed) await this.retain({ ...stream, head: committed });
      else await this.awaitCommit(ref, { generation: at.generation, fromSeq: first - 1, toSeq: last, addBytes: bytes, lastTs: reservation.at });
    }
    for (const [i, j] of claims.sameAs) seqs[i] = seqs[j];
    const stored = new Set(fresh);
    return seqs.map((seq, i) => ({ seq: seq!, duplicate: !stored.has(i) }));
  }

  /**
   * Claims each message's `msg_id` in the duplicate window. A msg_id already published in the
   * window gives its sequence (stored nothing); one whose publish is in flight is waited for;
   * a repeat within the batch takes its first occurrence's sequence.
   */
  private async claimMsgIds(at: MessagesRef, config: StreamConfig, batch: NewMessage[], seqs: (number | undefined)[]) {
    const { store, now } = this.options;
    const mine: DedupRecord[] = [];
    const indexOf = new Map<string, number>();
    const sameAs = new Map<number, number>();
    if (config.duplicateWindowSeconds === 0) return { mine, indexOf, sameAs };
    const token = Buffer.from(this.options.randomBytes(8)).toString('hex');
    const deadline = now() + this.options.commitWaitMs;
    for (const [i, message] of batch.entries()) {
      if (message.msgId === null) continue;
      const earlier = indexOf.get(message.msgId);
      if (earlier !== undefined) {
        sameAs.set(i, earlier);
        continue;
      }
      indexOf.set(message.msgId, i);
      for (;;) {
        const claim: DedupRecord = { msgId: message.msgId, seq: null, at: now(), token };
        const result = await store.claimMsgId(at, claim, { windowBefore: claim.at - config.duplicateWindowSeconds * 1000, claimBefore: claim.at - this.options.leaseMs });
        if (result.claimed) {
          mine.push(claim);
          break;
        }
        const record = result.record;
        if (record?.seq != null) {
          if (await this.isStored(at, { ...record, seq: record.seq }, deadline)) {
            seqs[i] = record.seq;
            break;
          }
          // Its sequence was skipped (the publisher died before writing): replace the record, unless another did.
          const retaken = await store.claimMsgId(at, claim, { windowBefore: record.at + 1, claimBefore: claim.at - this.options.leaseMs });
          if (retaken.claimed) {
            mine.push(claim);
            break;
          }
          continue;
        }
        if (now() > deadline) throw new AppError('unavailable', 'a publish with this msg_id is still in flight');
        await this.options.sleep(POLL_MS * 5);
      }
    }
    return { mine, indexOf, sameAs };
  }

  /**
   * Whether the message a msg_id's record names was stored: once the watermark has passed its
   * sequence, the message is there (or was, before retention), unless its sequence was skipped.
   */
  private async isStored(at: MessagesRef, record: DedupRecord & { seq: number }, deadline: number): Promise<boolean> {
    for (;;) {
      const stream = await this.options.store.getStream(at);
      if (!stream || stream.head.generation !== at.generation) return false;
      if (record.seq < stream.head.firstSeq) return true;
      if (record.seq <= stream.head.lastSeq) {
        const [message] = await this.options.store.getMessages(at, [record.seq]);
        return message !== undefined && !message.skipped && message.msgId === record.msgId;
      }
      if (!(await this.advance(stream))) {
        if (this.options.now() > deadline) throw new AppError('unavailable', 'the first publish of this msg_id has not committed yet');
        await this.options.sleep(POLL_MS);
      }
    }
  }

  /** Waits, helping, until the watermark covers `own.toSeq` (or the generation moved: purged, fine). */
  private async awaitCommit(ref: StreamRef, own: { generation: string; fromSeq: number; toSeq: number; addBytes: number; lastTs: number }): Promise<void> {
    const deadline = this.options.now() + this.options.commitWaitMs;
    for (;;) {
      const stream = await this.options.store.getStream(ref);
      if (!stream || stream.head.generation !== own.generation) return;
      if (stream.head.lastSeq >= own.toSeq) return;
      const committed = stream.head.lastSeq === own.fromSeq ? await this.options.store.commit(ref, own) : undefined;
      if (committed) {
        await this.retain({ ...stream, head: committed });
        return;
      }
      if (!(await this.advance(stream))) {
        if (this.options.now() > deadline) {
          throw new AppError('unavailable', 'earlier publishes did not commit in time', undefined, 'stored, but earlier publishes have not committed yet; retry with the same msg_id to learn the sequence');
        }
        await this.options.sleep(POLL_MS);
      }
    }
  }

  /** One commit step over what is written after the watermark; true when it moved. */
  private async advance(stream: Stream): Promise<boolean> {
    const { head } = stream;
    if (head.reserved <= head.lastSeq) return false;
    const { store, now, leaseMs } = this.options;
    const at = messagesOf(stream);
    const upTo = Math.min(head.reserved, head.lastSeq + STEP_SEQS);
    const marks = await store.marks(at, { fromSeq: head.lastSeq + 1, toSeq: upTo, limit: STEP_SEQS });
    const step = commitStep(head, marks, upTo, now(), leaseMs);
    for (const seq of step.skip) if (!(await store.skipSequence(at, seq, now()))) return false;
    if (step.lastSeq === head.lastSeq) return false;
    const request = { generation: head.generation, fromSeq: head.lastSeq, toSeq: step.lastSeq, addBytes: step.lastBytes - head.lastBytes, lastTs: step.lastTs };
    return (await store.commit(stream, request)) !== undefined;
  }

  /** One retention step (and one sweep step of what retention hid); true when the head changed. */
  private async retain(stream: Stream): Promise<boolean> {
    const { head, config } = stream;
    const { store, now } = this.options;
    const at = messagesOf(stream);
    let changed = false;
    const { messages, bytes } = countsOf(head);
    const over = config.discard === 'old' && ((config.maxMsgs !== null && messages > config.maxMsgs) || (config.maxBytes !== null && bytes > config.maxBytes));
    if (messages > 0 && (over || config.maxAgeSeconds !== null)) {
      // Age alone: look at the oldest message first, and at more only when it has expired.
      let marks = await store.marks(at, { fromSeq: head.firstSeq, toSeq: head.lastSeq, limit: over ? STEP_SEQS : 1 });
      if (!over && marks[0] && isExpired(config, marks[0].ts, now())) marks = await store.marks(at, { fromSeq: head.firstSeq, toSeq: head.lastSeq, limit: STEP_SEQS });
      const step = retentionStep(head, config, marks, now());
      if (step.firstSeq > head.firstSeq) changed = await store.trim(stream, { generation: head.generation, fromSeq: head.firstSeq, ...step });
      if (changed) head.firstSeq = step.firstSeq;
    }
    if (head.sweptSeq < head.firstSeq - 1) {
      await store.sweep(stream, at, { fromSeq: head.sweptSeq + 1, toSeq: Math.min(head.firstSeq - 1, head.sweptSeq + SWEEP_SEQS) });
      changed = true;
    }
    return changed;
  }

  /**
   * Up to `limit` messages after `after_seq`, or from the first at or after `start_time`, in
   * sequence order, up to the watermark and within {@link MAX_ANSWER_BYTES}; `nextAfterSeq`
   * continues the read.
   */
  async readMessages(ref: StreamRef, request: { start: { afterSeq: number } | { startTime: number }; limit: number }) {
    const stream = await this.getStream(ref);
    const { head } = stream;
    const at = messagesOf(stream);
    const startTime = 'startTime' in request.start ? request.start.startTime : -Infinity;
    let from = 'afterSeq' in request.start ? Math.max(request.start.afterSeq + 1, head.firstSeq) : await this.seekTime(stream, startTime);
    const now = this.options.now();
    const messages: StoredMessage[] = [];
    let nextAfterSeq = from - 1;
    let bytes = 0;
    let full = false;
    // A page read over skipped or expired messages goes on reading, a bounded number of times.
    for (let queries = 0; queries < 8 && !full && messages.length < request.limit && from <= head.lastSeq; queries++) {
      const items = await this.options.store.readMessages(at, { fromSeq: from, toSeq: head.lastSeq, limit: request.limit - messages.length, maxBytes: MAX_ANSWER_BYTES - bytes });
      if (items.length === 0) break;
      for (const item of items) {
        if (messages.length >= request.limit) break;
        if (!item.skipped && !isExpired(stream.config, item.ts, now) && item.ts >= startTime) {
          const size = answerBytes(item);
          if (messages.length > 0 && bytes + size > MAX_ANSWER_BYTES) {
            full = true;
            break;
          }
          bytes += size;
          messages.push(item);
        }
        nextAfterSeq = item.seq;
      }
      from = nextAfterSeq + 1;
    }
    return { messages, nextAfterSeq: Math.max(nextAfterSeq, 'afterSeq' in request.start ? request.start.afterSeq : 0), stream };
  }

  /**
   * The first sequence published at or after `time` (`last_seq + 1` if none), by a binary search
   * over the stream's sequences: publish times follow sequences (within publishers' clock skew),
   * and each step reads one item (a packed run of at most 32 KB, or one large message), so the
   * whole costs about log2(messages) small reads, however long the stream.
   */
  async seekTime(stream: Stream, time: number): Promise<number> {
    const { head } = stream;
    const at = messagesOf(stream);
    let low = head.firstSeq;
    let high = head.lastSeq + 1;
    while (low < high) {
      const middle = Math.floor((low + high) / 2);
      const [mark] = await this.options.store.marks(at, { fromSeq: middle, toSeq: head.lastSeq, limit: 1 });
      if (!mark || mark.ts >= time) high = middle;
      else low = mark.seq + 1;
    }
    return low;
  }

  async getMessage(ref: StreamRef, seq: number): Promise<StoredMessage> {
    const stream = await this.getStream(ref);
    const { head } = stream;
    if (seq < head.firstSeq || seq > head.lastSeq) throw notFound('message');
    const [message] = await this.options.store.getMessages(messagesOf(stream), [seq]);
    if (!message || message.skipped || isExpired(stream.config, message.ts, this.options.now())) throw notFound('message');
    return message;
  }

  private enqueueSweep(stream: Stream, kind: SweepKind, generation: string): Promise<void> {
    const task = { accountId: stream.accountId, name: stream.name, generation, kind, settleUntil: this.options.now() + this.options.settleMs };
    return this.options.sweeps.enqueue(task, FIRST_SWEEP_DELAY_SECONDS);
  }

  private newGeneration(): string {
    return Buffer.from(this.options.randomBytes(GENERATION_BYTES)).toString('hex');
  }
}
