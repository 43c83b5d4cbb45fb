/** Retention: what a publish past `max_msgs` or `max_bytes` does. */
export type DiscardPolicy = 'old' | 'new';

/** A stream's configuration; it survives purges unchanged. `null`: no limit. */
export interface StreamConfig {
  description: string | null;
  maxMsgs: number | null;
  maxBytes: number | null;
  maxAgeSeconds: number | null;
  maxMsgSize: number;
  discard: DiscardPolicy;
  duplicateWindowSeconds: number;
}

/** A stream of one account. */
export interface StreamRef {
  accountId: string;
  name: string;
}

/**
 * Where a stream's sequence stands: the head of the log, kept in one small item.
 *
 * - `reserved`: the highest sequence handed to a publisher (`reservedBytes`: their bytes in all,
 *   `reservedAt`: epoch ms of the latest reservation).
 * - `lastSeq`: the committed watermark. Every sequence up to it is written (or recorded as skipped);
 *   readers never look past it, so a sequence is never seen missing and later filled.
 * - `firstSeq`: the oldest sequence still in the stream (retention and purges move it forward).
 * - `lastBytes` / `droppedBytes`: bytes committed up to `lastSeq` / removed below `firstSeq`, ever.
 * - `sweptSeq`: messages below it were also deleted from the table, not only hidden.
 */
export interface StreamHead {
  generation: string;
  reserved: number;
  reservedBytes: number;
  reservedAt: number;
  lastSeq: number;
  lastBytes: number;
  lastTs: number | null;
  firstSeq: number;
  droppedBytes: number;
  sweptSeq: number;
}

export interface Stream extends StreamRef {
  config: StreamConfig;
  /** ISO 8601. */
  createdAt: string;
  /** The partition of the stream's consumers; new for each stream of this name. */
  consumerGeneration: string;
  head: StreamHead;
}

/** One generation of a stream's messages: a purge moves the stream to a new one. */
export interface MessagesRef extends StreamRef {
  generation: string;
}

export interface NewMessage {
  /** The message's `data` as JSON text. */
  data: string;
  headers: Record<string, string> | null;
  msgId: string | null;
}

export interface StoredMessage extends NewMessage {
  seq: number;
  /** Epoch ms of the publish. */
  ts: number;
  /** Bytes counted against the limits: the data's JSON text and the headers. */
  size: number;
}

/** What a commit needs of a message: a skipped sequence (crashed publisher) has size 0. */
export interface MessageMark {
  seq: number;
  ts: number;
  size: number;
  skipped: boolean;
}

export interface StreamPage {
  streams: Stream[];
  nextCursor: string | null;
}

/** A `msg_id`'s record in the duplicate window: `seq` is unset while its publish is in flight. */
export interface DedupRecord {
  msgId: string;
  seq: number | null;
  at: number;
  token: string;
}

export type DeliverPolicy = 'all' | 'new' | 'last' | 'by_start_sequence' | 'by_start_time';

export interface ConsumerConfig {
  deliverPolicy: DeliverPolicy;
  /** With `by_start_sequence`. */
  optStartSeq: number | null;
  /** With `by_start_time`: epoch ms. */
  optStartTime: number | null;
  ackWaitSeconds: number;
  /** `null`: redelivered without end. */
  maxDeliver: number | null;
  /** The wait before each redelivery, by delivery count (the last repeats); empty: `ackWaitSeconds` each time. */
  backoffSeconds: number[];
  maxAckPending: number;
}

/** Consumers live in the stream's consumer partition. */
export interface ConsumerRef {
  stream: StreamRef;
  consumerGeneration: string;
  name: string;
}

export interface Consumer {
  name: string;
  config: ConsumerConfig;
  createdAt: string;
  /** Random per consumer: its pending and dead items are keyed by it, so a new consumer of the same name starts clean. */
  id: string;
  /** The highest sequence handed out for the first time. */
  deliveredSeq: number;
  numRedelivered: number;
  /** Moves on each ack or nak that changed a pending message: a waiting fetch reads the pending items again only then. */
  pendingVersion: number;
}

/** A message delivered and not yet acknowledged. */
export interface Pending {
  seq: number;
  /** Deliveries so far. */
  deliveries: number;
  /** Epoch ms from which it is delivered again. */
  deliverAt: number;
}

export interface DeadMessage {
  seq: number;
  deliveries: number;
  /** Epoch ms. */
  deadAt: number;
}

/** The outcome of a head reservation. */
/** The outcome of a head reservation: the head after it (`head.reserved` is the caller's last sequence), or why not. */
export type Reservation = { head: StreamHead; at: number } | 'moved' | 'conflict';

/**
 * Storage of streams, messages and consumers (`DynamoStreamStore`). Reads are strongly consistent.
 * No multi-item transactions: every write that must not race is a conditional write of one item.
 */
export interface StreamStore {
  /** false when the account already has a stream of that name. */
  createStream(stream: Stream): Promise<boolean>;
  getStream(ref: StreamRef): Promise<Stream | undefined>;
  /** The account's streams in name order. */
  listStreams(accountId: string, page: { limit: number; cursor?: string }): Promise<StreamPage>;
  /** Replaces the stream's configuration (its head and consumers stay); false when there is no such stream. */
  updateConfig(ref: StreamRef, config: StreamConfig): Promise<boolean>;
  /** Deletes the stream if it is still at `generation`; false otherwise. */
  deleteStream(ref: StreamRef, generation: string): Promise<boolean>;
  /**
   * Purge: moves the stream to generation `next` if it is still at `expected`, and moves
   * `firstSeq` and the watermark past every sequence reserved so far; false otherwise.
   */
  swapGeneration(ref: StreamRef, expected: string, next: string): Promise<boolean>;

  /**
   * Reserves `count` sequences of `bytes` in all, at `now`, if the stream is still at `generation`
   * (and, given `expect`, its head is still where the caller read it: `discard: new` checks).
   */
  reserve(ref: StreamRef, request: { generation: string; count: number; bytes: number; now: number; expect?: StreamHead }): Promise<Reservation>;
  /** Writes messages (and the msg_ids' records) unconditionally: their sequences are the caller's own. */
  putMessages(at: MessagesRef, messages: StoredMessage[], dedup: DedupRecord[]): Promise<void>;
  /** Records a sequence as skipped unless it was written meanwhile; false then. */
  skipSequence(at: MessagesRef, seq: number, now: number): Promise<boolean>;
  /** What commits and retention need of the messages from `fromSeq` to `toSeq`, ascending. */
  marks(at: MessagesRef, range: { fromSeq: number; toSeq: number; limit: number }): Promise<MessageMark[]>;
  /** Moves the watermark from `fromSeq` to `toSeq` if it is still at `fromSeq` (and the generation too); the head after, or undefined. */
  commit(ref: StreamRef, request: { generation: string; fromSeq: number; toSeq: number; addBytes: number; lastTs: number | null }): Promise<StreamHead | undefined>;
  /** Moves `firstSeq` from `fromSeq` if it is still there. */
  trim(ref: StreamRef, request: { generation: string; fromSeq: number; firstSeq: number; droppedBytes: number }): Promise<boolean>;
  /** Deletes messages from `fromSeq` to `toSeq` from the table and records `sweptSeq = toSeq`. */
  sweep(ref: StreamRef, at: MessagesRef, range: { fromSeq: number; toSeq: number }): Promise<void>;
  /**
   * Messages from `fromSeq` to `toSeq`, ascending, at most `limit`; given `maxBytes`, it stops
   * reading once the messages read hold that many bytes (their `size`), so it may return fewer.
   */
  readMessages(at: MessagesRef, range: { fromSeq: number; toSeq: number; limit: number; maxBytes?: number }): Promise<(StoredMessage & { skipped?: boolean })[]>;
  getMessages(at: MessagesRef, seqs: number[]): Promise<(StoredMessage & { skipped?: boolean })[]>;

  /**
   * Claims the msg_id's record for `claim.token` if there is none, or it was written before
   * `windowBefore`, or it is an unfinished claim made before `claimBefore`; else the record found
   * (undefined when it vanished meanwhile: try again).
   */
  claimMsgId(at: MessagesRef, claim: DedupRecord, stale: { windowBefore: number; claimBefore: number }): Promise<{ claimed: true } | { claimed: false; record?: DedupRecord }>;
  /** Gives up a claim (its publish was refused). */
  releaseMsgId(at: MessagesRef, msgId: string, token: string): Promise<void>;
  getMsgId(at: MessagesRef, msgId: string): Promise<DedupRecord | undefined>;

  /** Consumers: false when one of that name exists. */
  createConsumer(stream: Stream, consumer: Consumer): Promise<boolean>;
  getConsumer(ref: ConsumerRef): Promise<Consumer | undefined>;
  deleteConsumer(ref: ConsumerRef): Promise<Consumer | undefined>;
  countConsumers(stream: Stream): Promise<number>;
  /** A page of the stream's consumers in name order. */
  listConsumers(stream: Stream, page: { limit: number; cursor?: string }): Promise<{ consumers: Consumer[]; nextCursor: string | null }>;
  /** Moves `deliveredSeq` up to `to` unless it is there already. */
  advanceDelivered(ref: ConsumerRef, to: number): Promise<void>;
  countRedelivered(ref: ConsumerRef, count: number): Promise<void>;
  /** The consumer's pending messages, ascending, at most `limit`. */
  listPending(ref: ConsumerRef, id: string, limit: number): Promise<Pending[]>;
  /** Creates the pending item unless one exists: true means this caller delivers the message. */
  claimNew(ref: ConsumerRef, id: string, pending: Pending): Promise<boolean>;
  /** Updates a pending item if its `deliverAt` is still `expectDeliverAt`: true means this caller delivers it. */
  claimDue(ref: ConsumerRef, id: string, pending: Pending, expectDeliverAt: number): Promise<boolean>;
  /**
   * Removes pending items; the sequences that were pending. It first reads which of `seqs` are
   * pending (a query per run of nearby sequences, a batched get for the rest, about one read unit
   * a sequence at most) and deletes only those: a write per sequence acknowledged, none for others.
   */
  ack(ref: ConsumerRef, id: string, seqs: number[]): Promise<number[]>;
  /** Deletes pending items known to be there (a fetch found them purged, or their message gone), in batches. */
  dropPending(ref: ConsumerRef, id: string, seqs: number[]): Promise<void>;
  /** Moves the consumer's `pendingVersion` on (an ack or nak changed its pending messages). */
  touchPending(ref: ConsumerRef): Promise<void>;
  /** Sets a pending message's next delivery; false when it is not pending. */
  nak(ref: ConsumerRef, id: string, seq: number, deliverAt: number): Promise<boolean>;
  /** Records a message as dead and removes it from pending if still at `expectDeliverAt`. */
  markDead(ref: ConsumerRef, id: string, dead: DeadMessage, expectDeliverAt: number): Promise<void>;
  listDead(ref: ConsumerRef, id: string, page: { limit: number; cursor?: string }): Promise<{ dead: DeadMessage[]; nextCursor: string | null }>;
}
