import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  BatchWriteCommand,
  DeleteCommand,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
  type DynamoDBDocumentClient,
} from '@aws-sdk/lib-dynamodb';
import type { SweepTask } from '../../domain/kv/sweep-task.js';
import type { GenerationStore } from '../../domain/kv/sweeper.js';
import { seqKey } from '../../domain/streams/log.js';
import { MAX_PACKED_SEQS, packMessages, unpackItems, type PackedItem } from './packed-messages.js';
import { STREAM_NAME_PATTERN } from '../../domain/streams/limits.js';
import type {
  Consumer, ConsumerRef, DeadMessage, DedupRecord, MessageMark, MessagesRef, Pending, Reservation,
  StoredMessage, Stream, StreamConfig, StreamHead, StreamPage, StreamRef, StreamStore,
} from '../../domain/streams/types.js';
import { AppError } from '../../shared/errors.js';
import { ifConditionHolds } from './conditional.js';
import { decodeCursor, encodeCursor } from './cursor.js';
import { scanSortKeys } from './partition-keys.js';
import { chunks } from '../../shared/chunks.js';

/**
 * Item layout, in the kv table beside the KV buckets and object stores (own key prefixes, no index):
 *
 * - `STREAMS#{account}` / `{stream}`: the configuration and the head (generation, reserved,
 *   reserved_bytes, reserved_at, last_seq, last_bytes, last_ts, first_seq, dropped_bytes,
 *   swept_seq), about 300 bytes plus the description: a publish updates it twice (reserve, commit).
 *   An account's streams are one partition, so listing them is one Query.
 * - `STREAMMSG#{account}#{stream}#{generation}` / `{last seq, 16 digits}`: a *packed* item, a run of
 *   consecutive messages of one publish (`packed-messages.ts`); or `skipped` for a sequence whose
 *   publisher died before writing it (a run of one, keyed by its own sequence).
 *   `… / ID#{msg_id}`: the duplicate window's record (seq, at, token, expires_at: the kv table's TTL).
 * - `STREAMCON#{account}#{stream}#{consumer generation}` / `C#{name}`: a consumer;
 *   `P#{consumer id}#{seq}`: a pending delivery; `D#{consumer id}#{seq}`: a dead message.
 */
export const streamsPk = (accountId: string): string => `STREAMS#${accountId}`;
export const messagesPk = (at: MessagesRef): string => `STREAMMSG#${at.accountId}#${at.name}#${at.generation}`;
export const consumersPk = (ref: ConsumerRef): string => `STREAMCON#${ref.stream.accountId}#${ref.stream.name}#${ref.consumerGeneration}`;
const streamKey = (ref: StreamRef) => ({ pk: streamsPk(ref.accountId), sk: ref.name });

const BATCH_WRITE_ITEMS = 25;
const BATCH_GET_KEYS = 100;
/** Sequences of an ack this close are read with one query over their span rather than one get each (about 40 pending items fill a read unit). */
const PENDING_RUN_GAP = 32;
/** Items a byte-bounded read asks for at a time, so that it does not read far past its bound. */
const BYTE_BOUNDED_QUERY_ITEMS = 16;
const UNPROCESSED_MAX_ATTEMPTS = 10;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Dedup records outlive their window by this much before DynamoDB's TTL may take them (read time decides). */
const DEDUP_TTL_MARGIN_SECONDS = 3600;

const toHead = (item: Record<string, unknown>): StreamHead => ({
  generation: item.generation as string,
  reserved: item.reserved as number,
  reservedBytes: item.reserved_bytes as number,
  reservedAt: item.reserved_at as number,
  lastSeq: item.last_seq as number,
  lastBytes: item.last_bytes as number,
  lastTs: (item.last_ts as number | undefined) ?? null,
  firstSeq: item.first_seq as number,
  droppedBytes: item.dropped_bytes as number,
  sweptSeq: item.swept_seq as number,
});

const toStream = (accountId: string, item: Record<string, unknown>): Stream => ({
  accountId,
  name: item.sk as string,
  config: {
    description: (item.description as string | undefined) ?? null,
    maxMsgs: (item.max_msgs as number | undefined) ?? null,
    maxBytes: (item.max_bytes as number | undefined) ?? null,
    maxAgeSeconds: (item.max_age_seconds as number | undefined) ?? null,
    maxMsgSize: item.max_msg_size as number,
    discard: item.discard as 'old' | 'new',
    duplicateWindowSeconds: item.duplicate_window_seconds as number,
  },
  createdAt: item.created_at as string,
  consumerGeneration: item.consumer_generation as string,
  head: toHead(item),
});

const toConsumer = (item: Record<string, unknown>): Consumer => ({
  name: (item.sk as string).slice(2),
  id: item.id as string,
  createdAt: item.created_at as string,
  deliveredSeq: item.delivered_seq as number,
  numRedelivered: (item.num_redelivered as number | undefined) ?? 0,
  pendingVersion: (item.pending_version as number | undefined) ?? 0,
  config: {
    deliverPolicy: item.deliver_policy as Consumer['config']['deliverPolicy'],
    optStartSeq: (item.opt_start_seq as number | undefined) ?? null,
    optStartTime: (item.opt_start_time as number | undefined) ?? null,
    ackWaitSeconds: item.ack_wait_seconds as number,
    maxDeliver: (item.max_deliver as number | undefined) ?? null,
    backoffSeconds: (item.backoff_seconds as number[] | undefined) ?? [],
    maxAckPending: item.max_ack_pending as number,
  },
});

const pendingKey = (id: string, seq: number) => `P#${id}#${seqKey(seq)}`;
const deadKey = (id: string, seq: number) => `D#${id}#${seqKey(seq)}`;
const seqOfKey = (sk: string) => Number(sk.slice(sk.lastIndexOf('#') + 1));

/** The partition a sweep task of a stream reclaims. */
const sweptPk = (task: SweepTask): string => task.kind === 'stream_consumers'
  ? consumersPk({ stream: task, consumerGeneration: task.generation, name: '' })
  : messagesPk(task);

/** Also the sweeper's store of stream generations: purged messages, deleted streams' messages and consumers. */
export class DynamoStreamStore implements StreamStore, GenerationStore {
  constructor(private readonly client: DynamoDBDocumentClient, private readonly table: string) {}

  createStream(stream: Stream): Promise<boolean> {
    const { config, head } = stream;
    return ifConditionHolds(() => this.client.send(new PutCommand({
      TableName: this.table,
      Item: {
        ...streamKey(stream),
        description: config.description ?? undefined,
        max_msgs: config.maxMsgs ?? undefined,
        max_bytes: config.maxBytes ?? undefined,
        max_age_seconds: config.maxAgeSeconds ?? undefined,
        max_msg_size: config.maxMsgSize,
        discard: config.discard,
        duplicate_window_seconds: config.duplicateWindowSeconds,
        created_at: stream.createdAt,
        consumer_generation: stream.consumerGeneration,
        generation: head.generation,
        reserved: head.reserved,
        reserved_bytes: head.reservedBytes,
        reserved_at: head.reservedAt,
        last_seq: head.lastSeq,
        last_bytes: head.lastBytes,
        first_seq: head.firstSeq,
        dropped_bytes: head.droppedBytes,
        swept_seq: head.sweptSeq,
      },
      ConditionExpression: 'attribute_not_exists(pk)',
    })));
  }

  async getStream(ref: StreamRef): Promise<Stream | undefined> {
    const { Item } = await this.client.send(new GetCommand({ TableName: this.table, Key: streamKey(ref), ConsistentRead: true }));
    return Item && toStream(ref.accountId, Item);
  }

  async listStreams(accountId: string, page: { limit: number; cursor?: string }): Promise<StreamPage> {
    const pk = streamsPk(accountId);
    const start = decodeCursor(page.cursor, pk);
    if (start && !STREAM_NAME_PATTERN.test(start.sk as string)) throw new AppError('validation_error', undefined, undefined, 'cursor does not belong to this listing');
    const result = await this.client.send(new QueryCommand({
      TableName: this.table,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': pk },
      Limit: page.limit,
      ExclusiveStartKey: start,
      ConsistentRead: true,
    }));
    return { streams: (result.Items ?? []).map((item) => toStream(accountId, item)), nextCursor: encodeCursor(result.LastEvaluatedKey) };
  }

  updateConfig(ref: StreamRef, config: StreamConfig): Promise<boolean> {
    const fields: [string, string | number | null][] = [
      ['description', config.description], ['max_msgs', config.maxMsgs], ['max_bytes', config.maxBytes],
      ['max_age_seconds', config.maxAgeSeconds], ['max_msg_size', config.maxMsgSize], ['discard', config.discard],
      ['duplicate_window_seconds', config.duplicateWindowSeconds],
    ];
    const set = fields.filter(([, value]) => value !== null);
    const remove = fields.filter(([, value]) => value === null);
    return ifConditionHolds(() => this.client.send(new UpdateCommand({
      TableName: this.table,
      Key: streamKey(ref),
      UpdateExpression: [`SET ${set.map(([name]) => `#${name} = :${name}`).join(', ')}`, remove.length > 0 ? `REMOVE ${remove.map(([name]) => `#${name}`).join(', ')}` : ''].join(' '),
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeNames: Object.fromEntries(fields.map(([name]) => [`#${name}`, name])),
      ExpressionAttributeValues: Object.fromEntries(set.map(([name, value]) => [`:${name}`, value])),
    })));
  }

  deleteStream(ref: StreamRef, generation: string): Promise<boolean> {
    return ifConditionHolds(() => this.client.send(new DeleteCommand({
      TableName: this.table,
      Key: streamKey(ref),
      ConditionExpression: 'generation = :g',
      ExpressionAttributeValues: { ':g': generation },
    })));
  }

  swapGeneration(ref: StreamRef, expected: string, next: string): Promise<boolean> {
    // Everything reserved so far belongs to the old generation: committed or not, it is purged.
    return ifConditionHolds(() => this.client.send(new UpdateCommand({
      TableName: this.table,
      Key: streamKey(ref),
      UpdateExpression: 'SET generation = :next, first_seq = reserved + :one, last_seq = reserved, swept_seq = reserved, last_bytes = reserved_bytes, dropped_bytes = reserved_bytes',
      ConditionExpression: 'generation = :expected',
      ExpressionAttributeValues: { ':next': next, ':expected': expected, ':one': 1 },
    })));
  }

  async reserve(ref: StreamRef, request: { generation: string; count: number; bytes: number; now: number; expect?: StreamHead }): Promise<Reservation> {
    const values: Record<string, unknown> = { ':g': request.generation, ':n': request.count, ':b': request.bytes, ':now': request.now };
    let condition = 'generation = :g';
    if (request.expect) {
      condition += ' AND reserved = :r AND first_seq = :f AND dropped_bytes = :d';
      Object.assign(values, { ':r': request.expect.reserved, ':f': request.expect.firstSeq, ':d': request.expect.droppedBytes });
    }
    try {
      const { Attributes } = await this.client.send(new UpdateCommand({
        TableName: this.table,
        Key: streamKey(ref),
        UpdateExpression: 'SET reserved_at = :now ADD reserved :n, reserved_bytes :b',
        ConditionExpression: condition,
        ExpressionAttributeValues: values,
        ReturnValues: 'ALL_NEW',
      }));
      return { head: toHead(Attributes!), at: request.now };
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      // dynalite does not return the item with the failure (ReturnValuesOnConditionCheckFailure): read it.
      const stream = await this.getStream(ref);
      return stream?.head.generation === request.generation ? 'conflict' : 'moved';
    }
  }

  async putMessages(at: MessagesRef, messages: StoredMessage[], dedup: DedupRecord[]): Promise<void> {
    const pk = messagesPk(at);
    const items: Record<string, unknown>[] = [
      ...packMessages(messages).map((item) => ({ pk, ...item })),
      ...dedup.map((d) => this.dedupItem(pk, d)),
    ];
    await Promise.all(chunks(items, BATCH_WRITE_ITEMS).map((batch) => this.batchWrite(batch.map((Item) => ({ PutRequest: { Item } })))));
  }

  skipSequence(at: MessagesRef, seq: number, now: number): Promise<boolean> {
    return ifConditionHolds(() => this.client.send(new PutCommand({
      TableName: this.table,
      Item: { pk: messagesPk(at), sk: seqKey(seq), ts: now, size: 0, skipped: true },
      ConditionExpression: 'attribute_not_exists(sk)',
    })));
  }

  async marks(at: MessagesRef, range: { fromSeq: number; toSeq: number; limit: number }): Promise<MessageMark[]> {
    return (await this.messagesIn(at, range)).map(({ seq, ts, size, skipped }) => ({ seq, ts, size, skipped: skipped === true }));
  }

  readMessages(at: MessagesRef, range: { fromSeq: number; toSeq: number; limit: number; maxBytes?: number }) {
    return this.messagesIn(at, range);
  }

  /**
   * The messages from `fromSeq` to `toSeq`, at most `limit`, complete up to the last one returned:
   * queries go on past DynamoDB's 1 MB page, because a commit step takes a sequence missing from
   * what it reads for a hole. An item is keyed by its last sequence, so the one holding `fromSeq`
   * is the first at or after it, and none holding `toSeq` is keyed past `toSeq + MAX_PACKED_SEQS - 1`.
   * Given `maxBytes`, it stops once the messages read hold that many bytes, and returns those up to
   * the first that passes them (its caller decides whether that one fits).
   */
  private async messagesIn(at: MessagesRef, range: { fromSeq: number; toSeq: number; limit: number; maxBytes?: number }) {
    if (range.toSeq < range.fromSeq || range.limit <= 0) return [];
    const items: PackedItem[] = [];
    let start: Record<string, unknown> | undefined;
    let held = 0;
    let bytes = 0;
    // Items read at a time when a byte bound is given: a packed item holds at most 32 KB, a lone message ~260 KB.
    const limit = range.maxBytes === undefined ? range.limit : Math.min(range.limit, BYTE_BOUNDED_QUERY_ITEMS);
    do {
      const result = await this.client.send(new QueryCommand({
        TableName: this.table,
        KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
        ExpressionAttributeValues: { ':pk': messagesPk(at), ':from': seqKey(range.fromSeq), ':to': seqKey(range.toSeq + MAX_PACKED_SEQS - 1) },
        // Each item holds at least one message of the range, so this many items hold enough.
        Limit: limit,
        ExclusiveStartKey: start,
        ConsistentRead: true,
      }));
      for (const item of (result.Items ?? []) as PackedItem[]) {
        items.push(item);
        held += Math.min(range.toSeq, Number(item.sk)) - Math.max(range.fromSeq, (item.first as number | undefined) ?? Number(item.sk)) + 1;
        bytes += (item.sizes ?? []).reduce((sum, size) => sum + size, 0);
      }
      start = result.LastEvaluatedKey;
    } while (start && held < range.limit && (range.maxBytes === undefined || bytes <= range.maxBytes));
    return unpackItems(items).filter((m) => m.seq >= range.fromSeq && m.seq <= range.toSeq).slice(0, range.limit);
  }

  /** Runs of nearby sequences are read with one query each (a packed item holds up to 100 of them). */
  async getMessages(at: MessagesRef, seqs: number[]) {
    const sorted = [...new Set(seqs)].sort((a, b) => a - b);
    const runs: { fromSeq: number; toSeq: number }[] = [];
    for (const seq of sorted) {
      const run = runs.at(-1);
      if (run && seq - run.toSeq < MAX_PACKED_SEQS) run.toSeq = seq;
      else runs.push({ fromSeq: seq, toSeq: seq });
    }
    const wanted = new Set(sorted);
    const found = await Promise.all(runs.map((run) => this.messagesIn(at, { ...run, limit: run.toSeq - run.fromSeq + 1 })));
    return found.flat().filter((m) => wanted.has(m.seq));
  }

  async commit(ref: StreamRef, request: { generation: string; fromSeq: number; toSeq: number; addBytes: number; lastTs: number | null }): Promise<StreamHead | undefined> {
    try {
      const { Attributes } = await this.client.send(new UpdateCommand({
        TableName: this.table,
        Key: streamKey(ref),
        UpdateExpression: `SET last_seq = :to, last_bytes = last_bytes + :bytes${request.lastTs === null ? '' : ', last_ts = :ts'}`,
        ConditionExpression: 'generation = :g AND last_seq = :from',
        ExpressionAttributeValues: {
          ':to': request.toSeq, ':bytes': request.addBytes, ':g': request.generation, ':from': request.fromSeq,
          ...(request.lastTs !== null && { ':ts': request.lastTs }),
        },
        ReturnValues: 'ALL_NEW',
      }));
      return toHead(Attributes!);
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return undefined;
      throw error;
    }
  }

  trim(ref: StreamRef, request: { generation: string; fromSeq: number; firstSeq: number; droppedBytes: number }): Promise<boolean> {
    return ifConditionHolds(() => this.client.send(new UpdateCommand({
      TableName: this.table,
      Key: streamKey(ref),
      UpdateExpression: 'SET first_seq = :first, dropped_bytes = :dropped',
      ConditionExpression: 'generation = :g AND first_seq = :from',
      ExpressionAttributeValues: { ':first': request.firstSeq, ':dropped': request.droppedBytes, ':g': request.generation, ':from': request.fromSeq },
    })));
  }

  async sweep(ref: StreamRef, at: MessagesRef, range: { fromSeq: number; toSeq: number }): Promise<void> {
    const pk = messagesPk(at);
    // Items wholly below `toSeq + 1`; one that straddles it holds messages still kept and waits for a later sweep.
    const keys: string[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const result = await this.client.send(new QueryCommand({
        TableName: this.table,
        KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
        ExpressionAttributeValues: { ':pk': pk, ':from': seqKey(range.fromSeq), ':to': seqKey(range.toSeq) },
        ProjectionExpression: 'sk',
        ExclusiveStartKey: start,
        ConsistentRead: true,
      }));
      keys.push(...(result.Items ?? []).map((item) => item.sk as string));
      start = result.LastEvaluatedKey;
    } while (start);
    await Promise.all(chunks(keys, BATCH_WRITE_ITEMS).map((batch) => this.batchWrite(batch.map((sk) => ({ DeleteRequest: { Key: { pk, sk } } })))));
    await ifConditionHolds(() => this.client.send(new UpdateCommand({
      TableName: this.table,
      Key: streamKey(ref),
      UpdateExpression: 'SET swept_seq = :to',
      ConditionExpression: 'generation = :g AND swept_seq < :to',
      ExpressionAttributeValues: { ':to': range.toSeq, ':g': at.generation },
    })));
  }

  private dedupItem(pk: string, record: DedupRecord) {
    return { pk, sk: `ID#${record.msgId}`, seq: record.seq ?? undefined, at: record.at, token: record.token, expires_at: Math.ceil(record.at / 1000) + DEDUP_TTL_MARGIN_SECONDS + 86_400 };
  }

  async claimMsgId(at: MessagesRef, claim: DedupRecord, stale: { windowBefore: number; claimBefore: number }) {
    const pk = messagesPk(at);
    try {
      await this.client.send(new PutCommand({
        TableName: this.table,
        Item: this.dedupItem(pk, claim),
        // A record outside the window, or a claim whose publisher is gone, is taken over.
        ConditionExpression: 'attribute_not_exists(sk) OR (attribute_exists(seq) AND #at < :window) OR (attribute_not_exists(seq) AND #at < :lease)',
        ExpressionAttributeNames: { '#at': 'at' },
        ExpressionAttributeValues: { ':window': stale.windowBefore, ':lease': stale.claimBefore },
      }));
      return { claimed: true as const };
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      // Undefined when released between the two calls: the caller tries again.
      return { claimed: false as const, record: await this.getMsgId(at, claim.msgId) };
    }
  }

  async releaseMsgId(at: MessagesRef, msgId: string, token: string): Promise<void> {
    await ifConditionHolds(() => this.client.send(new DeleteCommand({
      TableName: this.table,
      Key: { pk: messagesPk(at), sk: `ID#${msgId}` },
      ConditionExpression: '#token = :token',
      ExpressionAttributeNames: { '#token': 'token' },
      ExpressionAttributeValues: { ':token': token },
    })));
  }

  async getMsgId(at: MessagesRef, msgId: string): Promise<DedupRecord | undefined> {
    const { Item } = await this.client.send(new GetCommand({ TableName: this.table, Key: { pk: messagesPk(at), sk: `ID#${msgId}` }, ConsistentRead: true }));
    return Item && { msgId, seq: (Item.seq as number | undefined) ?? null, at: Item.at as number, token: Item.token as string };
  }

  createConsumer(stream: Stream, consumer: Consumer): Promise<boolean> {
    const { config } = consumer;
    return ifConditionHolds(() => this.client.send(new PutCommand({
      TableName: this.table,
      Item: {
        pk: consumersPk({ stream, consumerGeneration: stream.consumerGeneration, name: consumer.name }),
        sk: `C#${consumer.name}`,
        id: consumer.id,
        created_at: consumer.createdAt,
        delivered_seq: consumer.deliveredSeq,
        num_redelivered: 0,
        deliver_policy: config.deliverPolicy,
        opt_start_seq: config.optStartSeq ?? undefined,
        opt_start_time: config.optStartTime ?? undefined,
        ack_wait_seconds: config.ackWaitSeconds,
        max_deliver: config.maxDeliver ?? undefined,
        backoff_seconds: config.backoffSeconds.length > 0 ? config.backoffSeconds : undefined,
        max_ack_pending: config.maxAckPending,
      },
      ConditionExpression: 'attribute_not_exists(pk)',
    })));
  }

  async getConsumer(ref: ConsumerRef): Promise<Consumer | undefined> {
    const { Item } = await this.client.send(new GetCommand({ TableName: this.table, Key: { pk: consumersPk(ref), sk: `C#${ref.name}` }, ConsistentRead: true }));
    return Item && toConsumer(Item);
  }

  async deleteConsumer(ref: ConsumerRef): Promise<Consumer | undefined> {
    const { Attributes } = await this.client.send(new DeleteCommand({ TableName: this.table, Key: { pk: consumersPk(ref), sk: `C#${ref.name}` }, ReturnValues: 'ALL_OLD' }));
    return Attributes && toConsumer(Attributes);
  }

  async countConsumers(stream: Stream): Promise<number> {
    const result = await this.client.send(new QueryCommand({
      TableName: this.table,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :c)',
      ExpressionAttributeValues: { ':pk': consumersPk({ stream, consumerGeneration: stream.consumerGeneration, name: '' }), ':c': 'C#' },
      Select: 'COUNT',
      ConsistentRead: true,
    }));
    return result.Count ?? 0;
  }

  async listConsumers(stream: Stream, page: { limit: number; cursor?: string }) {
    const pk = consumersPk({ stream, consumerGeneration: stream.consumerGeneration, name: '' });
    const result = await this.client.send(new QueryCommand({
      TableName: this.table,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :c)',
      ExpressionAttributeValues: { ':pk': pk, ':c': 'C#' },
      Limit: page.limit,
      ExclusiveStartKey: decodeCursor(page.cursor, pk, 'C#'),
      ConsistentRead: true,
    }));
    return { consumers: (result.Items ?? []).map(toConsumer), nextCursor: encodeCursor(result.LastEvaluatedKey) };
  }

  async advanceDelivered(ref: ConsumerRef, to: number): Promise<void> {
    await ifConditionHolds(() => this.client.send(new UpdateCommand({
      TableName: this.table,
      Key: { pk: consumersPk(ref), sk: `C#${ref.name}` },
      UpdateExpression: 'SET delivered_seq = :to',
      ConditionExpression: 'delivered_seq < :to',
      ExpressionAttributeValues: { ':to': to },
    })));
  }

  async countRedelivered(ref: ConsumerRef, count: number): Promise<void> {
    await ifConditionHolds(() => this.client.send(new UpdateCommand({
      TableName: this.table,
      Key: { pk: consumersPk(ref), sk: `C#${ref.name}` },
      UpdateExpression: 'ADD num_redelivered :n',
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeValues: { ':n': count },
    })));
  }

  async listPending(ref: ConsumerRef, id: string, limit: number): Promise<Pending[]> {
    const pending: Pending[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const result = await this.client.send(new QueryCommand({
        TableName: this.table,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
        ExpressionAttributeValues: { ':pk': consumersPk(ref), ':p': `P#${id}#` },
        Limit: limit - pending.length,
        ExclusiveStartKey: start,
        ConsistentRead: true,
      }));
      pending.push(...(result.Items ?? []).map((item) => ({ seq: seqOfKey(item.sk as string), deliveries: item.deliveries as number, deliverAt: item.deliver_at as number })));
      start = result.LastEvaluatedKey;
    } while (start && pending.length < limit);
    return pending;
  }

  claimNew(ref: ConsumerRef, id: string, pending: Pending): Promise<boolean> {
    return ifConditionHolds(() => this.client.send(new PutCommand({
      TableName: this.table,
      Item: { pk: consumersPk(ref), sk: pendingKey(id, pending.seq), deliveries: pending.deliveries, deliver_at: pending.deliverAt },
      ConditionExpression: 'attribute_not_exists(sk)',
    })));
  }

  claimDue(ref: ConsumerRef, id: string, pending: Pending, expectDeliverAt: number): Promise<boolean> {
    return ifConditionHolds(() => this.client.send(new UpdateCommand({
      TableName: this.table,
      Key: { pk: consumersPk(ref), sk: pendingKey(id, pending.seq) },
      UpdateExpression: 'SET deliveries = :d, deliver_at = :at',
      ConditionExpression: 'deliver_at = :expect',
      ExpressionAttributeValues: { ':d': pending.deliveries, ':at': pending.deliverAt, ':expect': expectDeliverAt },
    })));
  }

  async ack(ref: ConsumerRef, id: string, seqs: number[]): Promise<number[]> {
    const pk = consumersPk(ref);
    const pending = await this.pendingAmong(ref, id, seqs);
    // Deleted one by one with ALL_OLD: a concurrent ack of the same sequence answers it only once.
    const acked = await Promise.all(pending.map(async (seq) => {
      const { Attributes } = await this.client.send(new DeleteCommand({ TableName: this.table, Key: { pk, sk: pendingKey(id, seq) }, ReturnValues: 'ALL_OLD' }));
      return Attributes ? seq : undefined;
    }));
    return acked.filter((seq): seq is number => seq !== undefined);
  }

  /**
   * Which of `seqs` are pending, read before anything is written. Sequences within
   * {@link PENDING_RUN_GAP} of each other are read with one query over their span (a pending item is
   * about 100 bytes, so a span costs about a read unit per 40 sequences); the lone ones with
   * BatchGetItem, 100 keys a call (a read unit each, found or not). So at most about one read
   * unit a sequence, and far less for runs.
   */
  private async pendingAmong(ref: ConsumerRef, id: string, seqs: number[]): Promise<number[]> {
    const pk = consumersPk(ref);
    const sorted = [...new Set(seqs)].sort((a, b) => a - b);
    const runs: { from: number; to: number; count: number }[] = [];
    for (const seq of sorted) {
      const run = runs.at(-1);
      if (run && seq - run.to <= PENDING_RUN_GAP) {
        run.to = seq;
        run.count++;
      } else runs.push({ from: seq, to: seq, count: 1 });
    }
    const wanted = new Set(sorted);
    const found: number[] = [];
    const lone = runs.filter((run) => run.count === 1).map((run) => run.from);
    for (const run of runs.filter((r) => r.count > 1)) {
      let start: Record<string, unknown> | undefined;
      do {
        const result = await this.client.send(new QueryCommand({
          TableName: this.table,
          KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
          ExpressionAttributeValues: { ':pk': pk, ':from': pendingKey(id, run.from), ':to': pendingKey(id, run.to) },
          ProjectionExpression: 'sk',
          ExclusiveStartKey: start,
          ConsistentRead: true,
        }));
        found.push(...(result.Items ?? []).map((item) => seqOfKey(item.sk as string)).filter((seq) => wanted.has(seq)));
        start = result.LastEvaluatedKey;
      } while (start);
    }
    for (const keys of chunks(lone, BATCH_GET_KEYS)) {
      let request: Record<string, unknown>[] = keys.map((seq) => ({ pk, sk: pendingKey(id, seq) }));
      for (let attempt = 0; request.length > 0; attempt++) {
        if (attempt >= UNPROCESSED_MAX_ATTEMPTS) throw new Error(`${request.length} reads left unprocessed after ${UNPROCESSED_MAX_ATTEMPTS} attempts`);
        if (attempt > 0) await sleep(Math.random() * Math.min(5_000, 50 * 2 ** attempt));
        const result = await this.client.send(new BatchGetCommand({ RequestItems: { [this.table]: { Keys: request, ProjectionExpression: 'sk', ConsistentRead: true } } }));
        found.push(...(result.Responses?.[this.table] ?? []).map((item) => seqOfKey(item.sk as string)));
        request = (result.UnprocessedKeys?.[this.table]?.Keys ?? []) as Record<string, unknown>[];
      }
    }
    return found.sort((a, b) => a - b);
  }

  async dropPending(ref: ConsumerRef, id: string, seqs: number[]): Promise<void> {
    const pk = consumersPk(ref);
    await Promise.all(chunks(seqs, BATCH_WRITE_ITEMS).map((batch) => this.batchWrite(batch.map((seq) => ({ DeleteRequest: { Key: { pk, sk: pendingKey(id, seq) } } })))));
  }

  async touchPending(ref: ConsumerRef): Promise<void> {
    await ifConditionHolds(() => this.client.send(new UpdateCommand({
      TableName: this.table,
      Key: { pk: consumersPk(ref), sk: `C#${ref.name}` },
      UpdateExpression: 'ADD pending_version :one',
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeValues: { ':one': 1 },
    })));
  }

  nak(ref: ConsumerRef, id: string, seq: number, deliverAt: number): Promise<boolean> {
    return ifConditionHolds(() => this.client.send(new UpdateCommand({
      TableName: this.table,
      Key: { pk: consumersPk(ref), sk: pendingKey(id, seq) },
      UpdateExpression: 'SET deliver_at = :at',
      ConditionExpression: 'attribute_exists(sk)',
      ExpressionAttributeValues: { ':at': deliverAt },
    })));
  }

  async markDead(ref: ConsumerRef, id: string, dead: DeadMessage, expectDeliverAt: number): Promise<void> {
    const pk = consumersPk(ref);
    // The dead record first: a crash between the two writes leaves it pending, to be marked again.
    await this.client.send(new PutCommand({ TableName: this.table, Item: { pk, sk: deadKey(id, dead.seq), deliveries: dead.deliveries, dead_at: dead.deadAt } }));
    await ifConditionHolds(() => this.client.send(new DeleteCommand({
      TableName: this.table,
      Key: { pk, sk: pendingKey(id, dead.seq) },
      ConditionExpression: 'deliver_at = :expect',
      ExpressionAttributeValues: { ':expect': expectDeliverAt },
    })));
  }

  async listDead(ref: ConsumerRef, id: string, page: { limit: number; cursor?: string }) {
    const pk = consumersPk(ref);
    const prefix = `D#${id}#`;
    const result = await this.client.send(new QueryCommand({
      TableName: this.table,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :d)',
      ExpressionAttributeValues: { ':pk': pk, ':d': prefix },
      Limit: page.limit,
      ExclusiveStartKey: decodeCursor(page.cursor, pk, prefix),
      ConsistentRead: true,
    }));
    return {
      dead: (result.Items ?? []).map((item) => ({ seq: seqOfKey(item.sk as string), deliveries: item.deliveries as number, deadAt: item.dead_at as number })),
      nextCursor: encodeCursor(result.LastEvaluatedKey),
    };
  }

  async isCurrent(task: SweepTask): Promise<boolean> {
    const stream = await this.getStream(task);
    return task.kind === 'stream_consumers' ? stream?.consumerGeneration === task.generation : stream?.head.generation === task.generation;
  }

  scanGeneration(task: SweepTask, page: { after?: string; limit: number }): Promise<{ keys: string[]; last?: string }> {
    return scanSortKeys(this.client, this.table, sweptPk(task), page);
  }

  async deleteFromGeneration(task: SweepTask, keys: string[]): Promise<void> {
    const pk = sweptPk(task);
    for (const batch of chunks(keys, BATCH_WRITE_ITEMS)) await this.batchWrite(batch.map((sk) => ({ DeleteRequest: { Key: { pk, sk } } })));
  }

  /** One BatchWriteItem, retrying what DynamoDB leaves unprocessed (throttling) with capped, jittered backoff. */
  private async batchWrite(requests: Record<string, unknown>[]): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      const { UnprocessedItems } = await this.client.send(new BatchWriteCommand({ RequestItems: { [this.table]: requests } }));
      requests = (UnprocessedItems?.[this.table] ?? []) as Record<string, unknown>[];
      if (requests.length === 0) return;
      if (attempt + 1 >= UNPROCESSED_MAX_ATTEMPTS) throw new Error(`${requests.length} writes left unprocessed after ${UNPROCESSED_MAX_ATTEMPTS} attempts`);
      await sleep(Math.random() * Math.min(5_000, 50 * 2 ** attempt));
    }
  }
}
