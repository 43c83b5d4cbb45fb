import { createHash } from 'node:crypto';
import {
  BatchGetCommand, DeleteCommand, GetCommand, PutCommand, QueryCommand, UpdateCommand, type DynamoDBDocumentClient,
} from '@aws-sdk/lib-dynamodb';
import { epochSeconds, type Clock } from '../../domain/clock.js';
import { receivedAtOf } from '../../domain/flows/execution-id.js';
import type {
  AttemptRecord, Execution, ExecutionChange, ExecutionStatus, ExecutionUpdate, RecordState, ReplacingUpdate, ForwardedAttempt, ExecutionDetail, ExecutionFilter, ExecutionPage, ExecutionRef, ExecutionStore, NewExecution, StoredRequest, BatchRequestLink, BatchPosition, RefusalOutcome,
} from '../../domain/flows/ports.js';
import { MESSAGE_RETENTION_DAYS } from '../../manifest.js';
import { AppError } from '../../shared/errors.js';
import { BatchedPuts } from './batched-puts.js';
import { ifConditionHolds } from './conditional.js';
import { packRequest, unpackRequest } from './request-packing.js';

/** The rare paths of `update` and `statusOf`, loaded on first use (`first-use/execution-refusals.ts`). */
let refusalsModule: Promise<typeof import('./first-use/execution-refusals.js')> | undefined;
const refusals = () => (refusalsModule ??= import('./first-use/execution-refusals.js'));

/** Execution records, and the requests stored with them, expire after seven days (DynamoDB TTL). */
export const EXECUTION_TTL_SECONDS = 7 * 24 * 3600;
/** Stored-aside payloads outlive the dead-letter queue's retention by a day, so a redrive finds them. */
const PAYLOAD_TTL_SECONDS = (MESSAGE_RETENTION_DAYS + 1) * 24 * 3600;
/** Bytes per stored-aside chunk: well under DynamoDB's 400 KB item limit, whatever the characters. */
const PAYLOAD_CHUNK_BYTES = 300_000;
/** A request body up to this size is kept in the request item itself; a larger one in chunks beside it. */
const INLINE_BODY_BYTES = 300_000;
/**
 * A flow output up to this size is kept in the status record; a larger one in an item of its own,
 * written once, so the record an update bills stays under 1 KB (one write unit) whatever the flow
 * returns. Step Functions caps an output at 256 KiB, which one item holds.
 */
const INLINE_OUTPUT_BYTES = 400;

/**
 * One trigger's records are spread over this many partitions (`TRIGGER#<id>#<shard>`), so that no
 * single partition carries a busy trigger's whole write load: DynamoDB gives a partition 1,000
 * write units a second and cannot split one whose writes all land at the end of a time-ordered
 * range. A listing queries every shard and merges them newest first (see `list`).
 */
export const EXECUTION_SHARDS = 8;
/** At most this many rounds of shard queries make one page (a filter that matches little leaves a page short, with a cursor). */
const MAX_ROUNDS_PER_PAGE = 4;
const MAX_SORT_KEY_BYTES = 1024;
/** Listeners' answers a record keeps (`addForwarded`). */
export const MAX_FORWARDED = 20;

/** FNV-1a of the id: its random part decides the shard, evenly. */
export function shardOf(executionId: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < executionId.length; i++) hash = Math.imul(hash ^ executionId.charCodeAt(i), 0x01000193) >>> 0;
  return hash % EXECUTION_SHARDS;
}

const SK_PREFIX = 'EXEC#';
const statusPk = (triggerId: string, shard: number) => `TRIGGER#${triggerId}#${shard}`;
const statusKey = (ref: ExecutionRef) => ({ pk: statusPk(ref.triggerId, shardOf(ref.executionId)), sk: `${SK_PREFIX}${receivedAtOf(ref.executionId)}#${ref.executionId}` });
/** Event ids are the sender's and may be long: the key holds a digest. */
const eventDigest = (eventId: string) => createHash('sha256').update(eventId, 'utf8').digest('base64url').slice(0, 22);
const requestPk = (triggerId: string, eventId: string) => `REQUEST#${triggerId}#${eventDigest(eventId)}`;
const requestKey = (ref: ExecutionRef, eventId: string) => ({ pk: requestPk(ref.triggerId, eventId), sk: `${receivedAtOf(ref.executionId)}#${ref.executionId}` });
const dedupKey = (triggerId: string, eventId: string) => ({ pk: `DEDUP#${triggerId}#${eventId}`, sk: 'DEDUP' });
const chunkKey = (id: string, index: number) => ({ pk: `PAYLOAD#${id}`, sk: String(index).padStart(4, '0') });
const outputKey = (executionId: string, attempt: number) => ({ pk: `OUTPUT#${executionId}`, sk: String(attempt) });
/**
 * A trigger's delivery counts of one minute on one shard (`dynamo-delivery-stats.ts` reads them):
 * `STATS#<trigger>#<shard>` / `2026-05-01T12:34`, expiring 7 days after the minute.
 */
export const statsMinuteKey = (triggerId: string, shard: number, minute: number) => ({ pk: `STATS#${triggerId}#${shard}`, sk: new Date(minute * 60_000).toISOString().slice(0, 16) });
export const statsMinuteExpiry = (minute: number) => epochSeconds((minute + 1) * 60_000) + EXECUTION_TTL_SECONDS;

/** Flow output is kept as JSON text: DynamoDB maps stop at 32 levels, flow outputs do not. */
function toExecution(item: Record<string, unknown>): Execution {
  const timeline = Object.values((item.timeline ?? {}) as Record<string, AttemptRecord>).sort((a, b) => a.attempt - b.attempt);
  return {
    execution_id: item.execution_id as string,
    event_id: item.event_id as string,
    received_at: item.received_at as string,
    ...(item.type !== undefined && { type: item.type as string }),
    status: item.status as Execution['status'],
    ...(item.output_json !== undefined && { output: JSON.parse(item.output_json as string) }),
    ...(item.error !== undefined && { error: item.error as string }),
    attempts: item.attempts as number,
    ...(item.next_attempt_at !== undefined && { next_attempt_at: item.next_attempt_at as string }),
    timeline,
    ...(item.replay_of !== undefined && { replay_of: item.replay_of as string }),
    ...(item.unverified === true && { unverified: true as const }),
    ...(item.flow !== undefined && { flow: item.flow as string }),
    ...(item.reply !== undefined && { reply: item.reply as Execution['reply'] }),
    ...(item.batch !== undefined && { batch: item.batch as BatchPosition }),
    ...(Array.isArray(item.forwarded) && { forwarded: item.forwarded as ForwardedAttempt[] }),
  };
}

/**
 * The greatest key below `key`, for an exclusive upper bound in a `BETWEEN` (DynamoDB has no
 * `<` with a lower bound): the last character one lower, then `~`, which sorts above every
 * character a key here holds (ISO times, `#`, and ids of `[0-9A-Za-z_-]`).
 */
const below = (key: string) => `${key.slice(0, -1)}${String.fromCharCode(key.charCodeAt(key.length - 1) - 1)}~`;

/** Opaque list cursors: the bound the next page starts below. `s`: the shard listing's; `e`: the event-id listing's. */
type Cursor = { s: string } | { e: string };
const encode = (cursor: Cursor | null) => (cursor ? Buffer.from(JSON.stringify(cursor), 'utf8').toString('base64url') : null);
function decode(cursor: string | undefined, kind: 's' | 'e'): string | undefined {
  if (cursor === undefined) return undefined;
  try {
    if (cursor.length > 4096) throw new Error('too long');
    const bound = (JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as Record<string, unknown>)[kind];
    if (typeof bound !== 'string' || Buffer.byteLength(bound) > MAX_SORT_KEY_BYTES || (kind === 's' && !bound.startsWith(SK_PREFIX))) throw new Error('bad cursor');
    return bound;
  } catch {
    throw new AppError('validation_error', undefined, undefined, 'cursor is not valid (or was made with other filters)');
  }
}

/** The status and type filters, as a DynamoDB filter expression (with the expiry check: TTL deletion is lazy). */
function filterExpression(filter: ExecutionFilter, nowSeconds: number) {
  const conditions = ['expires_at > :now'];
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = { ':now': nowSeconds };
  if (filter.statuses?.length) {
    names['#status'] = 'status';
    conditions.push(`#status IN (${filter.statuses.map((status, i) => {
      values[`:status${i}`] = status;
      return `:status${i}`;
    }).join(', ')})`);
  }
  if (filter.type !== undefined) {
    names['#type'] = 'type';
    const prefix = filter.type.endsWith('*');
    values[':type'] = prefix ? filter.type.slice(0, -1) : filter.type;
    conditions.push(prefix ? 'begins_with(#type, :type)' : '#type = :type');
  }
  return { expression: conditions.join(' AND '), names, values };
}

/** The same filters, checked on an item read by key. */
function matches(item: Record<string, unknown>, filter: ExecutionFilter, nowSeconds: number): boolean {
  if (!((item.expires_at as number) > nowSeconds)) return false;
  if (filter.eventId !== undefined && item.event_id !== filter.eventId) return false;
  if (filter.statuses?.length && !filter.statuses.includes(item.status as Execution['status'])) return false;
  if (filter.type !== undefined) {
    const type = item.type as string | undefined;
    if (type === undefined) return false;
    if (filter.type.endsWith('*') ? !type.startsWith(filter.type.slice(0, -1)) : type !== filter.type) return false;
  }
  return true;
}

/**
 * Layout, one table (`pk`, `sk`, TTL `expires_at`):
 *
 *   TRIGGER#<trigger>#<shard>  EXEC#<received_at>#<execution_id>   the status record: small, updated per run
 *   REQUEST#<trigger>#<digest of event_id>  <received_at>#<execution_id>   the request: written once, never updated
 *   OUTPUT#<execution_id>  <attempt>   a flow output over 400 bytes: written once, by the run that made it
 *   PAYLOAD#<id>  0000, 0001, …   bodies and flow inputs too large for one item
 *   DEDUP#<trigger>#<event_id>  DEDUP   a deduplicating trigger's claim on an event id (a claim on
 *     exact signed content with its timestamp has none: its status record, keyed on both, is the claim)
 *   REFUSALS#<trigger>#<epoch minute>  COUNT   refused deliveries counted that minute
 *
 * A status update is billed on the status record's size only (about 1 KB), never on the body's.
 * The request partition is keyed by event id, so every delivery, duplicate and replay of one
 * event lists from one Query: that is how the `event_id` filter is answered.
 */
/** The status and attempts an update's `ReturnValues` read back (a record without `attempts` has made none). */
export const recordState = (attributes: Record<string, unknown> | undefined): RecordState => ({
  status: attributes?.status as ExecutionStatus,
  attempts: typeof attributes?.attempts === 'number' ? attributes.attempts : 0,
});

export class DynamoExecutionStore implements ExecutionStore {
  /** The records, requests and outputs: unconditional puts, batched (`./batched-puts.ts`). */
  private readonly puts: BatchedPuts;

  constructor(private readonly client: DynamoDBDocumentClient, private readonly table: string, private readonly now: Clock) {
    this.puts = new BatchedPuts(client, table);
  }

  private nowSeconds(): number {
    return epochSeconds(this.now());
  }

  async record(ref: ExecutionRef, execution: NewExecution, request?: StoredRequest | BatchRequestLink): Promise<void> {
    const { timeline = [], ...rest } = execution;
    const expiresAt = this.nowSeconds() + EXECUTION_TTL_SECONDS;
    const status = {
      ...statusKey(ref), ...rest, execution_id: ref.executionId, timeline: Object.fromEntries(timeline.map((entry) => [String(entry.attempt), entry])), expires_at: expiresAt,
    };
    if (!request) return this.puts.put(status);
    const requestItem = 'batch_request' in request ? this.linkItem(ref, execution.event_id, request, expiresAt) : await this.requestItem(ref, execution.event_id, request, expiresAt);
    // Both in one BatchWriteItem (with other deliveries' when several are in flight).
    await this.puts.put(status, requestItem);
  }

  /**
   * The record as a claim: one conditional put of the status record, then its request. A live
   * record under `ref` (a replay's: its ref is made from the signed content) leaves both untouched,
   * so a replay can neither run nor write over the request it replays. Discarding the record gives
   * the claim back. Crash between the two writes: a queued record without its request, never
   * acknowledged, which recovery discards (`local/recovery.ts`).
   */
  async recordFirst(ref: ExecutionRef, execution: NewExecution, request: StoredRequest): Promise<boolean> {
    const { timeline = [], ...rest } = execution;
    const now = this.nowSeconds();
    const expiresAt = now + EXECUTION_TTL_SECONDS;
    const status = {
      ...statusKey(ref), ...rest, execution_id: ref.executionId, timeline: Object.fromEntries(timeline.map((entry) => [String(entry.attempt), entry])), expires_at: expiresAt,
    };
    const written = await ifConditionHolds(() => this.client.send(new PutCommand({
      TableName: this.table,
      Item: status,
      // TTL deletion is lazy: an expired record counts as none.
      ConditionExpression: 'attribute_not_exists(pk) OR expires_at <= :now',
      ExpressionAttributeValues: { ':now': now },
    })));
    if (written) await this.puts.put(await this.requestItem(ref, execution.event_id, request, expiresAt));
    return written;
  }

  async storeRequest(ref: ExecutionRef, request: StoredRequest): Promise<void> {
    await this.puts.put(await this.requestItem(ref, ref.executionId, request, this.nowSeconds() + EXECUTION_TTL_SECONDS));
  }

  /**
   * An element's item in its event id's request partition: no request, only the link to its
   * batch's, stored once. It keeps the `event_id` filter one Query, and costs one write unit
   * whatever the POST's size.
   */
  private linkItem(ref: ExecutionRef, eventId: string, link: BatchRequestLink, expiresAt: number): Record<string, unknown> {
    return { ...requestKey(ref, eventId), execution_id: ref.executionId, batch_request: link.batch_request, expires_at: expiresAt };
  }

  /**
   * The request item: the whole request packed into one attribute (`request-packing.ts`), so a
   * 1 KB webhook costs one write unit, not two; a body too large for an item goes in chunks beside
   * it (written first), the rest as JSON.
   */
  private async requestItem(ref: ExecutionRef, eventId: string, request: StoredRequest, expiresAt: number): Promise<Record<string, unknown>> {
    const { body, ...head } = request;
    const inline = body === undefined || Buffer.byteLength(body) <= INLINE_BODY_BYTES;
    const chunks = inline ? undefined : await this.storeChunks(`request-${ref.executionId}`, body!, expiresAt);
    return {
      ...requestKey(ref, eventId),
      execution_id: ref.executionId,
      ...(inline ? { request_packed: packRequest(request) } : { request_json: JSON.stringify(head), body_chunks: chunks }),
      expires_at: expiresAt,
    };
  }

  async discard(ref: ExecutionRef, eventId: string): Promise<void> {
    const [, { Attributes: request }] = await Promise.all([
      this.client.send(new DeleteCommand({ TableName: this.table, Key: statusKey(ref) })),
      this.client.send(new DeleteCommand({ TableName: this.table, Key: requestKey(ref, eventId), ReturnValues: 'ALL_OLD' })),
    ]);
    // A body stored in chunks goes with its request.
    const chunks = request?.body_chunks as { id: string; chunks: number } | undefined;
    if (chunks) {
      await Promise.all(Array.from({ length: chunks.chunks }, (_, i) => this.client.send(new DeleteCommand({ TableName: this.table, Key: chunkKey(chunks.id, i) }))));
    }
  }

  /** `updateReplacing`'s result. */
  async update(ref: ExecutionRef, change: ExecutionChange): Promise<ExecutionUpdate> {
    return (await this.updateReplacing(ref, change)).result;
  }

  /**
   * One conditional write on the normal path: the change, if the record shows no later attempt and
   * is not `succeeded`. Copies of one event can run side by side (a direct invocation whose answer
   * was lost, and its queued fallback; a message redelivered while its run went on), so the write
   * can be refused for a reason that must not drop it:
   *
   *   copy A  attempt 1 ── running ─────────────────────────── succeeded ──▶ written (success is final:
   *   copy B        attempt 2 ── failed: queued ── attempt 3 …                keeps attempts 2)
   *                                                  └─ refused ▶ `succeeded_already`: B stops
   *
   * A refused success is written again without the attempts condition (a second write, on that
   * rare path only), leaving `attempts` at the higher number. Any other refused change reads the
   * record (strongly consistent) to answer why, and adds its own attempt's timeline entry where the
   * timeline has none under that number or only its start, so a copy's run does not stay `running`
   * for ever; a finished entry is never replaced. Those rare paths are `first-use/execution-refusals.ts`,
   * loaded the first time one is taken. A written change also answers the status and attempts it
   * replaced (`ReturnValues`, free of capacity), what the delivery counts move from.
   */
  async updateReplacing(ref: ExecutionRef, change: ExecutionChange): Promise<ReplacingUpdate> {
    const names: Record<string, string> = { '#status': 'status', '#error': 'error' };
    const values: Record<string, unknown> = { ':status': change.status, ':succeeded': 'succeeded' };
    const sets = ['#status = :status'];
    const removes: string[] = [];
    const setOrRemove = (attribute: string, value: unknown) => {
      if (value === undefined) {
        removes.push(attribute);
        return;
      }
      const placeholder = `:${attribute.replace('#', '')}`;
      sets.push(`${attribute} = ${placeholder}`);
      values[placeholder] = value;
    };
    const outputJson = change.output === undefined ? undefined : JSON.stringify(change.output);
    const asideAttempt = outputJson !== undefined && Buffer.byteLength(outputJson) > INLINE_OUTPUT_BYTES ? change.attempts : undefined;
    if (asideAttempt !== undefined) {
      await this.puts.put({ ...outputKey(ref.executionId, asideAttempt), output_json: outputJson, expires_at: this.nowSeconds() + EXECUTION_TTL_SECONDS });
    }
    setOrRemove('output_json', asideAttempt === undefined ? outputJson : undefined);
    setOrRemove('output_attempt', asideAttempt);
    setOrRemove('#error', change.error);
    setOrRemove('next_attempt_at', change.nextAttemptAt);
    setOrRemove('reply', change.reply);
    if (change.attempt) {
      names['#attempt'] = String(change.attempt.attempt);
      sets.push('timeline.#attempt = :attempt_entry');
      values[':attempt_entry'] = change.attempt;
    }
    const update = { TableName: this.table, Key: statusKey(ref), ExpressionAttributeNames: names, ExpressionAttributeValues: values };
    const removed = removes.length ? ` REMOVE ${removes.join(', ')}` : '';
    let replaced: RecordState | undefined;
    if (await ifConditionHolds(async () => {
      const { Attributes } = await this.client.send(new UpdateCommand({
        ...update,
        UpdateExpression: `SET ${sets.join(', ')}, attempts = :attempts${removed}`,
        // A late update of an earlier attempt must not overwrite a later attempt's outcome; nothing
        // overwrites a success (and a success at an earlier attempt is written on the rare path).
        ConditionExpression: 'attribute_exists(pk) AND attempts <= :attempts AND #status <> :succeeded',
        ExpressionAttributeValues: { ...values, ':attempts': change.attempts },
        ReturnValues: 'UPDATED_OLD',
      }));
      replaced = recordState(Attributes);
    })) return { result: 'written', replaced: replaced! };
    return (await refusals()).refusedUpdate(this.client, { ...update, UpdateExpression: `SET ${sets.join(', ')}${removed}` }, change);
  }

  async statusOf(ref: ExecutionRef): Promise<ExecutionStatus | undefined> {
    return (await refusals()).statusOf(this.client, this.table, statusKey(ref), this.nowSeconds());
  }

  /**
   * Appends a listener's answer to the record's `forwarded` list (`ForwardedAttempts`), at most
   * `MAX_FORWARDED` of them so the record stays small; no other field changes, so the flow's run is
   * untouched. False when there is no such record, or it has the most it keeps.
   */
  async addForwarded(ref: ExecutionRef, attempt: ForwardedAttempt): Promise<boolean> {
    return ifConditionHolds(() => this.client.send(new UpdateCommand({
      TableName: this.table,
      Key: statusKey(ref),
      UpdateExpression: 'SET forwarded = list_append(if_not_exists(forwarded, :none), :attempt)',
      ConditionExpression: 'attribute_exists(pk) AND (attribute_not_exists(forwarded) OR size(forwarded) < :max)',
      ExpressionAttributeValues: { ':none': [], ':attempt': [attempt], ':max': MAX_FORWARDED },
    })));
  }

  async get(ref: ExecutionRef): Promise<ExecutionDetail | undefined> {
    const { Item } = await this.client.send(new GetCommand({ TableName: this.table, Key: statusKey(ref) }));
    if (!Item || !((Item.expires_at as number) > this.nowSeconds())) return undefined;
    const [[execution], request] = await Promise.all([this.withOutputs([Item]), this.requestOf(ref, Item.event_id as string)]);
    return request ? { ...execution!, request } : execution!;
  }

  async requestOf(ref: ExecutionRef, eventId: string): Promise<StoredRequest | undefined> {
    const { Item: stored } = await this.client.send(new GetCommand({ TableName: this.table, Key: requestKey(ref, eventId) }));
    if (!stored || !((stored.expires_at as number) > this.nowSeconds())) return undefined;
    if (typeof stored.batch_request === 'string') {
      const batchRequest = stored.batch_request;
      return this.requestOf({ triggerId: ref.triggerId, executionId: batchRequest }, batchRequest);
    }
    if (stored.request_packed !== undefined) return unpackRequest(stored.request_packed as Uint8Array);
    // Items written before requests were packed, and those whose body is in chunks.
    const request = JSON.parse(stored.request_json as string) as StoredRequest;
    const body = stored.body_chunks ? await this.loadPayload(stored.body_chunks as { id: string; chunks: number }) : (stored.body as string | undefined);
    return { ...request, ...(body !== undefined && { body }) };
  }

  /** Records as executions, with the outputs kept aside read back (one BatchGetItem per 100). */
  private async withOutputs(items: Record<string, unknown>[]): Promise<Execution[]> {
    const aside = items.filter((item) => item.output_attempt !== undefined);
    const outputs = new Map<string, unknown>();
    if (aside.length) {
      for (const found of await this.batchGet(aside.map((item) => outputKey(item.execution_id as string, item.output_attempt as number)))) {
        outputs.set(`${found.pk as string}#${found.sk as string}`, found.output_json);
      }
    }
    return items.map((item) => {
      const key = item.output_attempt === undefined ? undefined : `${outputKey(item.execution_id as string, item.output_attempt as number).pk}#${item.output_attempt as number}`;
      return toExecution(key === undefined ? item : { ...item, output_json: outputs.get(key) });
    });
  }

  list(triggerId: string, filter: ExecutionFilter, page: { limit: number; cursor?: string }): Promise<ExecutionPage> {
    return filter.eventId === undefined ? this.listShards(triggerId, filter, page) : this.listEvent(triggerId, filter as ExecutionFilter & { eventId: string }, page);
  }

  /**
   * Every shard is queried for the page's time range, newest first, and the results merged. A
   * shard that stopped early (its `Limit`, or 1 MB) has unread records below where it stopped, so
   * the page only holds records above the highest such stop, and the next round or page goes on
   * from there:
   *
   *   shard 0  ●  ●     ●  ●  ·  ·      (stopped: unread below)
   *   shard 1     ●  ●           ●  ●   (read to the end of the range)
   *            ───────────────▲──────
   *            newest   page ends here (shard 0's stop); the cursor is this bound
   *
   * A page costs at most MAX_ROUNDS_PER_PAGE rounds of one Query per shard, each reading at most
   * `limit` records; a round re-queries only the shards that stopped early.
   */
  private async listShards(triggerId: string, filter: ExecutionFilter, page: { limit: number; cursor?: string }): Promise<ExecutionPage> {
    const nowSeconds = this.nowSeconds();
    const lo = `${SK_PREFIX}${filter.since ?? ''}`;
    // `until` is exclusive as it is: a record received at `until` sorts above `EXEC#<until>`.
    let hi = filter.until === undefined ? `${SK_PREFIX.slice(0, -1)}$` : `${SK_PREFIX}${filter.until}`;
    const cursor = decode(page.cursor, 's');
    if (cursor !== undefined && below(cursor) < hi) hi = below(cursor);
    const { expression, names, values } = filterExpression(filter, nowSeconds);
    const items: Record<string, unknown>[] = [];
    /** Matches of shards already read to the end of the range, below the last round's cut. */
    let held: Record<string, unknown>[] = [];
    let shards = Array.from({ length: EXECUTION_SHARDS }, (_, shard) => shard);
    for (let round = 0; round < MAX_ROUNDS_PER_PAGE && lo <= hi; round++) {
      const bound = hi;
      const results = await Promise.all(shards.map(async (shard) => {
        const result = await this.client.send(new QueryCommand({
          TableName: this.table,
          KeyConditionExpression: 'pk = :pk AND sk BETWEEN :lo AND :hi',
          FilterExpression: expression,
          ExpressionAttributeNames: Object.keys(names).length ? names : undefined,
          ExpressionAttributeValues: { ...values, ':pk': statusPk(triggerId, shard), ':lo': lo, ':hi': bound },
          ScanIndexForward: false,
          Limit: page.limit,
        }));
        return { shard, found: result.Items ?? [], stoppedAt: result.LastEvaluatedKey?.sk as string | undefined };
      }));
      const stopped = results.filter((result) => result.stoppedAt !== undefined);
      const cut = stopped.length ? stopped.map((result) => result.stoppedAt!).reduce((a, b) => (a > b ? a : b)) : undefined;
      const complete = [...held, ...results.filter((result) => result.stoppedAt === undefined).flatMap((result) => result.found)];
      const above = (item: Record<string, unknown>) => cut === undefined || (item.sk as string) >= cut;
      const eligible = [...complete.filter(above), ...stopped.flatMap((result) => result.found.filter(above))]
        .sort((a, b) => ((a.sk as string) < (b.sk as string) ? 1 : -1));
      held = complete.filter((item) => !above(item));
      const room = page.limit - items.length;
      if (eligible.length > room) {
        items.push(...eligible.slice(0, room));
        return { items: await this.withOutputs(items), nextCursor: encode({ s: items.at(-1)!.sk as string }) };
      }
      items.push(...eligible);
      if (cut === undefined) return { items: await this.withOutputs(items), nextCursor: null };
      hi = below(cut);
      shards = stopped.map((result) => result.shard);
      if (items.length === page.limit) break;
    }
    return { items: await this.withOutputs(items), nextCursor: lo <= hi ? encode({ s: hi }) : null };
  }

  /** One Query of the event's request partition, then the status records it names (BatchGetItem). */
  private async listEvent(triggerId: string, filter: ExecutionFilter & { eventId: string }, page: { limit: number; cursor?: string }): Promise<ExecutionPage> {
    const nowSeconds = this.nowSeconds();
    const lo = filter.since ?? '';
    let hi = filter.until ?? '~';
    const cursor = decode(page.cursor, 'e');
    if (cursor !== undefined && below(cursor) < hi) hi = below(cursor);
    if (!(lo <= hi)) return { items: [], nextCursor: null };
    const result = await this.client.send(new QueryCommand({
      TableName: this.table,
      KeyConditionExpression: 'pk = :pk AND sk BETWEEN :lo AND :hi',
      ExpressionAttributeValues: { ':pk': requestPk(triggerId, filter.eventId), ':lo': lo, ':hi': hi },
      ProjectionExpression: 'sk, execution_id',
      ScanIndexForward: false,
      Limit: page.limit,
    }));
    const found = result.Items ?? [];
    const records = await this.batchGet(found.map((item) => statusKey({ triggerId, executionId: item.execution_id as string })));
    const items = records.filter((item) => matches(item, filter, nowSeconds)).sort((a, b) => ((a.sk as string) < (b.sk as string) ? 1 : -1));
    return { items: await this.withOutputs(items), nextCursor: result.LastEvaluatedKey ? encode({ e: result.LastEvaluatedKey.sk as string }) : null };
  }

  private async batchGet(keys: Record<string, string>[]): Promise<Record<string, unknown>[]> {
    const items: Record<string, unknown>[] = [];
    for (let i = 0; i < keys.length; i += 100) {
      let pending: Record<string, unknown>[] | undefined = keys.slice(i, i + 100);
      for (let tries = 0; pending?.length; tries++) {
        if (tries > 0) await new Promise((resolve) => setTimeout(resolve, Math.min(1000, 50 * 2 ** tries)));
        const result: { Responses?: Record<string, Record<string, unknown>[]>; UnprocessedKeys?: Record<string, { Keys?: Record<string, unknown>[] }> } = await this.client.send(new BatchGetCommand({ RequestItems: { [this.table]: { Keys: pending } } }));
        items.push(...(result.Responses?.[this.table] ?? []));
        pending = result.UnprocessedKeys?.[this.table]?.Keys;
      }
    }
    return items;
  }

  /**
   * The budget is an attribute (`budget`) of the trigger's delivery counts of that minute, on the
   * shard its id picks, and the same conditional ADD counts the outcome: a recorded refusal writes
   * one counter item, not a budget item and a count. (Before, the budget was an item of its own,
   * `REFUSALS#<trigger>#<minute>`; those expired two minutes after theirs.)
   */
  countRefusal(triggerId: string, minute: number, max: number, outcome: RefusalOutcome = 'refused'): Promise<boolean> {
    return ifConditionHolds(() => this.client.send(new UpdateCommand({
      TableName: this.table,
      Key: statsMinuteKey(triggerId, shardOf(triggerId), minute),
      UpdateExpression: 'ADD budget :one, #outcome :one SET expires_at = :expires',
      ConditionExpression: 'attribute_not_exists(budget) OR budget < :max',
      ExpressionAttributeNames: { '#outcome': outcome },
      ExpressionAttributeValues: { ':one': 1, ':max': max, ':expires': statsMinuteExpiry(minute) },
    })));
  }

  async uncountRefusal(triggerId: string, minute: number, outcome: RefusalOutcome = 'refused'): Promise<void> {
    await this.client.send(new UpdateCommand({
      TableName: this.table,
      Key: statsMinuteKey(triggerId, shardOf(triggerId), minute),
      UpdateExpression: 'ADD budget :less, #outcome :less',
      ConditionExpression: 'attribute_exists(budget)',
      ExpressionAttributeNames: { '#outcome': outcome },
      ExpressionAttributeValues: { ':less': -1 },
    }));
  }

  claimEvent(triggerId: string, eventId: string, ttlSeconds: number): Promise<boolean> {
    const now = this.nowSeconds();
    return ifConditionHolds(() => this.client.send(new PutCommand({
      TableName: this.table,
      Item: { ...dedupKey(triggerId, eventId), expires_at: now + ttlSeconds },
      // TTL deletion is lazy: an expired claim counts as no claim.
      ConditionExpression: 'attribute_not_exists(pk) OR expires_at <= :now',
      ExpressionAttributeValues: { ':now': now },
    })));
  }

  async releaseEvent(triggerId: string, eventId: string): Promise<void> {
    await this.client.send(new DeleteCommand({ TableName: this.table, Key: dedupKey(triggerId, eventId) }));
  }

  storePayload(id: string, payload: string): Promise<{ id: string; chunks: number }> {
    return this.storeChunks(id, payload, this.nowSeconds() + PAYLOAD_TTL_SECONDS);
  }

  /** Chunks by bytes, kept as binary: a character split between two chunks is joined again on load. */
  private async storeChunks(id: string, text: string, expiresAt: number): Promise<{ id: string; chunks: number }> {
    const bytes = Buffer.from(text, 'utf8');
    const chunks = Math.max(1, Math.ceil(bytes.length / PAYLOAD_CHUNK_BYTES));
    await Promise.all(Array.from({ length: chunks }, (_, i) => this.client.send(new PutCommand({
      TableName: this.table,
      Item: { ...chunkKey(id, i), data: bytes.subarray(i * PAYLOAD_CHUNK_BYTES, (i + 1) * PAYLOAD_CHUNK_BYTES), expires_at: expiresAt },
    }))));
    return { id, chunks };
  }

  async loadPayload(ref: { id: string; chunks: number }): Promise<string> {
    const parts = await Promise.all(Array.from({ length: ref.chunks }, async (_, i) => {
      const { Item } = await this.client.send(new GetCommand({ TableName: this.table, Key: chunkKey(ref.id, i), ConsistentRead: true }));
      if (!Item) throw new Error(`payload ${ref.id} chunk ${i} is missing`);
      // Chunks written before they were binary are text.
      return typeof Item.data === 'string' ? Buffer.from(Item.data, 'utf8') : (Item.data as Uint8Array);
    }));
    return Buffer.concat(parts).toString('utf8');
  }
}
