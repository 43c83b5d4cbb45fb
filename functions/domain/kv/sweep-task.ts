import { AppError } from '../../shared/errors.js';
import { isPlainObject } from '../../shared/json.js';
import { BUCKET_NAME_PATTERN, GENERATION_PATTERN, MAX_ACCOUNT_ID_BYTES } from './limits.js';
import { isValidKey } from './validation.js';
import type { GenerationRef } from './types.js';

/**
 * Work for the sweeper: delete everything of one generation that is no longer the store's
 * current one. Tasks are idempotent; running one twice, or two for the same generation, is safe.
 * One queue and one sweeper serve every kind of store: a task names a KV bucket (`name`), or an
 * object store (`name` and `objectStoreId`, under which its bytes and catalog entries live).
 */
/**
 * Whose generation a task reclaims: a KV bucket's data (no kind), or a stream's messages or
 * consumers (`domain/streams`). `object_expiry` is not a reclaim: it is an object store's expiry
 * pass over its current generation, due at `settleUntil` (`domain/objects/expiry.ts`). Every kind is a generation partition that the sweeper checks is no
 * longer current before it deletes anything.
 */
export const SWEEP_KINDS = ['stream_messages', 'stream_consumers', 'object_expiry'] as const;
export type SweepKind = (typeof SWEEP_KINDS)[number];

export interface SweepTask extends GenerationRef {
  /** The object store's random id; unset for a KV bucket and a stream. */
  objectStoreId?: string;
  kind?: SweepKind;
  /**
   * Epoch milliseconds after which nothing can still land in this generation: the purge or delete
   * that issued the task has committed or failed, and every write that read this generation
   * before it has finished. A pass that starts after it is final.
   */
  settleUntil: number;
  /** The pass in progress: when it started (epoch ms) and the last key it deleted. */
  pass?: { startedAt: number; after?: string };
}

/** The one port to the sweep queue (`SqsSweepQueue`). Fails with `unavailable` when not accepted. */
export interface SweepQueue {
  enqueue(task: SweepTask, delaySeconds: number): Promise<void>;
}

/** SQS's longest message delay. */
export const MAX_QUEUE_DELAY_SECONDS = 900;
/** A new task waits this long so the purge's swap has committed when the sweeper first looks. */
export const FIRST_SWEEP_DELAY_SECONDS = 1;
/** How long to wait before looking again at a generation that is still current. */
export const CURRENT_GENERATION_RETRY_SECONDS = 5;
/** Added to the writers' worst case when choosing the settle time. */
export const SETTLE_MARGIN_SECONDS = 30;

/**
 * How long after issuing a task the old generation may still receive writes: the issuing request
 * can take up to the function timeout to swap, and a write that read the old generation just
 * before the swap can take up to one more timeout to land.
 */
export const settleSecondsFor = (writerTimeoutSeconds: number): number => 2 * writerTimeoutSeconds + SETTLE_MARGIN_SECONDS;

/** Whole seconds from `now` until `until` (epoch ms), within what SQS accepts. */
export const delaySecondsUntil = (until: number, now: number): number =>
  Math.min(MAX_QUEUE_DELAY_SECONDS, Math.max(0, Math.ceil((until - now) / 1000)));

interface SweepMessage {
  v: 1;
  kind?: SweepKind;
  account_id: string;
  bucket: string;
  generation: string;
  settle_until: number;
  pass_started_at?: number;
  after?: string;
  /** An object store's id; absent for a KV bucket (the messages of before object stores). */
  store_id?: string;
}

export function encodeSweepTask(task: SweepTask): string {
  const message: SweepMessage = {
    v: 1,
    kind: task.kind,
    account_id: task.accountId,
    bucket: task.name,
    generation: task.generation,
    settle_until: task.settleUntil,
    pass_started_at: task.pass?.startedAt,
    after: task.pass?.after,
    store_id: task.objectStoreId,
  };
  return JSON.stringify(message);
}

const isTime = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) > 0;

/** Reads a task from a queue message; anything malformed is a `validation_error` (the message goes to the DLQ). */
export function decodeSweepTask(body: string): SweepTask {
  let message: unknown;
  try {
    message = JSON.parse(body);
  } catch {
    throw new AppError('validation_error', 'sweep message is not JSON');
  }
  if (!isPlainObject(message) || message.v !== 1) throw new AppError('validation_error', 'not a version 1 sweep message');
  const { account_id: accountId, bucket, generation, settle_until: settleUntil, pass_started_at: startedAt, after, store_id: storeId, kind } = message;
  const valid =
    typeof accountId === 'string' && accountId.length > 0 && Buffer.byteLength(accountId, 'utf8') <= MAX_ACCOUNT_ID_BYTES &&
    typeof bucket === 'string' && BUCKET_NAME_PATTERN.test(bucket) &&
    typeof generation === 'string' && GENERATION_PATTERN.test(generation) &&
    isTime(settleUntil) &&
    (kind === undefined || SWEEP_KINDS.includes(kind as SweepKind)) &&
    (startedAt === undefined || isTime(startedAt)) &&
    (after === undefined || (startedAt !== undefined && typeof after === 'string' && isValidKey(after))) &&
    (storeId === undefined || (typeof storeId === 'string' && GENERATION_PATTERN.test(storeId)));
  if (!valid) throw new AppError('validation_error', 'sweep message fields are not valid');
  const task: SweepTask = { accountId, name: bucket, generation, settleUntil, ...(storeId !== undefined && { objectStoreId: storeId as string }), ...(kind !== undefined && { kind: kind as SweepKind }) };
  if (startedAt !== undefined) task.pass = after === undefined ? { startedAt } : { startedAt, after };
  return task;
}
