import { AppError } from '../../shared/errors.js';
import { isPlainObject } from '../../shared/json.js';
import { LONE_SURROGATE } from '../kv/validation.js';
import {
  ANSWER_MESSAGE_OVERHEAD_BYTES,
  DEFAULT_ACK_WAIT_SECONDS,
  DEFAULT_DUPLICATE_WINDOW_SECONDS,
  DEFAULT_MAX_ACK_PENDING,
  HEADER_NAME_PATTERN,
  MAX_ACK_SEQS,
  MAX_ACK_WAIT_SECONDS,
  MAX_BACKOFF_STEPS,
  MAX_DESCRIPTION_BYTES,
  MAX_DUPLICATE_WINDOW_SECONDS,
  MAX_FETCH_BATCH,
  MAX_FETCH_WAIT_MS,
  MAX_HEADERS,
  MAX_HEADER_VALUE_BYTES,
  MAX_MAX_ACK_PENDING,
  MAX_MSG_SIZE_BYTES,
  MAX_NAK_DELAY_SECONDS,
  MAX_PUBLISH_BATCH,
  MSG_ID_PATTERN,
  STREAM_NAME_PATTERN,
} from './limits.js';
import type { ConsumerConfig, DeliverPolicy, NewMessage, StoredMessage, StreamConfig } from './types.js';

const invalid = (message: string) => new AppError('validation_error', message, undefined, message);
const utf8Bytes = (text: string) => Buffer.byteLength(text, 'utf8');
const isInteger = (value: unknown, min: number, max = Number.MAX_SAFE_INTEGER): value is number =>
  Number.isSafeInteger(value) && (value as number) >= min && (value as number) <= max;

function onlyFields(body: Record<string, unknown>, fields: readonly string[]): void {
  const unknown = Object.keys(body).filter((field) => !fields.includes(field));
  if (unknown.length > 0) throw invalid(`unknown fields: ${unknown.join(', ')}`);
}

export function validateStreamName(name: string): string {
  if (!STREAM_NAME_PATTERN.test(name)) throw invalid('stream names are 1-64 letters, digits, _ or -');
  return name;
}

export function validateConsumerName(name: string): string {
  if (!STREAM_NAME_PATTERN.test(name)) throw invalid('consumer names are 1-64 letters, digits, _ or -');
  return name;
}

/** An integer field: absent or `null` gives `fallback`. */
function integerField(body: Record<string, unknown>, field: string, min: number, max: number, fallback: number | null): number | null {
  const value = body[field];
  if (value === undefined || value === null) return fallback;
  if (!isInteger(value, min, max)) throw invalid(`${field} must be an integer from ${min} to ${max}`);
  return value;
}

const CONFIG_FIELDS = ['description', 'max_msgs', 'max_bytes', 'max_age_seconds', 'max_msg_size', 'discard', 'duplicate_window_seconds'] as const;

/**
 * A stream's configuration from the JSON body of `PUT /storage/streams/{stream}`. Every field is
 * optional; `null` means no limit (or the default); any other field is refused.
 */
export function parseStreamConfig(body: unknown): StreamConfig {
  if (!isPlainObject(body)) throw invalid('configuration must be a JSON object');
  onlyFields(body, CONFIG_FIELDS);
  const { description = null, discard = 'old' } = body;
  if (description !== null && (typeof description !== 'string' || utf8Bytes(description) > MAX_DESCRIPTION_BYTES || LONE_SURROGATE.test(description))) {
    throw invalid(`description must be text of at most ${MAX_DESCRIPTION_BYTES} UTF-8 bytes`);
  }
  if (discard !== 'old' && discard !== 'new') throw invalid('discard must be "old" or "new"');
  return {
    description,
    maxMsgs: integerField(body, 'max_msgs', 1, Number.MAX_SAFE_INTEGER, null),
    maxBytes: integerField(body, 'max_bytes', 1, Number.MAX_SAFE_INTEGER, null),
    maxAgeSeconds: integerField(body, 'max_age_seconds', 1, 100 * 365 * 86_400, null),
    maxMsgSize: integerField(body, 'max_msg_size', 1, MAX_MSG_SIZE_BYTES, MAX_MSG_SIZE_BYTES)!,
    discard,
    duplicateWindowSeconds: integerField(body, 'duplicate_window_seconds', 0, MAX_DUPLICATE_WINDOW_SECONDS, DEFAULT_DUPLICATE_WINDOW_SECONDS)!,
  };
}

function parseHeaders(value: unknown, at: string): Record<string, string> | null {
  if (value === undefined || value === null) return null;
  if (!isPlainObject(value)) throw invalid(`${at}.headers must be an object of text values`);
  const entries = Object.entries(value);
  if (entries.length > MAX_HEADERS) throw invalid(`${at}.headers: at most ${MAX_HEADERS} headers`);
  const headers: Record<string, string> = {};
  for (const [name, text] of entries) {
    if (!HEADER_NAME_PATTERN.test(name)) throw invalid(`${at}.headers: names are 1-64 lower-case HTTP token characters`);
    if (typeof text !== 'string' || utf8Bytes(text) > MAX_HEADER_VALUE_BYTES || LONE_SURROGATE.test(text)) {
      throw invalid(`${at}.headers.${name} must be text of at most ${MAX_HEADER_VALUE_BYTES} UTF-8 bytes`);
    }
    headers[name] = text;
  }
  return headers;
}

/** Bytes a message counts against `max_msg_size` and `max_bytes`: its data's JSON text and its headers. */
export const messageSize = (message: NewMessage): number =>
  utf8Bytes(message.data) + (message.headers ? utf8Bytes(JSON.stringify(message.headers)) : 0);

/** Bytes `text` takes inside a JSON string: an answer's body is one inside Lambda's response, so its text is escaped once more. */
const escapedBytes = (text: string) => utf8Bytes(JSON.stringify(text)) - 2;

/** Bytes a message takes of an answer's {@link MAX_ANSWER_BYTES} budget, as Lambda's response carries it. */
export const answerBytes = (message: StoredMessage): number =>
  escapedBytes(message.data) + (message.headers ? escapedBytes(JSON.stringify(message.headers)) : 0) + ANSWER_MESSAGE_OVERHEAD_BYTES;

/**
 * The body of `POST …/messages`: `{messages: [{data, headers?, msg_id?}]}`, 1 to 100 messages.
 * `data` is any JSON value (required; `null` is a value). Each message must fit `maxMsgSize`
 * (413 otherwise; the stream's own `max_msg_size` is checked by the use case); anything malformed is a 400 and nothing of the batch is stored.
 */
export function parsePublishBody(body: Record<string, unknown>, maxMsgSize = MAX_MSG_SIZE_BYTES): NewMessage[] {
  onlyFields(body, ['messages']);
  const { messages } = body;
  if (!Array.isArray(messages) || messages.length < 1 || messages.length > MAX_PUBLISH_BATCH) {
    throw invalid(`messages must be an array of 1 to ${MAX_PUBLISH_BATCH} messages`);
  }
  return messages.map((message: unknown, i) => {
    const at = `messages[${i}]`;
    if (!isPlainObject(message)) throw invalid(`${at} must be an object`);
    onlyFields(message, ['data', 'headers', 'msg_id']);
    if (!('data' in message) || message.data === undefined) throw invalid(`${at}.data is required`);
    const { msg_id: msgId = null } = message;
    if (msgId !== null && (typeof msgId !== 'string' || !MSG_ID_PATTERN.test(msgId))) throw invalid(`${at}.msg_id must be 1-128 printable ASCII characters`);
    const parsed: NewMessage = { data: JSON.stringify(message.data), headers: parseHeaders(message.headers, at), msgId };
    if (messageSize(parsed) > maxMsgSize) {
      throw new AppError('payload_too_large', `${at} is larger than max_msg_size`, undefined, `${at} is larger than the stream's max_msg_size (${maxMsgSize} bytes)`);
    }
    return parsed;
  });
}

/** A sequence number in a query or path: a positive integer (0 allowed where `min` says). */
export function parseSeq(raw: string, field: string, min = 1): number {
  const value = /^\d{1,16}$/.test(raw) ? Number(raw) : NaN;
  if (!isInteger(value, min)) throw invalid(`${field} must be an integer of at least ${min}`);
  return value;
}

/** An ISO 8601 time or epoch milliseconds, as `start_time` and `opt_start_time` take it. */
export function parseTime(raw: unknown, field: string): number {
  const ms = typeof raw === 'number' ? raw : typeof raw === 'string' && /^\d{4}-\d\d-\d\dT/.test(raw) ? Date.parse(raw) : NaN;
  if (!Number.isSafeInteger(ms) || ms < 0) throw invalid(`${field} must be an ISO 8601 date-time`);
  return ms;
}

/** Where a read starts: after `after_seq`, or at the first message at or after `start_time`; not both. */
export function parseReadStart(query: { afterSeq?: string; startTime?: string }): { afterSeq: number } | { startTime: number } {
  if (query.afterSeq !== undefined && query.startTime !== undefined) throw invalid('give after_seq or start_time, not both');
  if (query.startTime !== undefined) return { startTime: parseTime(query.startTime, 'start_time') };
  return { afterSeq: query.afterSeq === undefined ? 0 : parseSeq(query.afterSeq, 'after_seq', 0) };
}

const DELIVER_POLICIES: readonly DeliverPolicy[] = ['all', 'new', 'last', 'by_start_sequence', 'by_start_time'];
const CONSUMER_FIELDS = ['deliver_policy', 'opt_start_seq', 'opt_start_time', 'ack_wait_seconds', 'max_deliver', 'backoff_seconds', 'max_ack_pending'] as const;

/** A consumer's configuration from the JSON body of `PUT …/consumers/{name}`; every field optional. */
export function parseConsumerConfig(body: unknown): ConsumerConfig {
  if (!isPlainObject(body)) throw invalid('configuration must be a JSON object');
  onlyFields(body, CONSUMER_FIELDS);
  const { deliver_policy: deliverPolicy = 'all', backoff_seconds: backoff = null } = body;
  if (!DELIVER_POLICIES.includes(deliverPolicy as DeliverPolicy)) throw invalid(`deliver_policy must be one of ${DELIVER_POLICIES.join(', ')}`);
  const optStartSeq = integerField(body, 'opt_start_seq', 1, Number.MAX_SAFE_INTEGER, null);
  const optStartTime = body.opt_start_time === undefined || body.opt_start_time === null ? null : parseTime(body.opt_start_time, 'opt_start_time');
  if ((deliverPolicy === 'by_start_sequence') !== (optStartSeq !== null)) throw invalid('opt_start_seq goes with deliver_policy by_start_sequence, and only with it');
  if ((deliverPolicy === 'by_start_time') !== (optStartTime !== null)) throw invalid('opt_start_time goes with deliver_policy by_start_time, and only with it');
  if (backoff !== null && (!Array.isArray(backoff) || backoff.length > MAX_BACKOFF_STEPS || !backoff.every((s) => isInteger(s, 1, MAX_ACK_WAIT_SECONDS)))) {
    throw invalid(`backoff_seconds must be up to ${MAX_BACKOFF_STEPS} integers from 1 to ${MAX_ACK_WAIT_SECONDS}`);
  }
  const maxDeliver = integerField(body, 'max_deliver', 1, 1000, null);
  const backoffSeconds = (backoff ?? []) as number[];
  if (maxDeliver !== null && backoffSeconds.length > maxDeliver) throw invalid('backoff_seconds may not have more steps than max_deliver');
  return {
    deliverPolicy: deliverPolicy as DeliverPolicy,
    optStartSeq,
    optStartTime,
    ackWaitSeconds: integerField(body, 'ack_wait_seconds', 1, MAX_ACK_WAIT_SECONDS, DEFAULT_ACK_WAIT_SECONDS)!,
    maxDeliver,
    backoffSeconds,
    maxAckPending: integerField(body, 'max_ack_pending', 1, MAX_MAX_ACK_PENDING, DEFAULT_MAX_ACK_PENDING)!,
  };
}

/** `POST …/fetch`: `{batch?, wait_ms?}` (1 message and no wait by default). */
export function parseFetch(body: Record<string, unknown>): { batch: number; waitMs: number } {
  onlyFields(body, ['batch', 'wait_ms']);
  return {
    batch: integerField(body, 'batch', 1, MAX_FETCH_BATCH, 1)!,
    waitMs: integerField(body, 'wait_ms', 0, MAX_FETCH_WAIT_MS, 0)!,
  };
}

/** `POST …/ack`: `{seqs: [...]}`, 1 to 1,000 sequences. */
export function parseAck(body: Record<string, unknown>): number[] {
  onlyFields(body, ['seqs']);
  const { seqs } = body;
  if (!Array.isArray(seqs) || seqs.length < 1 || seqs.length > MAX_ACK_SEQS || !seqs.every((s) => isInteger(s, 1))) {
    throw invalid(`seqs must be an array of 1 to ${MAX_ACK_SEQS} sequence numbers`);
  }
  return [...new Set(seqs as number[])];
}

/** `POST …/nak`: `{seq, delay_seconds?}`. */
export function parseNak(body: Record<string, unknown>): { seq: number; delaySeconds: number } {
  onlyFields(body, ['seq', 'delay_seconds']);
  if (!isInteger(body.seq, 1)) throw invalid('seq must be a sequence number');
  return { seq: body.seq, delaySeconds: integerField(body, 'delay_seconds', 0, MAX_NAK_DELAY_SECONDS, 0)! };
}
