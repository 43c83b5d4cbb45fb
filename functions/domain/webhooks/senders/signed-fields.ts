import type { WebhookBody } from '../body.js';
import type { SenderRow } from './catalog-types.js';

/**
 * The body a flow is handed: for a row that names its signed fields (`signed_fields`, SNS's by
 * message `Type`), the JSON object with those fields alone, so nothing a forwarder or attacker
 * added beside a genuine signature (an unsigned `MessageAttributes`, a `Token` on a notification)
 * reaches the flow as if the sender had said it. Any other body is handed over as parsed.
 */
export function signedBodyOf(row: SenderRow | undefined, body: WebhookBody): WebhookBody {
  const rule = row?.signed_fields;
  if (!rule || body.kind !== 'json' || typeof body.value !== 'object' || body.value === null || Array.isArray(body.value)) return body;
  const object = body.value as Record<string, unknown>;
  const selector = object[rule.by];
  const names = typeof selector === 'string' && Object.hasOwn(rule.fields, selector) ? rule.fields[selector]! : [rule.by];
  return { kind: 'json', value: Object.fromEntries(names.filter((name) => Object.hasOwn(object, name)).map((name) => [name, object[name]])) };
}
