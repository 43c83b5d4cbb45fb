import { AppError, notFound } from '../../shared/errors.js';
import type { Clock } from '../clock.js';
import type { RandomBytes } from '../random-bytes.js';
import { FETCH_POLL_MAX_MS, FETCH_POLL_MS, MAX_ANSWER_BYTES, MAX_CONSUMERS, MAX_PENDING_SCANS_PER_FETCH } from './limits.js';
import { ackWaitAfter, isExpired } from './log.js';
import { messagesOf, type StreamService } from './service.js';
import type { Consumer, ConsumerConfig, ConsumerRef, Pending, StoredMessage, Stream, StreamRef, StreamStore } from './types.js';
import { answerBytes } from './validation.js';

export interface ConsumerServiceOptions {
  store: StreamStore;
  streams: StreamService;
  now: Clock;
  randomBytes: RandomBytes;
  sleep: (ms: number) => Promise<void>;
}

/** A delivered message: the stream's message and how many times it has been delivered. */
export interface Delivery extends StoredMessage {
  deliveries: number;
}

export interface ConsumerInfo {
  consumer: Consumer;
  /** Messages in the stream not yet delivered. */
  numPending: number;
  /** Delivered and not acknowledged. */
  numAckPending: number;
  /** Every sequence up to it is acknowledged (or was never to be delivered). */
  ackFloor: number;
  deliveredSeq: number;
}

/** Pending items read per fetch when looking for due redeliveries. */
const PENDING_SCAN = 1000;
/** Messages due again read at a time, so that a full answer stops the reading. */
const READ_GROUP = 10;

/** What a fetch knows of its consumer's pending items between the looks of a wait. */
interface PendingView {
  /** Delivered and not acknowledged, as counted (acks since only lower it: safe for `max_ack_pending`). */
  unacknowledged: number;
  /** Epoch ms at which the earliest pending message not delivered now comes due; Infinity: none. */
  nextDueAt: number;
  /** The consumer's `pendingVersion`, and the head's generation and first sequence, when counted. */
  version: number;
  generation: string;
  firstSeq: number;
}
const refOf = (stream: Stream, name: string): ConsumerRef => ({ stream: { accountId: stream.accountId, name: stream.name }, consumerGeneration: stream.consumerGeneration, name });

/**
 * Durable consumers of a stream: at-least-once delivery in sequence order, with acknowledgement.
 *
 * A consumer's state is small items, no memory between requests: the consumer (its configuration
 * and `delivered_seq`, the highest sequence handed out) and one pending item per delivered,
 * unacknowledged message (deliveries so far, when it is due again). A fetch hands out a message
 * only after creating or updating its pending item with a conditional write, so two fetchers never
 * both hold one pending message: the second's condition fails and it moves on. A fetcher that dies
 * after claiming leaves the pending item, which comes due after `ack_wait` like any other.
 */
export class ConsumerService {
  constructor(private readonly options: ConsumerServiceOptions) {}

  async createConsumer(ref: StreamRef, name: string, config: ConsumerConfig): Promise<ConsumerInfo> {
    const { store, now } = this.options;
    const stream = await this.options.streams.getStream(ref);
    if ((await store.countConsumers(stream)) >= MAX_CONSUMERS) {
      throw new AppError('conflict', 'too many consumers', undefined, `a stream has at most ${MAX_CONSUMERS} consumers`);
    }
    const consumer: Consumer = {
      name, config,
      createdAt: new Date(now()).toISOString(),
      id: Buffer.from(this.options.randomBytes(8)).toString('hex'),
      deliveredSeq: await this.startAfter(stream, config),
      numRedelivered: 0,
      pendingVersion: 0,
    };
    if (!(await store.createConsumer(stream, consumer))) throw new AppError('already_exists');
    return this.describe(stream, consumer);
  }

  /** The sequence before the first one the consumer delivers, by its deliver policy. */
  private async startAfter(stream: Stream, config: ConsumerConfig): Promise<number> {
    const { head } = stream;
    const before = head.firstSeq - 1;
    switch (config.deliverPolicy) {
      case 'all': return before;
      case 'new': return head.lastSeq;
      case 'last': return Math.max(before, head.lastSeq - 1);
      case 'by_start_sequence': return Math.max(before, config.optStartSeq! - 1);
      // A binary search over sequences: about log2(messages) reads of one item each (`StreamService.seekTime`).
      case 'by_start_time': return (await this.options.streams.seekTime(stream, config.optStartTime!)) - 1;
    }
  }

  async getConsumer(ref: StreamRef, name: string): Promise<ConsumerInfo> {
    const { stream, consumer } = await this.load(ref, name);
    return this.describe(stream, consumer);
  }

  /**
   * A page of the stream's consumers with their position and lag, in name order. Each one listed
   * reads its own pending items to count them (up to its `max_ack_pending`), so a page costs what
   * its consumers' counts cost, and pages are small by default (`DEFAULT_CONSUMER_LIST_LIMIT`).
   */
  async listConsumers(ref: StreamRef, page: { limit: number; cursor?: string }): Promise<{ consumers: ConsumerInfo[]; nextCursor: string | null }> {
    const stream = await this.options.streams.getStream(ref);
    const { consumers, nextCursor } = await this.options.store.listConsumers(stream, page);
    return { consumers: await Promise.all(consumers.map((consumer) => this.describe(stream, consumer))), nextCursor };
  }

  async deleteConsumer(ref: StreamRef, name: string): Promise<void> {
    const stream = await this.options.streams.getStream(ref);
    if (!(await this.options.store.deleteConsumer(refOf(stream, name)))) throw notFound('consumer');
  }

  private async load(ref: StreamRef, name: string): Promise<{ stream: Stream; consumer: Consumer }> {
    const stream = await this.options.streams.getStream(ref);
    const consumer = await this.options.store.getConsumer(refOf(stream, name));
    if (!consumer) throw notFound('consumer');
    return { stream, consumer };
  }

  private async describe(stream: Stream, consumer: Consumer): Promise<ConsumerInfo> {
    const { head } = stream;
    const pending = (await this.options.store.listPending(refOf(stream, consumer.name), consumer.id, consumer.config.maxAckPending))
      .filter((p) => p.seq >= head.firstSeq);
    const deliveredSeq = Math.max(consumer.deliveredSeq, head.firstSeq - 1);
    return {
      consumer,
      deliveredSeq,
      numPending: Math.max(0, head.lastSeq - deliveredSeq),
      numAckPending: pending.length,
      ackFloor: pending.length > 0 ? pending[0]!.seq - 1 : deliveredSeq,
    };
  }

  /**
   * Up to `batch` messages: first those due again (unacknowledged past their wait, or nak'd),
   * then new ones in sequence order while fewer than `max_ack_pending` are unacknowledged, and no
   * more than fit {@link MAX_ANSWER_BYTES}: a message is claimed only if it is in the answer.
   *
   * With nothing to deliver it looks again until `waitMs` has passed, first after
   * {@link FETCH_POLL_MS}, backing off to {@link FETCH_POLL_MAX_MS}. A look reads only the stream's
   * head and the consumer (two small items); it reads the pending items again only when an ack or
   * nak moved the consumer's `pendingVersion`, a purge moved the head, or a pending message came
   * due (at most {@link MAX_PENDING_SCANS_PER_FETCH} times a fetch), and new messages only when
   * the head moved past what was delivered.
   */
  async fetch(ref: StreamRef, name: string, request: { batch: number; waitMs: number }): Promise<Delivery[]> {
    const { now, sleep } = this.options;
    const deadline = now() + request.waitMs;
    let { stream, consumer } = await this.load(ref, name);
    let round = await this.fetchOnce(stream, consumer, request.batch);
    let scans = 1;
    let pause = FETCH_POLL_MS;
    while (round.deliveries.length === 0 && now() < deadline) {
      await sleep(Math.min(pause, Math.max(1, deadline - now())));
      pause = Math.min(FETCH_POLL_MAX_MS, Math.ceil(pause * 1.5));
      ({ stream, consumer } = await this.load(ref, name));
      const { view } = round;
      const changed = stream.head.generation !== view.generation || stream.head.firstSeq !== view.firstSeq
        || consumer.pendingVersion !== view.version || now() >= view.nextDueAt;
      if (changed && scans < MAX_PENDING_SCANS_PER_FETCH) {
        scans++;
        round = await this.fetchOnce(stream, consumer, request.batch);
      } else if (stream.head.lastSeq > Math.max(consumer.deliveredSeq, stream.head.firstSeq - 1) && view.unacknowledged < consumer.config.maxAckPending) {
        round = await this.fetchOnce(stream, consumer, request.batch, view);
      }
    }
    return round.deliveries;
  }

  /**
   * One attempt at a batch. Without `known`, it first reads the pending items (due ones are
   * delivered again); with it (a waiting fetch's later looks, when only new messages came),
   * it trusts that view for the count of unacknowledged messages (acks only lower it).
   */
  private async fetchOnce(stream: Stream, consumer: Consumer, batch: number, known?: PendingView): Promise<{ deliveries: Delivery[]; view: PendingView }> {
    const { store, now } = this.options;
    const ref = refOf(stream, consumer.name);
    const { config, id } = consumer;
    const { head } = stream;
    const at = messagesOf(stream);
    const { view, due } = known ? { view: { ...known }, due: [] } : await this.scanPending(stream, consumer, batch);
    const deliveries: Delivery[] = [];
    let bytes = 0;
    let taken = 0;
    let full = false;
    // The answer's byte budget decides before any claim: a message not in the answer stays as it was.
    const fits = (message: StoredMessage) => {
      const size = answerBytes(message);
      if (taken > 0 && bytes + size > MAX_ANSWER_BYTES) return (full = true, false);
      bytes += size;
      taken++;
      return true;
    };

    const gone: number[] = [];
    let redelivered = 0;
    for (let i = 0; i < due.length && !full; i += READ_GROUP) {
      const group = due.slice(i, i + READ_GROUP);
      const messages = new Map((await store.getMessages(at, group.map((p) => p.seq))).map((m) => [m.seq, m]));
      const chosen: { pending: Pending; message: StoredMessage }[] = [];
      for (const pending of group) {
        const message = messages.get(pending.seq);
        if (!message || message.skipped || isExpired(stream.config, message.ts, now())) gone.push(pending.seq);
        else if (fits(message)) chosen.push({ pending, message });
        else break;
      }
      const t = now();
      const won = await Promise.all(chosen.map(({ pending }) => {
        const count = pending.deliveries + 1;
        return store.claimDue(ref, id, { seq: pending.seq, deliveries: count, deliverAt: t + ackWaitAfter(config, count) * 1000 }, pending.deliverAt);
      }));
      chosen.forEach(({ pending, message }, k) => {
        if (won[k]) {
          deliveries.push({ ...message, deliveries: pending.deliveries + 1 });
          redelivered++;
        }
      });
    }
    if (gone.length > 0) {
      await store.dropPending(ref, id, gone);
      view.unacknowledged -= gone.length;
    }
    if (redelivered > 0) await store.countRedelivered(ref, redelivered);

    const room = full ? 0 : Math.min(batch - deliveries.length, config.maxAckPending - view.unacknowledged);
    const after = Math.max(consumer.deliveredSeq, head.firstSeq - 1);
    const upTo = Math.min(after + Math.max(0, room), head.lastSeq);
    if (upTo > after) {
      const read = await store.readMessages(at, { fromSeq: after + 1, toSeq: upTo, limit: upTo - after, maxBytes: MAX_ANSWER_BYTES - bytes });
      const chosen: StoredMessage[] = [];
      // Messages skipped or expired are passed over (nothing to claim); the first that does not fit ends the batch.
      let last = after;
      for (const message of read) {
        if (message.skipped || isExpired(stream.config, message.ts, now())) last = message.seq;
        else if (fits(message)) {
          chosen.push(message);
          last = message.seq;
        } else break;
      }
      const t = now();
      const won = await Promise.all(chosen.map((message) => store.claimNew(ref, id, { seq: message.seq, deliveries: 1, deliverAt: t + ackWaitAfter(config, 1) * 1000 })));
      chosen.forEach((message, k) => {
        if (won[k]) deliveries.push({ ...message, deliveries: 1 });
      });
      view.unacknowledged += won.filter(Boolean).length;
      if (last > after) await store.advanceDelivered(ref, last);
    }
    return { deliveries: deliveries.sort((a, b) => a.seq - b.seq), view };
  }

  /**
   * Reads the consumer's pending items once: the due ones (up to `batch`, those at `max_deliver`
   * recorded dead instead), removing those a purge or retention left behind, and the view a
   * waiting fetch keeps of them.
   */
  private async scanPending(stream: Stream, consumer: Consumer, batch: number): Promise<{ view: PendingView; due: Pending[] }> {
    const { store, now } = this.options;
    const ref = refOf(stream, consumer.name);
    const { config, id } = consumer;
    const { head } = stream;
    const pending = await store.listPending(ref, id, Math.max(PENDING_SCAN, config.maxAckPending));
    const view: PendingView = { unacknowledged: 0, nextDueAt: Infinity, version: consumer.pendingVersion, generation: head.generation, firstSeq: head.firstSeq };
    const due: Pending[] = [];
    const purged: number[] = [];
    const t = now();
    for (const p of pending) {
      // Purged or dropped by retention: nothing left to deliver.
      if (p.seq < head.firstSeq) purged.push(p.seq);
      else if (p.deliverAt > t) {
        view.unacknowledged++;
        view.nextDueAt = Math.min(view.nextDueAt, p.deliverAt);
      } else if (config.maxDeliver !== null && p.deliveries >= config.maxDeliver) {
        await store.markDead(ref, id, { seq: p.seq, deliveries: p.deliveries, deadAt: t }, p.deliverAt);
      } else {
        view.unacknowledged++;
        if (due.length < batch) due.push(p);
        else view.nextDueAt = t;
      }
    }
    if (purged.length > 0) await store.dropPending(ref, id, purged);
    return { view, due };
  }

  /** Acknowledges messages; the sequences that were pending (others were acknowledged already, or never delivered). */
  async ack(ref: StreamRef, name: string, seqs: number[]): Promise<number[]> {
    const { stream, consumer } = await this.load(ref, name);
    const consumerRef = refOf(stream, name);
    // Only a committed sequence can be pending (a fetch claims nothing past the watermark): the rest costs no read and no write.
    const acked = await this.options.store.ack(consumerRef, consumer.id, seqs.filter((seq) => seq <= stream.head.lastSeq));
    if (acked.length > 0) await this.options.store.touchPending(consumerRef);
    return acked;
  }

  /** Asks for a pending message again after `delaySeconds` (0: at the next fetch). */
  async nak(ref: StreamRef, name: string, seq: number, delaySeconds: number): Promise<void> {
    const { stream, consumer } = await this.load(ref, name);
    if (!(await this.options.store.nak(refOf(stream, name), consumer.id, seq, this.options.now() + delaySeconds * 1000))) {
      throw notFound('notPending');
    }
    await this.options.store.touchPending(refOf(stream, name));
  }

  async listDead(ref: StreamRef, name: string, page: { limit: number; cursor?: string }) {
    const { stream, consumer } = await this.load(ref, name);
    return this.options.store.listDead(refOf(stream, name), consumer.id, page);
  }
}
