import type { BodyOf, DataOf, QueryOf, Transport } from '../http.js';
import { paginate, type ListOptions } from '../paging.js';
import type { Consumer, ConsumerInput, DeliveredMessage, Message, Stream, StreamInput } from '../types.js';

/** A message to publish: `data` is any JSON value. */
export type PublishMessage = BodyOf<'publishMessages'>['messages'][number];

/** Streams, their messages and their consumers. */
export class StreamsView {
  constructor(private readonly http: Transport) {}

  /** Every stream of the account (`listStreams`). */
  list(options: ListOptions = {}): AsyncGenerator<Stream> {
    return paginate(async (cursor) => {
      const data = await this.http.data('listStreams', { query: { limit: options.pageSize, cursor }, signal: options.signal });
      return { items: data.streams, next: data.next_cursor };
    });
  }

  /** Creates a stream, or changes its configuration (`createStream`). */
  create(stream: string, input: StreamInput = {}): Promise<Stream> {
    return this.http.data('createStream', { path: { stream }, json: input });
  }

  /** A stream's configuration and state (`getStream`). */
  get(stream: string): Promise<DataOf<'getStream'>> {
    return this.http.data('getStream', { path: { stream } });
  }

  /** Deletes a stream (`deleteStream`). */
  async delete(stream: string): Promise<void> {
    await this.http.call('deleteStream', { path: { stream } });
  }

  /** Deletes every message and keeps the stream (`purgeStream`). */
  purge(stream: string): Promise<unknown> {
    return this.http.call('purgeStream', { path: { stream } }).then((r) => r.json());
  }

  /** Publishes up to 100 messages (`publishMessages`); each `acks[i].duplicate` says whether its `msg_id` was seen. */
  publish(stream: string, messages: PublishMessage | readonly PublishMessage[]): Promise<DataOf<'publishMessages'>> {
    return this.http.data('publishMessages', { path: { stream }, json: { messages: Array.isArray(messages) ? messages : [messages] } });
  }

  /** Messages in order from `afterSeq` (`readMessages`, following `next_after_seq` to the stream's end at the time). */
  async *read(stream: string, options: ListOptions & Omit<NonNullable<QueryOf<'readMessages'>>, 'limit'> = {}): AsyncGenerator<Message> {
    let after = options.after_seq;
    for (;;) {
      const data = await this.http.data('readMessages', {
        path: { stream }, query: { after_seq: after, start_time: after === options.after_seq ? options.start_time : undefined, limit: options.pageSize }, signal: options.signal,
      });
      yield* data.messages;
      if (data.messages.length === 0 || data.next_after_seq >= data.last_seq) return;
      after = data.next_after_seq;
    }
  }

  /** One message by its sequence (`getMessage`). */
  getMessage(stream: string, seq: number): Promise<DataOf<'getMessage'>> {
    return this.http.data('getMessage', { path: { stream, seq } });
  }

  /** Every consumer of the stream (`listConsumers`). */
  listConsumers(stream: string, options: ListOptions = {}): AsyncGenerator<Consumer> {
    return paginate(async (cursor) => {
      const data = await this.http.data('listConsumers', { path: { stream }, query: { limit: options.pageSize, cursor }, signal: options.signal });
      return { items: data.consumers, next: data.next_cursor };
    });
  }

  /** Creates a durable consumer (`createConsumer`). */
  createConsumer(stream: string, consumer: string, input: ConsumerInput = {}): Promise<Consumer> {
    return this.http.data('createConsumer', { path: { stream, consumer }, json: input });
  }

  /** A consumer's position and settings (`getConsumer`). */
  getConsumer(stream: string, consumer: string): Promise<DataOf<'getConsumer'>> {
    return this.http.data('getConsumer', { path: { stream, consumer } });
  }

  /** Deletes a consumer (`deleteConsumer`). */
  async deleteConsumer(stream: string, consumer: string): Promise<void> {
    await this.http.call('deleteConsumer', { path: { stream, consumer } });
  }

  /** Messages a consumer gave up on (`listDeadMessages`). */
  listDead(stream: string, consumer: string, options: ListOptions = {}): AsyncGenerator<DataOf<'listDeadMessages'>['dead'][number]> {
    return paginate(async (cursor) => {
      const data = await this.http.data('listDeadMessages', { path: { stream, consumer }, query: { limit: options.pageSize, cursor }, signal: options.signal });
      return { items: data.dead, next: data.next_cursor };
    });
  }

  /** A handle on one durable consumer: `fetch`, `ack`, `nak`, and `for await` over its messages. */
  consumer(stream: string, name: string): StreamConsumer {
    return new StreamConsumer(this.http, stream, name);
  }
}

export interface ConsumeOptions {
  /** Messages asked for per fetch (1-100, default 10). */
  batch?: number;
  /** How long a fetch waits for a message, in ms (0-20,000, default 5,000). */
  waitMs?: number;
  /** Seconds before a message the loop body threw on is delivered again (default: the consumer's). */
  nakDelaySeconds?: number;
  /** Stop after a fetch that returns nothing (default: keep waiting until `signal` aborts or the loop breaks). */
  stopWhenEmpty?: boolean;
  signal?: AbortSignal;
}

/** One durable consumer of a stream (as `nats.js`'s JetStream consumer). */
export class StreamConsumer {
  constructor(private readonly http: Transport, readonly stream: string, readonly name: string) {}

  private get path() {
    return { stream: this.stream, consumer: this.name };
  }

  /** Up to `batch` messages, waiting up to `waitMs` for the first (`fetchMessages`). */
  async fetch(options: { batch?: number; waitMs?: number; signal?: AbortSignal } = {}): Promise<DeliveredMessage[]> {
    const data = await this.http.data('fetchMessages', { path: this.path, json: { batch: options.batch, wait_ms: options.waitMs }, signal: options.signal });
    return data.messages;
  }

  /** Acknowledges messages by sequence (`ackMessages`). */
  ack(seqs: number | readonly number[]): Promise<DataOf<'ackMessages'>> {
    return this.http.data('ackMessages', { path: this.path, json: { seqs: typeof seqs === 'number' ? [seqs] : [...seqs] } });
  }

  /** Asks for a message again, after `delaySeconds` (`nakMessage`). */
  nak(seq: number, options: { delaySeconds?: number } = {}): Promise<DataOf<'nakMessage'>> {
    return this.http.data('nakMessage', { path: this.path, json: { seq, delay_seconds: options.delaySeconds } });
  }

  /**
   * The consumer's messages, one at a time. A message is acknowledged when the loop body returns
   * (the loop asks for the next one) and nak'd when the body throws, so it is delivered again. A
   * `for await` loop cannot tell its iterator a `break` from a throw (both call `return()`), so a
   * message the body leaves by `break` is nak'd too, unless the body settled it with
   * `message.ack()` first.
   */
  messages(options: ConsumeOptions = {}): AsyncIterableIterator<ConsumedMessage> {
    let batch: DeliveredMessage[] = [];
    let current: ConsumedMessage | undefined;
    const settle = async (how: 'ack' | 'nak') => {
      const message = current;
      current = undefined;
      if (!message || message.settled) return;
      if (how === 'ack') await message.ack();
      else await message.nak(options.nakDelaySeconds);
    };
    const iterator: AsyncIterableIterator<ConsumedMessage> = {
      next: async () => {
        await settle('ack');
        while (batch.length === 0) {
          if (options.signal?.aborted) return { done: true, value: undefined };
          batch = await this.fetch({ batch: options.batch ?? 10, waitMs: options.waitMs ?? 5000, signal: options.signal });
          if (batch.length === 0 && options.stopWhenEmpty) return { done: true, value: undefined };
        }
        current = this.settleable(batch.shift()!, options);
        return { done: false, value: current };
      },
      return: async () => {
        await settle('nak');
        // The rest of the batch was never handed to the body: it is asked for again at once.
        for (const message of batch.splice(0)) await this.nak(message.seq);
        return { done: true, value: undefined };
      },
      [Symbol.asyncIterator]: () => iterator,
    };
    return iterator;
  }

  [Symbol.asyncIterator](): AsyncIterator<ConsumedMessage> {
    return this.messages();
  }

  private settleable(message: DeliveredMessage, options: ConsumeOptions): ConsumedMessage {
    const consumed: ConsumedMessage = {
      ...message,
      settled: false,
      ack: async () => {
        consumed.settled = true;
        await this.ack(message.seq);
      },
      nak: async (delaySeconds = options.nakDelaySeconds) => {
        consumed.settled = true;
        await this.nak(message.seq, { delaySeconds });
      },
    };
    return consumed;
  }
}

/** A message handed out by {@link StreamConsumer.messages}, with its own `ack` and `nak`. */
export interface ConsumedMessage extends DeliveredMessage {
  /** Whether `ack` or `nak` was called on it. */
  settled: boolean;
  ack(): Promise<void>;
  nak(delaySeconds?: number): Promise<void>;
}
