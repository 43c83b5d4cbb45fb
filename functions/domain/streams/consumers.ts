import { AppError } from '../../shared/errors.js';
import type { Clock } from '../clock.js';
import type { RandomBytes } from '../random-bytes.js';
import { FETCH_POLL_MS, MAX_CONSUMERS, MAX_READ_LIMIT } from './limits.js';
import { ackWaitAfter, isExpired } from './log.js';
import { messagesOf, type StreamService } from './service.js';
import type { Consumer, ConsumerConfig, ConsumerRef, DeadMessage, StoredMessage, Stream, StreamRef, StreamStore } from './types.js';

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

const notFound = (detail: string) => new AppError('not_found', detail);
/** Pending items read per fetch when looking for due redeliveries. */
const PENDING_SCAN = 1000;
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
      case 'by_start_time': {
        // Reads from the first message up to the time (publish times follow sequences within a publisher's clock skew).
        for (let after = before; ;) {
          const { messages, nextAfterSeq } = await this.options.streams.readMessages(stream, { start: { afterSeq: after }, limit: MAX_READ_LIMIT });
          const first = messages.find((message) => message.ts >= config.optStartTime!);
          if (first) return first.seq - 1;
          if (nextAfterSeq <= after || nextAfterSeq >= head.lastSeq) return Math.max(after, nextAfterSeq);
          after = nextAfterSeq;
        }
      }
    }
  }

  async getConsumer(ref: StreamRef, name: string): Promise<ConsumerInfo> {
    const { stream, consumer } = await this.load(ref, name);
    return this.describe(stream, consumer);
  }

  /** Every consumer of the stream with its position and lag, in name order (at most `MAX_CONSUMERS`). */
  async listConsumers(ref: StreamRef): Promise<ConsumerInfo[]> {
    const stream = await this.options.streams.getStream(ref);
    const consumers = await this.options.store.listConsumers(stream);
    return Promise.all(consumers.map((consumer) => this.describe(stream, consumer)));
  }

  async deleteConsumer(ref: StreamRef, name: string): Promise<void> {
    const stream = await this.options.streams.getStream(ref);
    if (!(await this.options.store.deleteConsumer(refOf(stream, name)))) throw notFound('no such consumer');
  }

  private async load(ref: StreamRef, name: string): Promise<{ stream: Stream; consumer: Consumer }> {
    const stream = await this.options.streams.getStream(ref);
    const consumer = await this.options.store.getConsumer(refOf(stream, name));
    if (!consumer) throw notFound('no such consumer');
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
   * then new ones in sequence order while fewer than `max_ack_pending` are unacknowledged. With
   * nothing to deliver it looks again every {@link FETCH_POLL_MS} until `waitMs` has passed.
   */
  async fetch(ref: StreamRef, name: string, request: { batch: number; waitMs: number }): Promise<Delivery[]> {
    const deadline = this.options.now() + request.waitMs;
    for (;;) {
      const { stream, consumer } = await this.load(ref, name);
      const deliveries = await this.fetchOnce(stream, consumer, request.batch);
      if (deliveries.length > 0 || this.options.now() >= deadline) return deliveries;
      await this.options.sleep(Math.min(FETCH_POLL_MS, Math.max(1, deadline - this.options.now())));
    }
  }

  private async fetchOnce(stream: Stream, consumer: Consumer, batch: number): Promise<Delivery[]> {
    const { store, now } = this.options;
    const ref = refOf(stream, consumer.name);
    const { config, id } = consumer;
    const { head } = stream;
    const claimed: { seq: number; deliveries: number }[] = [];

    const pending = await store.listPending(ref, id, Math.max(PENDING_SCAN, config.maxAckPending));
    let unacknowledged = 0;
    let redelivered = 0;
    for (const p of pending) {
      if (p.seq < head.firstSeq) {
        // Purged or dropped by retention: nothing left to deliver.
        await store.ack(ref, id, [p.seq]);
        continue;
      }
      const t = now();
      if (p.deliverAt > t || claimed.length >= batch) {
        unacknowledged++;
        continue;
      }
      if (config.maxDeliver !== null && p.deliveries >= config.maxDeliver) {
        const dead: DeadMessage = { seq: p.seq, deliveries: p.deliveries, deadAt: t };
        await store.markDead(ref, id, dead, p.deliverAt);
        continue;
      }
      const deliveries = p.deliveries + 1;
      unacknowledged++;
      if (await store.claimDue(ref, id, { seq: p.seq, deliveries, deliverAt: t + ackWaitAfter(config, deliveries) * 1000 }, p.deliverAt)) {
        claimed.push({ seq: p.seq, deliveries });
        redelivered++;
      }
    }
    if (redelivered > 0) await store.countRedelivered(ref, redelivered);

    const room = Math.min(batch - claimed.length, config.maxAckPending - unacknowledged);
    const after = Math.max(consumer.deliveredSeq, head.firstSeq - 1);
    const upTo = Math.min(after + Math.max(0, room), head.lastSeq);
    if (upTo > after) {
      const t = now();
      const seqs = Array.from({ length: upTo - after }, (_, i) => after + 1 + i);
      const won = await Promise.all(seqs.map((seq) => store.claimNew(ref, id, { seq, deliveries: 1, deliverAt: t + ackWaitAfter(config, 1) * 1000 })));
      seqs.forEach((seq, i) => { if (won[i]) claimed.push({ seq, deliveries: 1 }); });
      await store.advanceDelivered(ref, upTo);
    }
    if (claimed.length === 0) return [];

    const messages = new Map((await store.getMessages(messagesOf(stream), claimed.map((c) => c.seq))).map((m) => [m.seq, m]));
    const deliveries: Delivery[] = [];
    const gone: number[] = [];
    for (const { seq, deliveries: count } of claimed.sort((a, b) => a.seq - b.seq)) {
      const message = messages.get(seq);
      if (!message || message.skipped || isExpired(stream.config, message.ts, now())) gone.push(seq);
      else deliveries.push({ ...message, deliveries: count });
    }
    if (gone.length > 0) await store.ack(ref, id, gone);
    return deliveries;
  }

  /** Acknowledges messages; the sequences that were pending (others were acknowledged already, or never delivered). */
  async ack(ref: StreamRef, name: string, seqs: number[]): Promise<number[]> {
    const { stream, consumer } = await this.load(ref, name);
    return this.options.store.ack(refOf(stream, name), consumer.id, seqs);
  }

  /** Asks for a pending message again after `delaySeconds` (0: at the next fetch). */
  async nak(ref: StreamRef, name: string, seq: number, delaySeconds: number): Promise<void> {
    const { stream, consumer } = await this.load(ref, name);
    if (!(await this.options.store.nak(refOf(stream, name), consumer.id, seq, this.options.now() + delaySeconds * 1000))) {
      throw notFound('message not pending');
    }
  }

  async listDead(ref: StreamRef, name: string, page: { limit: number; cursor?: string }) {
    const { stream, consumer } = await this.load(ref, name);
    return this.options.store.listDead(refOf(stream, name), consumer.id, page);
  }
}
