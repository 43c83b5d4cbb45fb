import { isPlainObject } from '../../shared/json.js';
import type { WebhookBody } from './body.js';
import { requestValue } from './replay-key.js';
import type { EventTypeSource, RequestValue, SenderRow } from './senders/catalog-types.js';

/**
 * The input a flow receives for one webhook delivery. The body's top-level JSON keys are also
 * spread onto it, so a flow can read `$.amount` as well as `$.event.amount`.
 */
export interface TriggerData {
  headers: Record<string, string>;
  event: unknown;
  type?: string;
  data?: unknown;
  webhook_id: string;
  received_at: string;
  event_id: string;
  [k: string]: unknown;
}

/** Names of {@link TriggerData} a body key may never overwrite. */
const RESERVED_NAMES: ReadonlySet<string> = new Set([
  'headers', 'event', 'type', 'data', 'webhook_id', 'received_at', 'event_id',
  '__proto__', 'constructor', 'prototype',
]);

/**
 * Where a delivery id is commonly found, tried in order for a trigger that names no sender (and
 * so verifies nothing: any of them is as good as another). A signed trigger reads only the place
 * its sender's catalog row names (`delivery_id`).
 */
const UNSIGNED_EVENT_ID_SOURCES: readonly RequestValue[] = [
  { from: 'json', path: ['id'] },
  { from: 'header', name: 'x-github-delivery' },
  { from: 'json', path: ['event_id'] },
  { from: 'header', name: 'x-shopify-webhook-id' },
  { from: 'header', name: 'webhook-id' },
  { from: 'header', name: 'i-twilio-idempotency-token' },
  { from: 'header', name: 'idempotency-key' },
];

/** A top-level member of a JSON object, form or multipart body; `undefined` for other bodies. */
function bodyMember(body: WebhookBody, name: string): unknown {
  const value = body.value;
  return isPlainObject(value) && Object.hasOwn(value, name) ? value[name] : undefined;
}

/** Where a trigger that names no sender finds the type: the body's top-level `type`, as it always did. */
const UNSIGNED_EVENT_TYPE_SOURCES: readonly RequestValue[] = [{ from: 'json', path: ['type'] }];

/**
 * The event type a flow filter matches on: the first of the sources the sender's catalog row
 * names (`row.event_type`; none for a row that names none) present as a string of 1–256
 * characters, or for an unsigned trigger (`row` undefined) the body's top-level `type`.
 * `undefined` when none is: a missing or malformed field never fails a delivery.
 */
export function eventType(
  row: Partial<Pick<SenderRow, 'event_type'>> | undefined,
  headers: Record<string, string>,
  body: WebhookBody,
): string | undefined {
  const sources: readonly EventTypeSource[] = row ? row.event_type?.sources ?? [] : UNSIGNED_EVENT_TYPE_SOURCES;
  for (const source of sources) {
    const type = source.from === 'json_key' ? presentKey(source.among, body) : requestValue(source, headers, body);
    if (type !== undefined) return type;
  }
  return undefined;
}

/** The first of `names` a JSON object body holds, neither null nor absent (`PresentKey`). */
function presentKey(names: readonly string[], body: WebhookBody): string | undefined {
  if (body.kind !== 'json' || !isPlainObject(body.value)) return undefined;
  const value = body.value;
  return names.find((name) => Object.hasOwn(value, name) && value[name] !== null && value[name] !== undefined);
}

/**
 * The sender's own delivery id, so a retried delivery keeps its id: where the sender's catalog
 * row says (`row.delivery_id`; none when it names none), or for an unsigned trigger (`row`
 * undefined) the first of {@link UNSIGNED_EVENT_ID_SOURCES} present. Only strings of 1–256
 * characters count. Deduplication keys on signed material only (`replay-key.ts`), never on this
 * when the sender does not sign it.
 */
export function senderEventId(
  row: Pick<SenderRow, 'delivery_id'> | undefined,
  headers: Record<string, string>,
  body: WebhookBody,
): string | undefined {
  const sources = row ? (row.delivery_id ? [row.delivery_id] : []) : UNSIGNED_EVENT_ID_SOURCES;
  for (const source of sources) {
    const id = requestValue(source, headers, body);
    if (id !== undefined) return id;
  }
  return undefined;
}

/**
 * Builds the flow input for one delivery. Top-level keys of a JSON object body are copied on,
 * except reserved names and keys that could reach a prototype.
 */
export function buildTriggerData(input: {
  /** The sender's catalog row; undefined for an unsigned trigger. */
  row?: Partial<Pick<SenderRow, 'delivery_id' | 'event_type'>>;
  headers: Record<string, string>;
  body: WebhookBody;
  webhookId: string;
  receivedAt: Date;
  newEventId: () => string;
}): TriggerData {
  const { row, headers, body } = input;
  const trigger: TriggerData = {
    headers,
    event: body.value,
    webhook_id: input.webhookId,
    received_at: input.receivedAt.toISOString(),
    event_id: senderEventId(row, headers, body) ?? input.newEventId(),
  };
  const type = eventType(row, headers, body);
  if (type !== undefined) trigger.type = type;
  const data = bodyMember(body, 'data');
  if (data !== undefined) trigger.data = data;
  if (body.kind === 'json' && isPlainObject(body.value)) {
    for (const [key, value] of Object.entries(body.value)) {
      if (RESERVED_NAMES.has(key)) continue;
      // defineProperty, not assignment: an own data property whatever the key.
      Object.defineProperty(trigger, key, { value, enumerable: true, writable: true, configurable: true });
    }
  }
  return trigger;
}

/**
 * True when a delivery of `type` passes `filter`: an empty filter passes everything, an entry
 * ending in `*` matches by prefix (`customer.*`), others match exactly. A set filter refuses
 * deliveries without a type.
 */
export function matchesEventFilter(filter: readonly string[], type: string | undefined): boolean {
  if (filter.length === 0) return true;
  if (type === undefined) return false;
  return filter.some((entry) => (entry.endsWith('*') ? type.startsWith(entry.slice(0, -1)) : entry === type));
}

