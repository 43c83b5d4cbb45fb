import { createHash } from 'node:crypto';
import { isPlainObject, valueAt } from '../../shared/json.js';
import type { BatchRule, JsonPath } from './senders/catalog-types.js';

/** Type and id values read out of an element: text of 1–256 characters (ids may also be integers, as HubSpot's `eventId`). */
const MAX_VALUE_LENGTH = 256;

const asText = (value: unknown, integers: boolean): string | undefined => {
  if (integers && Number.isSafeInteger(value)) return String(value);
  return typeof value === 'string' && value.length >= 1 && value.length <= MAX_VALUE_LENGTH ? value : undefined;
};

/**
 * The most events one POST may carry to a trigger that splits batches: more is refused (413), never
 * cut short or stored unsplit. No batching sender documents a larger batch (HubSpot up to 100,
 * unconfirmed; SendGrid, Okta, Graph and the others name no count), and each element costs about five
 * write units and a queue message before the sender is answered, 8 at a time: with ~10 ms calls,
 * 1,000 take about 4 s deployed (an estimate), inside API Gateway's 29 s and under the 4,000
 * events/s one trigger's partitions take. A trigger with `split_batches: false` takes a larger POST whole.
 */
export const MAX_BATCH_ELEMENTS = 1_000;

/**
 * The events a batching sender's JSON body carries, in its order, as its row's `batch` rule says;
 * `undefined` when the body holds no list there or an empty one (it is then one delivery, as a
 * body of a sender that does not batch). A list of lists (Meta's `entry[].changes[]`) gives each
 * inner element, with the named members of its outer element under `parent.as`.
 */
export function batchElements(rule: BatchRule, body: unknown): unknown[] | undefined {
  const list = valueAt(body, rule.list);
  if (!Array.isArray(list)) return undefined;
  const elements = rule.nested ? list.flatMap((outer) => innerElements(rule.nested!, outer)) : list;
  return elements.length > 0 ? elements : undefined;
}

function innerElements(nested: NonNullable<BatchRule['nested']>, outer: unknown): unknown[] {
  const inner = valueAt(outer, nested.list);
  if (!Array.isArray(inner) || !isPlainObject(outer)) return [];
  const parent = Object.fromEntries(nested.parent.fields.filter((name) => Object.hasOwn(outer, name)).map((name) => [name, outer[name]]));
  return inner.map((element) => (isPlainObject(element) ? { ...element, [nested.parent.as]: parent } : element));
}

/** An element's event type: the first of the rule's paths holding text of 1–256 characters. */
export function elementType(rule: BatchRule, element: unknown): string | undefined {
  for (const path of rule.type) {
    const type = asText(valueAt(element, path), false);
    if (type !== undefined) return type;
  }
  return undefined;
}

/** An element's own id, its parts joined with `:` (Adyen: `pspReference:eventCode`); `undefined` when a part is missing. */
export function elementId(rule: BatchRule, element: unknown): string | undefined {
  if (!rule.id) return undefined;
  const parts = rule.id.paths.map((path: JsonPath) => asText(valueAt(element, path), true));
  if (parts.some((part) => part === undefined)) return undefined;
  const id = parts.join(':');
  return id.length <= MAX_VALUE_LENGTH ? id : undefined;
}

/**
 * The id of an element whose sender gives none (Graph, Meta, Asana): the SHA-256 of the element as
 * sent, base64url. A retry resends the same element, so it keeps its id and lists with it.
 */
export const elementContentId = (element: unknown): string => createHash('sha256').update(JSON.stringify(element) ?? '').digest('base64url');

/**
 * The key a deduplicating trigger collapses an element on: its id where the row's signature
 * covers it, else the SHA-256 of the element as sent (a retry resends the same element; for a
 * sender that signs its body, the element is signed material).
 */
export function elementDedupKey(rule: BatchRule, element: unknown): string {
  const id = rule.id?.signed ? elementId(rule, element) : undefined;
  return id !== undefined ? `id:${id}` : `sha256:${elementContentId(element)}`;
}
