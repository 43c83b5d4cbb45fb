import { EXECUTION_ID } from '../flows/execution-id.js';
import type { ExecutionDetail, ExecutionStatus, StoredRequest } from '../flows/ports.js';

/*
 * The listen protocol: what a listener (`flowgate listen`) and the gateway's WebSocket endpoint say
 * to each other, over API Gateway's WebSocket API deployed and over the local stack's emulator of
 * it. The listener chooses its triggers, event types and replay point in the connect URL's query
 * (`?triggers=a,b&events=payment_intent.*&since=…`), as a `$connect` route sees them. Its first
 * message is `hello`, which the gateway answers `ready` and the deliveries `since` asked for (oldest
 * first); each new one is sent as its record is written; the listener sends `answer` once its local
 * server answered.
 */

/** API Gateway WebSocket: a frame is at most 32 KB, a message (its frames together) 128 KB. */
export const MAX_FRAME_BYTES = 32 * 1024;
export const MAX_MESSAGE_BYTES = 128 * 1024;
/**
 * A delivery whose message would be larger than this travels by reference: its body is left out
 * and `body_url` (the inspector's `GET /triggers/{id}/executions/{execution_id}`) gives it whole.
 * A margin under the message limit, for the JSON escaping of what is inline.
 */
export const MAX_INLINE_MESSAGE_BYTES = MAX_MESSAGE_BYTES - 1024;
/** How far back `since` may reach: delivery records are kept 7 days. */
export const MAX_SINCE_MS = 7 * 24 * 3600 * 1000;
/** A listener's answer kept for the sender (answer_from_listener) carries at most this much body. */
export const MAX_ANSWER_BODY_BYTES = 64 * 1024;
/** Deliveries a `since` replays per trigger, at most (then `truncated` says so). */
export const MAX_REPLAYED_PER_TRIGGER = 1000;
/**
 * Delivery records the replays of one account may read in one clock hour (UTC), all its connections
 * together: counted in the connections table, so connecting again does not reset it. Past it a
 * replay is cut (an `error` message says so, then `replayed` with `truncated`); live deliveries
 * still flow. Ten replays of 1,000 an hour; a reconnecting listener reads a few each time.
 */
export const MAX_REPLAY_READS_PER_HOUR = 10_000;
/** Records a replay lists per trigger and page: a round of pages over the triggers at a time, so a cut replay keeps each trigger's newest. */
export const REPLAY_PAGE = 100;

/** A trigger id as a listener may name one. */
const TRIGGER_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** What a listener chose in its connect URL. */
export interface ListenQuery {
  /** Trigger ids; none: every trigger of the account. */
  triggers?: string[];
  /** Event types, exact or a prefix ending in `*`, as in event filters; none: every type. */
  events?: string[];
  /** ISO 8601: first send what was recorded at or after this time. */
  since?: string;
}

export interface ListenedTrigger {
  id: string;
  name: string;
  /** The sender its signature verifies (a catalog id), when it has one. */
  sender?: string;
  response_mode: 'acknowledge' | 'wait';
  answer_from_listener: boolean;
}

export interface ReadyMessage {
  type: 'ready';
  connection_id: string;
  triggers: ListenedTrigger[];
  /**
   * The endpoint's clock when it said ready (ISO 8601): a client that connects again resumes from
   * it (`since`) until it has seen a delivery, never from its own clock, which may run ahead.
   */
  server_time: string;
}

export interface DeliveryMessage {
  type: 'delivery';
  trigger_id: string;
  execution_id: string;
  event_id: string;
  event_type?: string;
  received_at: string;
  status: ExecutionStatus;
  sender?: string;
  /** True: sent because `since` asked for it, not as it arrived. */
  replayed?: true;
  /** The request as received (secrets redacted as the inspector shows it), body inline or by `body_url`. */
  request: StoredRequest & { body_url?: string };
}

export interface ReplayedMessage {
  type: 'replayed';
  count: number;
  /**
   * Some trigger had more than `MAX_REPLAYED_PER_TRIGGER` since then, or the account's replays had
   * read `MAX_REPLAY_READS_PER_HOUR` this hour: the oldest were not sent.
   */
  truncated: boolean;
}

export interface ErrorMessage {
  type: 'error';
  error: string;
  message: string;
}

export type ServerMessage = ReadyMessage | DeliveryMessage | ReplayedMessage | ErrorMessage;

/** The listener's local server's answer to one delivery. */
export interface AnswerMessage {
  action: 'answer';
  trigger_id: string;
  execution_id: string;
  /** The local HTTP status; absent when the local server could not be reached (`error` says why). */
  status?: number;
  /** Milliseconds from the listener receiving the delivery to its local server's answer. */
  ms?: number;
  error?: string;
  headers?: Record<string, string>;
  body?: string;
  body_encoding?: 'utf8' | 'base64';
}

/** Parses `?triggers=&events=&since=`; throws a message naming the parameter when one is wrong. */
export function parseListenQuery(query: Record<string, string | undefined>, nowMs: number): ListenQuery {
  const list = (name: string): string[] | undefined => {
    const value = query[name];
    if (value === undefined || value === '') return undefined;
    const items = value.split(',').map((item) => item.trim()).filter(Boolean);
    if (items.length > 100) throw new ListenQueryError(`${name}: at most 100 entries`);
    return items;
  };
  const triggers = list('triggers');
  if (triggers?.some((id) => !TRIGGER_ID.test(id))) throw new ListenQueryError('triggers: comma-separated trigger ids');
  const events = list('events');
  const since = parseSince(query.since, nowMs);
  return { ...(triggers && { triggers }), ...(events && { events }), ...(since && { since }) };
}

/**
 * A `since` (the connect URL's, or the `hello` message's): an ISO 8601 time, held to the 7 days
 * records are kept; undefined when absent or empty. Anything else is a `ListenQueryError`.
 */
export function parseSince(value: unknown, nowMs: number): string | undefined {
  if (value === undefined || value === '') return undefined;
  const ms = typeof value === 'string' ? Date.parse(value) : Number.NaN;
  if (!Number.isFinite(ms)) throw new ListenQueryError('since: an ISO 8601 time, e.g. 2026-01-01T10:00:00Z');
  return new Date(Math.max(ms, nowMs - MAX_SINCE_MS)).toISOString();
}

export class ListenQueryError extends Error {}

/** Whether an event type passes a listener's `events` (exact, or a prefix ending in `*`). */
export function typeMatches(events: readonly string[] | undefined, type: string | undefined): boolean {
  if (!events || events.length === 0) return true;
  if (type === undefined) return false;
  return events.some((pattern) => (pattern.endsWith('*') ? type.startsWith(pattern.slice(0, -1)) : type === pattern));
}

/**
 * The message for one delivery: its request inline when the whole message fits in a WebSocket
 * message, else by reference (`body_url`, fetched with the listener's own credentials).
 */
export function deliveryMessage(detail: ExecutionDetail, trigger: { id: string; sender?: string }, apiBaseUrl: string, extra: Pick<DeliveryMessage, 'replayed'> = {}): string {
  const request: DeliveryMessage['request'] = detail.request ?? { method: 'POST', headers: {}, query: {}, body_bytes: 0 };
  const message: DeliveryMessage = {
    type: 'delivery',
    trigger_id: trigger.id,
    execution_id: detail.execution_id,
    event_id: detail.event_id,
    ...(detail.type !== undefined && { event_type: detail.type }),
    received_at: detail.received_at,
    status: detail.status,
    ...(trigger.sender !== undefined && { sender: trigger.sender }),
    ...extra,
    request,
  };
  const text = JSON.stringify(message);
  if (Buffer.byteLength(text, 'utf8') <= MAX_INLINE_MESSAGE_BYTES) return text;
  const { body: _body, body_encoding: _encoding, ...withoutBody } = request;
  const url = `${apiBaseUrl}/triggers/${encodeURIComponent(trigger.id)}/executions/${encodeURIComponent(detail.execution_id)}`;
  return JSON.stringify({ ...message, request: { ...withoutBody, body_url: url } });
}

/** A listener's message, or undefined when it is not one this protocol knows. */
export function parseAnswer(text: string): AnswerMessage | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const message = value as Record<string, unknown>;
  // Ids of the shapes the inspector's are: an execution id is a key's part, which no other text may be.
  if (message.action !== 'answer' || typeof message.trigger_id !== 'string' || !TRIGGER_ID.test(message.trigger_id)
    || typeof message.execution_id !== 'string' || !EXECUTION_ID.test(message.execution_id)) return undefined;
  if (message.status !== undefined && !(Number.isInteger(message.status) && (message.status as number) >= 100 && (message.status as number) <= 599)) return undefined;
  if (message.ms !== undefined && !(typeof message.ms === 'number' && message.ms >= 0)) return undefined;
  if (message.error !== undefined && typeof message.error !== 'string') return undefined;
  if (message.headers !== undefined && (typeof message.headers !== 'object' || message.headers === null || Object.values(message.headers).some((v) => typeof v !== 'string'))) return undefined;
  if (message.body !== undefined && typeof message.body !== 'string') return undefined;
  if (message.body_encoding !== undefined && message.body_encoding !== 'utf8' && message.body_encoding !== 'base64') return undefined;
  return message as unknown as AnswerMessage;
}
