import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { SENDERS } from '../functions/domain/webhooks/senders/catalog.js';
import type { BatchRule, DeliveryPolicy, EventTypeRule, EventTypeSource, RequestValue, SignedValue, Verification } from '../functions/domain/webhooks/senders/catalog-types.js';
import type { TimestampedBodyParams } from '../functions/domain/webhooks/senders/primitives/timestamped-body.js';
import { HANDSHAKE_WORDS } from '../functions/domain/webhooks/handshake-words.js';
import { eventNamesOf } from '../functions/domain/webhooks/senders/event-names.js';

/**
 * `npm run docs:senders`: writes the senders' guide, docs/senders.md, whole from the sender catalog,
 * so no guide lists senders by hand (test/domain/guide-senders.test.ts checks it is current).
 */
export const GUIDE = resolve(import.meta.dirname, '../docs/senders.md');
export const TABLE_START = '<!-- senders table: written by `npm run docs:senders` from functions/domain/webhooks/senders/catalog.ts -->';
export const TABLE_END = '<!-- end of senders table -->';
export const HANDSHAKES_START = '<!-- handshakes: written by `npm run docs:senders` from the catalog and functions/domain/webhooks/handshakes.ts -->';
export const HANDSHAKES_END = '<!-- end of handshakes -->';

/** How a row is verified, in a few words. */
function verifiedBy(verification: Verification): string {
  switch (verification.primitive) {
    case 'hmac': return `HMAC-${verification.algorithm.toUpperCase()}`;
    case 'ed25519': return `Ed25519${timestampWindow(verification)}`;
    case 'ecdsa_p256': return `ECDSA P-256${timestampWindow(verification)}`;
    case 'x509_rsa': return 'RSA, by the sender\'s X.509 certificate';
    case 'jwt': return 'JWT';
    case 'static_token': return 'static token';
    case 'basic': return 'HTTP Basic';
    case 'any_of': return verification.schemes.map(verifiedBy).join(', or ');
    case 'configured': return 'your HMAC settings';
    case 'unsupported': return `not verified: ${verification.reason}`;
  }
}

/** How old (and how far ahead) a signed timestamp may be, for the senders that sign `<timestamp><body>`. */
function timestampWindow(params: TimestampedBodyParams): string {
  const span = (seconds: number) => (seconds % 3600 === 0 ? `${seconds / 3600} h` : seconds % 60 === 0 ? `${seconds / 60} min` : `${seconds} s`);
  if (params.maxAgeSeconds !== undefined) {
    return `; signed timestamp at most ${span(params.maxAgeSeconds)} old${params.toleranceSeconds === undefined ? '' : ` and ${span(params.toleranceSeconds)} ahead`}`;
  }
  return params.toleranceSeconds === undefined ? '' : `; signed timestamp within ${span(params.toleranceSeconds)}`;
}

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

/** A header or a body member, as the sender's docs would name it. */
const place = (value: RequestValue) => (value.from === 'header' ? `header \`${value.name}\`` : `body \`${value.path.join('.')}\``);
/** A type that is a name: which of the listed members the body holds (the first few named). */
const typePlace = (source: EventTypeSource) => (source.from === 'json_key'
  ? `which body member is present, of ${source.among.slice(0, 3).map((name) => `\`${name}\``).join(', ')}${source.among.length > 3 ? ` and ${source.among.length - 3} more` : ''}`
  : place(source));

/** Where the event type is, tried in order, with an example; or that there is none and what a filter matches. */
function eventTypeCell(rule: EventTypeRule): string {
  const where = 'example' in rule ? `${rule.sources.map(typePlace).join(', else ')} (\`${rule.example}\`)` : 'none';
  return rule.note ? `${where}. ${rule.note}` : where;
}

/** Where a batch's events are, and each one's type and id. */
function batchCell(rule: BatchRule | undefined): string {
  if (!rule) return '';
  const path = (segments: readonly string[]) => `\`${segments.join('.')}\``;
  const list = rule.list.length === 0 ? 'the body, an array' : `body ${path(rule.list)}[]`;
  const nested = rule.nested ? `, each one's ${path(rule.nested.list)}[]` : '';
  const type = rule.type.map(path).join(', else ');
  const id = rule.id ? `; id ${rule.id.paths.map(path).join(' + ')}${rule.id.signed ? ', signed' : ', unsigned'}` : '; no id';
  return `${list}${nested}: type ${type}${id}${rule.note ? `. ${rule.note}` : ''}`;
}

/** Where the delivery id is, and whether deduplication may key on it. */
const deliveryIdCell = (id: SignedValue | undefined) => (id ? `${place(id)}${id.signed ? ', signed' : ', unsigned'}` : '');

/** How long the sender waits for an answer; "undocumented" where its documentation does not say. */
const timeoutCell = (policy: DeliveryPolicy) =>
  `${policy.timeout_seconds === null ? 'undocumented' : `${policy.timeout_seconds} s`}${policy.unconfirmed ? ' (some figures unconfirmed)' : ''}`;

/** The table, one row per catalog row, in the catalog's order. */
export function sendersTable(): string {
  const rows = SENDERS.map((row) =>
    `| [${cell(row.name)}](${row.docs_url}) | \`${row.id}\` | ${row.category} | ${cell(verifiedBy(row.verification))}${row.limits ? `. ${cell(row.limits)}` : ''} | ${cell(row.secret_label)} | ${row.handshake ? 'yes' : ''} | ${cell(eventTypeCell(row.event_type))} | ${cell(deliveryIdCell(row.delivery_id))} | ${cell(batchCell(row.batch))} | ${timeoutCell(row.delivery_policy)} | ${cell(row.delivery_policy.retries)} |`);
  return ['| Sender | `signature.service` | Group | Verified by | `signature.secret` | Handshake | Event type (`$.trigger.type`) | Delivery id (`$.trigger.event_id`) | Batch (one event per element) | Time-out | Retries |', '|---|---|---|---|---|---|---|---|---|---|---|', ...rows].join('\n');
}

/** One line per sender with a handshake: what the receiver answers, or that it does not yet. */
export function handshakesList(): string {
  return SENDERS.filter((row) => row.handshake).map((row) => {
    const what = row.handshake_answer ? HANDSHAKE_WORDS[row.handshake_answer]
      : BY_SETTINGS[row.id] ?? 'not answered by the receiver yet: the sender expects a reply of its own (see its docs)';
    return `- [${row.name}](${row.docs_url}) (\`${row.id}\`): ${what}.`;
  }).join('\n');
}

/** Senders whose expected reply a trigger's own settings give (see "Answering the sender"). */
const BY_SETTINGS: Record<string, string> = {
  twilio: 'expects TwiML back, which a wait-mode flow answers with (`flows/twilio-sms-reply.asl.json`)',
  adyen: 'expects `[accepted]`, a trigger\'s `acknowledge_response`',
  intercom: 'its `ping` topic is a delivery like any other, answered 200',
};


/** Each sender's event names, to pick an `event_filter` from: folded, as GitHub's and Stripe's run to hundreds. */
export function eventNamesList(): string {
  return SENDERS.flatMap((row) => {
    const listed = eventNamesOf(row.id);
    if (!listed) return [];
    const count = listed.names.length === 1 ? '1 name' : `${listed.names.length} names`;
    return [`<details><summary>${row.name} (<code>${row.id}</code>): ${count}, from ${listed.source}</summary>\n\n${listed.names.map((name) => `\`${name}\``).join(', ')}\n\n</details>`];
  }).join('\n');
}

/** Senders named in the catalog: every row but the one verified by the trigger's own HMAC settings. */
export const NAMED_SENDERS = SENDERS.filter((row) => row.verification.primitive !== 'configured').length;

/** The whole guide: what it is, the table, the handshakes. Edit the words here, then `npm run docs:senders`. */
export function sendersGuide(): string {
  return `# Senders

<!-- Written by \`npm run docs:senders\` (bin/senders-table.ts) from functions/domain/webhooks/senders/catalog.ts: edit those, not this file. -->

A webhook trigger verifies its sender the way that sender signs. These are the ${NAMED_SENDERS} senders of the catalog, and a
custom HMAC for any other; each is a row of data over a few verification primitives. To use one, create a trigger with \`"signature": {"service": "<id>",
"secret": "<what the sender's dashboard shows>"}\` (see [webhook triggers](triggers.md#verifying-senders), which also
explains event types, delivery ids, batches, time-outs and handshakes). \`GET /signature-services\` answers the same
catalog to a program, and the console's picker shows it.

## The catalog

Columns: the sender and its documentation; the \`signature.service\` to set; how it is verified and what to paste as
\`signature.secret\`; whether it registers its URL with a handshake; where its event type (what an \`event_filter\`
matches, \`$.trigger.type\` in a flow) and its own delivery id (\`$.trigger.event_id\`) are, and whether the signature
covers the id; where a POST carrying several events keeps them; how long it waits for an answer and how it retries.
"Undocumented" where the sender's documentation does not say; "unconfirmed" where a figure comes from a secondary source.

${TABLE_START}
${sendersTable()}
${TABLE_END}

## Handshakes

What the receiver answers each sender that registers its URL with a handshake. No flow runs for a handshake; the
trigger's deliveries record it as \`status: "handshake"\`.

${HANDSHAKES_START}
${handshakesList()}
${HANDSHAKES_END}

## Event names

The event types each sender's deliveries carry, to pick a trigger's \`event_filter\` from (\`event_names\` in
\`GET /signature-services\`, and the console's picker): read from the package that publishes them where a well-kept one
does (\`npm run docs:event-names\` keeps them in step with its version), otherwise the examples its documentation shows.

${eventNamesList()}
`;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  writeFileSync(GUIDE, sendersGuide());
  console.log(`docs/senders.md: written (${NAMED_SENDERS} senders and custom HMAC)`);
}
