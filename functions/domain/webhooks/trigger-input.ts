import { isPlainObject } from '../../shared/json.js';
import type { WebhookBody } from './body.js';
import { headerValue } from './headers.js';
import { requestValue } from './replay-key.js';
import type { RequestValue, SenderRow } from './senders/catalog-types.js';

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

const asString = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

/**
 * The event type a flow filter matches on: GitHub's `x-github-event` header, Shopify's
 * `x-shopify-topic` header, the inner `event.type` of a Slack `event_callback`, for any other
 * sender a string `type` member of the body; `undefined` when none applies.
 */
export function eventType(
  service: string | undefined,
  headers: Record<string, string>,
  body: WebhookBody,
): string | undefined {
  if (service === 'github') return headerValue(headers, 'x-github-event');
  if (service === 'shopify') return headerValue(headers, 'x-shopify-topic');
  const type = asString(bodyMember(body, 'type'));
  if (service === 'slack' && type === 'event_callback') {
    const inner = bodyMember(body, 'event');
    return (isPlainObject(inner) && asString(inner.type)) || type;
  }
  return type;
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
  service?: string;
  /** The sender's catalog row; undefined for an unsigned trigger. */
  row?: Pick<SenderRow, 'delivery_id'>;
  headers: Record<string, string>;
  body: WebhookBody;
  webhookId: string;
  receivedAt: Date;
  newEventId: () => string;
}): TriggerData {
  const { service, headers, body } = input;
  const trigger: TriggerData = {
    headers,
    event: body.value,
    webhook_id: input.webhookId,
    received_at: input.receivedAt.toISOString(),
    event_id: senderEventId(input.row, headers, body) ?? input.newEventId(),
  };
  const type = eventType(service, headers, body);
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

