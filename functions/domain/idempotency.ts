import { createCipheriv, createDecipheriv, createHash, createHmac } from 'node:crypto';
import { AppError } from '../shared/errors.js';
import type { Clock } from './clock.js';
import { epochSeconds } from './clock.js';
import type { RandomBytes } from './random-bytes.js';

/**
 * Idempotency keys (`Idempotency-Key`, as Stripe's API and the IETF draft
 * draft-ietf-httpapi-idempotency-key-header name it): a client that retries a POST with the same key
 * gets the first answer again instead of a second trigger, upload or publish.
 *
 *   request 1 ──claim (conditional put: no record, or expired, or its lock lapsed)──▶ in_flight
 *              ──runs──▶ 2xx: done, answer sealed │ anything else: record deleted (a retry runs again)
 *   request 2, same key, same scope:
 *      in_flight ──▶ 409 idempotency_key_in_flight (Retry-After: 1)
 *      done, same fingerprint ──▶ the first answer, with `Idempotent-Replayed: true`
 *      done or in_flight, other fingerprint ──▶ 409 idempotency_key_reused
 *
 * A record is found by a hash of the key **and the caller's account and credential** (the user, or
 * the API key), so the same key sent by another credential is another record: a stolen key alone
 * replays nothing. The answer is stored sealed (AES-256-GCM) under a key derived from the
 * idempotency key itself, which the table never holds: an answer carrying a secret (a new API key,
 * a trigger's key) is readable only by a request that presents the idempotency key again.
 */

/** How long a completed answer is replayed, in seconds: 24 hours, as Stripe keeps keys. */
export const IDEMPOTENCY_WINDOW_SECONDS = 24 * 60 * 60;
/**
 * How long a claim holds before another request may take the key over, in seconds: longer than the
 * longest function timeout of a route that honours keys (29 s), so a claim only lapses when the
 * function that held it died before finishing.
 */
export const IN_FLIGHT_LOCK_SECONDS = 60;
/** How long a client waits before asking again about a key still in flight, in seconds. */
export const IN_FLIGHT_RETRY_AFTER_SECONDS = 1;
/**
 * The largest answer kept, in bytes of its body: a DynamoDB item holds 400 KB. A larger 2xx is
 * answered but not kept (the record is deleted), so a retry with its key runs again.
 */
export const MAX_KEPT_ANSWER_BYTES = 300_000;
/** 1 to 255 printable ASCII characters (space to `~`). */
export const IDEMPOTENCY_KEY_FORMAT = /^[\x20-\x7e]{1,255}$/;
export const IDEMPOTENCY_KEY_HEADER = 'idempotency-key';
export const REPLAYED_HEADER = 'idempotent-replayed';

/** An answer as the handler returned it. */
export interface KeptAnswer {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
  isBase64Encoded?: boolean;
}

/** What the store holds for one key and scope. `answer` is sealed; epoch seconds throughout. */
export interface IdempotencyRecord {
  fingerprint: string;
  state: 'in_flight' | 'done';
  lockedUntil: number;
  expiresAt: number;
  answer?: string;
}

/** Where records are kept: one adapter, `DynamoIdempotencyStore`. */
export interface IdempotencyStore {
  /**
   * Claims `id` for a new request: writes `record` (in flight) unless a live record is there
   * (one not expired and, in flight, not past its lock), and answers that record; `undefined`
   * when the claim was written.
   */
  claim(id: string, record: IdempotencyRecord, now: number): Promise<IdempotencyRecord | undefined>;
  /** Stores the sealed answer of the claim on `id`. */
  finish(id: string, record: IdempotencyRecord): Promise<void>;
  /** Forgets the claim on `id` (the request failed: a retry runs again). */
  release(id: string): Promise<void>;
}

/** Who a key belongs to: the account and the credential (a user's `sub`, or `apikey:<id>`). */
export interface IdempotencyScope {
  accountId: string;
  subject: string;
}

/** What makes two requests the same: the operation, its path and query, and the body's bytes. */
export interface RequestIdentity {
  operationId: string;
  path: string;
  query: string;
  body: Buffer;
}

const sha256 = (...parts: (string | Buffer)[]) => {
  const hash = createHash('sha256');
  // Length-prefixed, so no two different part lists hash alike.
  for (const part of parts) hash.update(`${Buffer.byteLength(part)}:`).update(part);
  return hash.digest();
};

/** The record's id: the key and its scope hashed together; the key itself is never stored. */
export const recordId = (scope: IdempotencyScope, key: string): string => sha256('record', scope.accountId, scope.subject, key).toString('base64url');

export const fingerprintOf = (request: RequestIdentity): string =>
  sha256(request.operationId, request.path, request.query, request.body).toString('base64url');

/** The answer's sealing key: only a request presenting the idempotency key (in the same scope) can derive it. */
const sealingKey = (scope: IdempotencyScope, key: string) =>
  createHmac('sha256', key).update(sha256('seal', scope.accountId, scope.subject)).digest();

const GCM_IV_BYTES = 12;

export function sealAnswer(answer: KeptAnswer, scope: IdempotencyScope, key: string, randomBytes: RandomBytes): string {
  const iv = randomBytes(GCM_IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', sealingKey(scope, key), iv);
  const sealed = Buffer.concat([cipher.update(JSON.stringify(answer), 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64');
}

export function openAnswer(sealed: string, scope: IdempotencyScope, key: string): KeptAnswer {
  const bytes = Buffer.from(sealed, 'base64');
  const decipher = createDecipheriv('aes-256-gcm', sealingKey(scope, key), bytes.subarray(0, GCM_IV_BYTES));
  decipher.setAuthTag(bytes.subarray(GCM_IV_BYTES, GCM_IV_BYTES + 16));
  return JSON.parse(Buffer.concat([decipher.update(bytes.subarray(GCM_IV_BYTES + 16)), decipher.final()]).toString('utf8')) as KeptAnswer;
}

/** The key a request sent, checked; `undefined` when it sent none. */
export function idempotencyKeyOf(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (!IDEMPOTENCY_KEY_FORMAT.test(value)) {
    throw new AppError('validation_error', 'bad Idempotency-Key', undefined, 'Idempotency-Key: expected 1 to 255 printable ASCII characters (a UUID is a good key).');
  }
  return value;
}

export interface IdempotentRun {
  store: IdempotencyStore;
  now: Clock;
  randomBytes: RandomBytes;
  scope: IdempotencyScope;
  key: string;
  request: RequestIdentity;
  /** Runs the operation; its 2xx answer is kept. */
  run: () => Promise<KeptAnswer>;
  /** Told when a kept answer could not be stored (the answer still goes out). */
  onStoreFailure?: (error: unknown) => Promise<void> | void;
}

/** Runs an operation at most once per key and scope within the window (see the timeline above). */
export async function runIdempotent(input: IdempotentRun): Promise<KeptAnswer> {
  const { store, scope, key } = input;
  const id = recordId(scope, key);
  const fingerprint = fingerprintOf(input.request);
  const now = epochSeconds(input.now());
  const claim: IdempotencyRecord = { fingerprint, state: 'in_flight', lockedUntil: now + IN_FLIGHT_LOCK_SECONDS, expiresAt: now + IDEMPOTENCY_WINDOW_SECONDS };
  const found = await store.claim(id, claim, now);
  if (found) {
    if (found.fingerprint !== fingerprint) {
      throw new AppError('idempotency_key_reused', undefined, undefined, 'This Idempotency-Key was sent with another request (operation, path, query or body) in the last 24 hours: use a new key for a new request.');
    }
    if (found.state === 'in_flight' || found.answer === undefined) {
      throw new AppError('idempotency_key_in_flight', undefined, { 'retry-after': String(IN_FLIGHT_RETRY_AFTER_SECONDS) }, 'A request with this Idempotency-Key is still running: retry after the Retry-After seconds.');
    }
    const answer = openAnswer(found.answer, scope, key);
    return { ...answer, headers: { ...answer.headers, [REPLAYED_HEADER]: 'true' } };
  }
  let answer: KeptAnswer;
  try {
    answer = await input.run();
  } catch (error) {
    await store.release(id);
    throw error;
  }
  const kept = answer.statusCode >= 200 && answer.statusCode < 300 && Buffer.byteLength(answer.body) <= MAX_KEPT_ANSWER_BYTES;
  try {
    if (kept) await store.finish(id, { ...claim, state: 'done', answer: sealAnswer(answer, scope, key, input.randomBytes) });
    else await store.release(id);
  } catch (error) {
    // The operation has happened: its answer goes out. A retry within the lock gets 409 in flight, after it runs again.
    await input.onStoreFailure?.(error);
  }
  return answer;
}
