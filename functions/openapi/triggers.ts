import * as z from 'zod/mini';
import { API_KEY_PATTERN, ID_PATTERN } from '../domain/api-keys.js';
import { EXECUTION_ID } from '../domain/flows/execution-id.js';
import { MAX_REPLAYS_PER_CALL } from '../domain/flows/execution-filter.js';
import { EXECUTION_STATUSES } from '../domain/flows/ports.js';
import { FLOW_NAME } from '../domain/flows/flow-name.js';
import { MAX_TRIGGER_DESCRIPTION_CHARACTERS, MAX_TRIGGER_NAME_CHARACTERS, triggerSchemas } from '../domain/triggers/trigger-requests.js';
import { HANDSHAKE_WORDS } from '../domain/webhooks/handshake-words.js';
import { MAX_BATCH_ELEMENTS } from '../domain/webhooks/batch-elements.js';
import { MAX_REFUSED_RECORDS_PER_MINUTE } from '../domain/webhooks/refusal-budget.js';
import { SENDERS } from '../domain/webhooks/senders/catalog.js';
import { SENDER_CATEGORIES } from '../domain/webhooks/senders/catalog-types.js';
import { WEBHOOK_ID } from '../domain/triggers/webhook-url.js';
import { descriptions, jsonSchemaOf } from './from-zod.js';
import { dataBody, errorBody, named, pageBody, pageParameters, type OperationDoc, type OperationDocs, type Schema } from './types.js';

const schemas = triggerSchemas();
const { settings, signature, custom, sourceIp, rotateSigningSecret, regenerateApiKey, acknowledgeResponse } = schemas;
const described = descriptions();
const describeEach = <S extends Record<string, z.core.$ZodType>>(schemas: S, texts: Record<keyof S, { description: string }>) => {
  for (const name of Object.keys(schemas) as (keyof S)[]) described.add(schemas[name]!, texts[name]);
};

// Every field of `custom` and of the settings must be described: a new one without words fails to compile.
describeEach(custom.shape, {
  algorithm: { description: 'The HMAC\'s hash.' },
  header: { description: 'Header carrying the signature (stored lower-case; matched case-insensitively).' },
  encoding: { description: 'How the digest is written.' },
  prefix: { description: 'Text before the digest, e.g. `sha256=`; required in the header when set.' },
  timestamp_header: {
    description: 'When set, this header carries unix seconds, the signed content is `<timestamp>.<raw body>`, and the timestamp must be within 5 minutes of now, either way.',
  },
});
described.add(custom, { description: 'Only with service `custom`, which requires it.' });

described.add(signature.shape.verify_token, {
  description: 'meta: required, and for meta only: the verify token you type into Meta\'s dashboard, which its subscription handshake (GET `hub.verify_token`) must carry. Kept only as a hash and never returned. The app secret is never taken in its place (a trigger without one is 400 `validation_error`; one stored before it was required refuses the handshake): a token Meta sends in a URL must not be the key its deliveries are signed with.',
});
described.add(signature.shape.handshake_window_seconds, {
  description:
    'asana and notion only: how long, in seconds (60 to 3600, default 600), the trigger takes the secret their handshake hands over, counted from when the signature was set without a secret or from `POST /triggers/{id}/await-handshake`. ' +
    'The handover is unsigned, so anyone with the URL could send one: outside the window it is refused (401 `invalid_signature`, recorded as refused), and so is any after the first.',
});
described.add(signature.shape.secret, {
  description:
    'What the sender\'s dashboard shows (`GET /signature-services` says what, per sender): a signing secret (Twilio: the auth token; standard_webhooks: `whsec_<base64>` of at least 24 bytes), a public key, a token, or `username:password`. ' +
    'Required, except for asana and notion, which hand theirs over in their handshake: such a trigger refuses every delivery until then. A secret that could never verify its sender is 400 with a `message` saying the form expected.',
});

describeEach(settings, {
  name: {
    description:
      `What the owner calls the trigger, so that several triggers of one flow can be told apart: 1 to ${MAX_TRIGGER_NAME_CHARACTERS} characters ` +
      'of one line, not blank. Absent or `null`: none of its own, and the trigger is shown with its flow\'s name (`name_is_default`). Names need not be unique.',
  },
  description: { description: `Free text, at most ${MAX_TRIGGER_DESCRIPTION_CHARACTERS} characters (tab and line breaks allowed, other control characters not); \`null\` for none.` },
  flow: {
    description: 'The flow\'s name: a definition `<flow>.asl.json` in the flows folder. An unknown or malformed name is 400.',
  },
  response_mode: {
    description: '`acknowledge`: answer 200 accepted once the event is queued. `wait`: run the flow while the sender waits and answer with its output (flows under about 5 s).',
  },
  event_filter: {
    description: 'Event types that run the flow; `[]` runs every event. A trailing `*` matches a prefix (`customer.*`). While set, an event of another type, or without a type, is answered 200 ignored.',
  },
  api_key_enabled: {
    description: 'Require an API key at the webhook URL. Turning it on generates a key, returned once as `api_key` in that response; turning it off discards the key.',
  },
  signature: {
    description:
      'How deliveries are signed; `null` (default) for no signature check. The secret is stored encrypted and is never returned or logged. ' +
      '`service` names the sender, and each is verified the way it signs (HMAC over the content it signs, Ed25519, ECDSA, an X.509 certificate, a JWT, a static token or Basic credentials); ' +
      '`secret` is what the sender\'s dashboard shows. `GET /signature-services` lists each with its docs and what to paste. Senders: ' +
      SENDERS.map((row) => `${row.id} (${row.name})`).join(', ') + '. ' +
      '`custom` takes `custom`: a header, prefix and timestamp header, or the assembled-content HMAC (`algorithm`, `key`, `content`, `signature`, `encoding`, `timestamp`) that describes any HMAC sender. ' +
      'Its `content` must sign the body (a `body` part, or `json` or `form` fields), and a `timestamp` only what the content signs (a `timestamp` part, or the header, field or body it is read from): ' +
      '400 `validation_error` naming the field otherwise.',
  },
  allowed_source_ips: {
    description:
      'The addresses deliveries may come from: 1 to 50 IPv4 or IPv6 addresses or CIDR ranges (`203.0.113.7`, `192.0.2.0/24`, `2001:db8::/32`); ' +
      '`null` (default) for any address. A delivery from any other address is answered 403 `ip_not_allowed`. The address is the one API Gateway ' +
      'saw the connection come from (`requestContext.http.sourceIp`), never `X-Forwarded-For`: behind a proxy or CDN that is the proxy\'s address.',
  },
  enabled: { description: 'A disabled trigger\'s URL answers 404, like an unknown one.' },
  deduplicate: {
    description:
      'Run the flow at most once per event within 24 hours; later deliveries of the event answer 200 duplicate. For a signed trigger the event is known by ' +
      'signed material only: the sender\'s own id where it signs one (Stripe\'s `id`, `svix-id`, `webhook-id`, …), else the signed content without its timestamp; ' +
      'never by an unsigned header such as `Idempotency-Key`. Whatever this says, a sender that signs a timestamp has an exact replay of its signed content ' +
      'answered duplicate within twice its tolerance, and Mailgun\'s token and PayPal\'s transmission id are accepted once.',
  },
  split_batches: {
    description:
      'For a sender whose one POST carries several events (the senders listed with `batch` by `GET /signature-services`: SendGrid, HubSpot, Okta, ' +
      'Microsoft Graph, Meta, Asana, Adyen): `true` (default) makes each element an event of its own, with its own execution, `type`, `event_id`, ' +
      'event filter decision, deduplication and flow run; its flow input is `{"trigger": {"event": <element>, "type", "event_id", "batch": ' +
      '{"request_id", "index", "size"}, "headers", …}}`, and the POST is stored once (its elements\' executions show it). The sender gets one answer: ' +
      'acknowledge mode 200 `{"status": "accepted", "request_id", "events": [{"status", "event_id"}, …]}` once every element is queued (or ' +
      '`acknowledge_response`); wait mode the flows\' outputs as a JSON array in element order (an element ignored or a duplicate as ' +
      `\`{"status", "event_id"}\`), or the first failure's error. A POST of more than ${MAX_BATCH_ELEMENTS} elements is refused 413 \`payload_too_large\` ` +
      '(recorded, nothing run): no batching sender documents a larger batch, and each element is written and queued before the sender is answered. ' +
      '`false`: the whole POST is one event, as for any other sender, whatever its size. Other senders\' deliveries are never split.',
  },
  answer_from_listener: {
    description:
      'Wait mode only (400 `validation_error` otherwise): a sender gets the answer of a connected listener (`flowgate listen`, the WebSocket listen endpoint) ' +
      'instead of the flow\'s. The flow still runs and its run is recorded as always; its answer is the sender\'s when no listener of the trigger is connected, ' +
      'when every listener failed to reach its local server, or when none answered within the wait budget. For development triggers; default `false`.',
  },
  acknowledge_response: {
    description:
      'The fixed answer to the deliveries the receiver answers itself with a 2xx: accepted (acknowledge mode), ignored (event filter) and duplicate. ' +
      '`null` or absent (default): the receiver\'s JSON answers (`{"status": "accepted", "event_id": …}` and the like). Some senders need their own: ' +
      'Adyen `{"status_code": 200, "content_type": "text/plain", "body": "[accepted]"}`, Discord webhook events 204 with no body, a Slack slash command an empty 200. ' +
      'A wait-mode flow\'s own answer is the flow\'s, never this.',
  },
});
describeEach(acknowledgeResponse.shape, {
  status_code: { description: 'From 200 to 299; 204 and 205 carry no `body` and need no `content_type` (`{"status_code": 204}`).' },
  content_type: {
    description: 'The `Content-Type` of the answer, a media type with optional parameters (`text/plain; charset=utf-8`): JSON (`application/json`, `application/…+json`), ' +
      '`text/plain` or XML (`application/xml`, `text/xml`); anything else, HTML above all, is 400 `validation_error`. Required but for 204 and 205.',
  },
  body: { description: 'At most 1,000 characters, sent as UTF-8; absent, empty.' },
});

described.add(sourceIp, {
  description: 'An IPv4 or IPv6 address, or one with a prefix length (CIDR; up to 32 or 128). No IPv6 zone (`%eth0`).',
});

/** The trigger's signature as its owner reads it back: the same scheme, never the secret. */
const publicSignature = z.nullable(z.object({ service: signature.shape.service, custom: signature.shape.custom, handshake_window_seconds: signature.shape.handshake_window_seconds }));
described.add(publicSignature, { description: 'The signature scheme, without its secret.' });
const publicSignatureSchema = (): Schema => {
  const schema = jsonSchemaOf(publicSignature, described);
  return {
    ...schema,
    required: [...(schema.required as string[]), 'previous_secret_expires_at'],
    properties: {
      ...(schema.properties as Record<string, Schema>),
      verification_token: {
        type: 'string',
        readOnly: true,
        description: 'notion only, in the first read of the trigger after Notion\'s verification handshake: the `verification_token` Notion sent, which is the signing secret and which Notion asks you to paste back. Shown once.',
      },
      previous_secret_expires_at: {
        type: ['string', 'null'],
        format: 'date-time',
        readOnly: true,
        description: 'While the secret replaced by `rotate-signing-secret` is still accepted, when it stops; otherwise `null`.',
      },
      handshake_awaited_until: {
        type: ['string', 'null'],
        format: 'date-time',
        readOnly: true,
        description: 'asana and notion: while the trigger has no secret, until when its handshake may hand one over (past: none is taken until `await-handshake`); `null` once it has one.',
      },
      handed_over_at: {
        type: ['string', 'null'],
        format: 'date-time',
        readOnly: true,
        description: 'asana and notion: when a handshake handed the secret over; `null` if none has. Check it, and `handed_over_source_ip`, against when you created the subscription: a handover you do not recognise is rejected with `await-handshake`.',
      },
      handed_over_source_ip: {
        type: ['string', 'null'],
        readOnly: true,
        description: 'asana and notion: the address the handover came from (as API Gateway saw it); never the secret.',
      },
    },
  };
};

const OVERLAP_BOUNDS = 'From 0 to 604800 (7 days).';
described.add(rotateSigningSecret.shape.previous_secret_expires_in_seconds, {
  description: `How long deliveries signed with the replaced secret are still accepted, in seconds (default 86400: 24 hours, as Stripe and Svix overlap). 0 stops it at once. ${OVERLAP_BOUNDS}`,
});
described.add(regenerateApiKey.shape.previous_key_expires_in_seconds, {
  description: `How long the replaced key still works, in seconds (default 0: it stops at once, within the receiver cache\'s TTL). ${OVERLAP_BOUNDS}`,
});

const createBody = jsonSchemaOf(schemas.create, described);
// parseTriggerPatch refuses an empty object after parsing, which zod's JSON Schema cannot carry.
const patchBody: Schema = { ...jsonSchemaOf(schemas.patch, described), minProperties: 1 };
const settingsProperties = createBody.properties as Record<keyof typeof settings, Schema>;

const TRIGGER: Schema = {
  type: 'object',
  required: [
    'id', 'webhook_id', 'url', 'name', 'name_is_default', 'description', 'flow', 'response_mode', 'event_filter', 'api_key_enabled', 'previous_api_key_expires_at', 'signature',
    'allowed_source_ips', 'enabled', 'deduplicate', 'split_batches', 'created_at', 'updated_at',
  ],
  description: 'A trigger as its owner sees it: never a signing secret, an API key or a key hash.',
  properties: {
    id: { type: 'string', pattern: ID_PATTERN.source, readOnly: true },
    webhook_id: { type: 'string', pattern: WEBHOOK_ID.source, readOnly: true, description: '192 random bits, base64url: the URL is unguessable.' },
    url: {
      type: 'string',
      format: 'uri',
      readOnly: true,
      description: 'Where the sender is pointed: `<receiver function URL><webhook_id>` (the receiver\'s Lambda function URL, no API Gateway request), or `<PUBLIC_WEBHOOK_BASE_URL>/<webhook_id>` behind a custom domain, or the API\'s `/webhooks/<webhook_id>` in a deployment without the function URL (context `webhookFunctionUrl` false). The API\'s `/webhooks/<webhook_id>` answers the trigger in every deployment.',
    },
    name: {
      type: 'string', minLength: 1, maxLength: MAX_TRIGGER_NAME_CHARACTERS,
      description: 'The trigger\'s own name, or its flow\'s when it has none (`name_is_default`; triggers created before names had none).',
    },
    name_is_default: { type: 'boolean', readOnly: true, description: '`true` when `name` is the flow\'s name because the trigger has none of its own (it then follows the flow).' },
    description: settingsProperties.description,
    flow: settingsProperties.flow,
    response_mode: settingsProperties.response_mode,
    event_filter: settingsProperties.event_filter,
    api_key_enabled: settingsProperties.api_key_enabled,
    previous_api_key_expires_at: {
      type: ['string', 'null'],
      format: 'date-time',
      readOnly: true,
      description: 'While the key replaced by `regenerate-api-key` with an overlap still works, when it stops; otherwise `null`.',
    },
    signature: publicSignatureSchema(),
    allowed_source_ips: settingsProperties.allowed_source_ips,
    enabled: settingsProperties.enabled,
    deduplicate: settingsProperties.deduplicate,
    split_batches: settingsProperties.split_batches,
    answer_from_listener: settingsProperties.answer_from_listener,
    created_at: { type: 'string', format: 'date-time', readOnly: true },
    updated_at: { type: 'string', format: 'date-time', readOnly: true },
  },
};

const apiKeyOnce: Schema = {
  type: 'string',
  pattern: API_KEY_PATTERN.source,
  description: 'The webhook URL\'s API key (256 random bits), present only in the response that generated it. Stored only as a hash: it cannot be shown again.',
};
const trigger = named('Trigger', TRIGGER);
const TRIGGER_WITH_KEY: Schema = { ...TRIGGER, properties: { ...(TRIGGER.properties as Record<string, Schema>), api_key: apiKeyOnce } };
const triggerWithKey = named('TriggerWithKey', TRIGGER_WITH_KEY);

const isoTime = { type: 'string', format: 'date-time' } as const;

/** Where a sender puts a value in its request (the catalog's `RequestValue`): a header, or a member of the JSON body. */
const requestValue: Schema = {
  oneOf: [
    { type: 'object', required: ['from', 'name'], properties: { from: { const: 'header' }, name: { type: 'string', description: 'Lower case.' } } },
    { type: 'object', required: ['from', 'path'], properties: { from: { const: 'json' }, path: { type: 'array', items: { type: 'string' }, description: 'Property names from the top of the body (for a form body, one field\'s name).' } } },
  ],
};

const attempt: Schema = {
  type: 'object',
  required: ['attempt', 'started_at', 'status'],
  properties: {
    attempt: { type: 'integer', minimum: 1 },
    started_at: isoTime,
    finished_at: { ...isoTime, description: 'Absent while the run is under way.' },
    status: { type: 'string', enum: ['running', 'succeeded', 'failed', 'timed_out'] },
    error: { type: 'string', description: 'The flow\'s error name, when the run failed.' },
  },
};

const EXECUTION: Schema = {
  type: 'object',
  required: ['execution_id', 'event_id', 'received_at', 'status', 'attempts', 'timeline'],
  properties: {
    execution_id: {
      type: 'string', pattern: EXECUTION_ID.source,
      description: 'This delivery\'s id: it starts with the received time (so ids sort as deliveries arrived) and names the record in `GET /triggers/{id}/executions/{execution_id}`.',
    },
    event_id: { type: 'string', description: 'The sender\'s delivery id, or a generated one. A replay keeps the id of the execution it replays.' },
    received_at: { ...isoTime, description: 'When the receiver got the delivery (for a replay: when it was replayed).' },
    type: { type: 'string', description: 'The event type, when the delivery had one.' },
    status: {
      type: 'string', enum: [...EXECUTION_STATUSES],
      description: '`refused`: the receiver answered a 4xx and ran no flow; `error` is the code it answered (at most 60 refused deliveries per trigger per minute are recorded).',
    },
    output: { description: 'The flow\'s output (JSON), once it succeeded.' },
    error: {
      type: 'string',
      description: 'Refused: the error code answered (`unauthorized`, `invalid_signature`, `ip_not_allowed`, `payload_too_large`, `unsupported_media_type`, `validation_error`, `method_not_allowed`). Failed: the flow\'s error name (also while a failed run waits for its retry).',
    },
    attempts: { type: 'integer', minimum: 0, description: 'Runs so far; a run being retried shows `queued` or `running` until its last attempt.' },
    next_attempt_at: {
      ...isoTime,
      description: 'Acknowledge mode: when a failed run will be retried. Retries back off from `FLOW_RETRY_BASE_SECONDS` (default 15 s), doubling each time; after the fifth failed run the event goes to the dead-letter queue and this field is gone.',
    },
    timeline: { type: 'array', items: attempt, description: 'Every run of the flow for this delivery, oldest first.' },
    replay_of: { type: 'string', pattern: EXECUTION_ID.source, description: 'The execution this one replays.' },
    unverified: {
      const: true,
      description: 'Refused before its sender was verified (a wrong signature or API key, an address not allowed, …): its `type` and `event_id` were read from a body anyone could have written, and are not the sender\'s word.',
    },
    batch: {
      type: 'object',
      required: ['request_id', 'index', 'size'],
      description: 'The event is one element of a POST that carried several (a batching sender, `split_batches`), as the flow sees it in `$.trigger.batch`. ' +
        'The POST was stored once: this execution\'s `request` is the whole POST. A replay runs this element alone.',
      properties: {
        request_id: { type: 'string', pattern: EXECUTION_ID.source, description: 'The POST\'s id: shared by every element of it.' },
        index: { type: 'integer', minimum: 0, description: 'The element\'s place in the POST, from 0, in the sender\'s order.' },
        size: { type: 'integer', minimum: 1, description: 'How many events the POST carried.' },
      },
    },
    flow: { type: 'string', description: 'The flow that runs it (`GET /flows/{name}`): set when it was queued or run; absent on refused, ignored, duplicate and handshake deliveries, and on those recorded before flows were kept.' },
    forwarded: {
      type: 'array',
      description: 'What listeners\' local servers (`flowgate listen --forward-to`) answered when this delivery was forwarded to them, oldest first (at most 20). Recorded beside the flow\'s run, never in its place.',
      items: {
        type: 'object',
        required: ['at', 'listener'],
        properties: {
          at: { type: 'string', format: 'date-time' },
          listener: { type: 'string', description: 'The listener\'s connection id.' },
          status: { type: 'integer', minimum: 100, maximum: 599, description: 'The local server\'s HTTP status; absent when it could not be reached.' },
          ms: { type: 'integer', minimum: 0, description: 'From the listener receiving the delivery to its local server\'s answer.' },
          error: { type: 'string', description: 'Why the local server could not be reached.' },
          answered_sender: { const: true, description: 'The sender got this answer (`answer_from_listener`).' },
        },
      },
    },
    reply: {
      type: 'object',
      required: ['status', 'bytes'],
      description: 'Wait mode: what the sender was answered when the flow shaped its reply (an output of the form `{"statusCode", "headers", "body", "isBase64Encoded"}`); the body is the `output`.',
      properties: {
        status: { type: 'integer', minimum: 200, maximum: 599 },
        content_type: { type: 'string' },
        bytes: { type: 'integer', minimum: 0, description: 'The body\'s size as sent (decoded when base64).' },
      },
    },
  },
};

const storedRequest: Schema = {
  type: 'object',
  required: ['method', 'headers', 'query', 'body_bytes'],
  description:
    'The request as the receiver got it. The trigger\'s API key (`x-api-key`, the `api_key` query parameter), `authorization`, `proxy-authorization` ' +
    'and `cookie` are replaced by `"[redacted]"` before it is stored; signature headers are kept. Stored encrypted at rest (the table\'s KMS key), expiring with the execution.',
  properties: {
    method: { type: 'string' },
    headers: { type: 'object', additionalProperties: { type: 'string' }, description: 'Header names lower-case.' },
    query: { type: 'object', additionalProperties: { type: 'string' } },
    source_ip: { type: 'string', description: 'The address API Gateway saw the request come from.' },
    body: { type: 'string', description: 'The raw body: as text, or base64 when it is not valid UTF-8. Absent when the body was over `WEBHOOK_MAX_BODY_BYTES` (refused unread).' },
    body_encoding: { type: 'string', enum: ['utf8', 'base64'] },
    body_bytes: { type: 'integer', minimum: 0, description: 'The body\'s size as received.' },
  },
};
/** A delivery to a trigger's URL (an execution): what the list shows, and with its stored request what a read of one shows. */
const execution = named('Delivery', EXECUTION);
const executionDetail = named('DeliveryDetail', { ...EXECUTION, properties: { ...(EXECUTION.properties as Record<string, Schema>), request: storedRequest } });

const filterParameters = [
  { name: 'status', in: 'query' as const, description: `One or several statuses, comma-separated (${EXECUTION_STATUSES.join(', ')}).`, schema: { type: 'string' } },
  { name: 'type', in: 'query' as const, description: 'The event type: exact, or a prefix ending in `*` (`invoice.*`), as in event filters.', schema: { type: 'string', maxLength: 256 } },
  { name: 'event_id', in: 'query' as const, description: 'Deliveries of this event: the original, its duplicates and replays.', schema: { type: 'string', maxLength: 256 } },
  { name: 'since', in: 'query' as const, description: 'Received at or after (ISO 8601 date or date-time).', schema: { type: 'string' } },
  { name: 'until', in: 'query' as const, description: 'Received before (ISO 8601).', schema: { type: 'string' } },
];
const FILTER_COST =
  'What a page costs: a trigger\'s records are spread over 8 partitions by a hash of the execution id; a page queries each partition for its time range ' +
  '(`since`/`until` are key conditions, read nothing outside the range) and merges them newest first, at most 4 rounds of 8 Queries each reading at most `limit` records. ' +
  '`status` and `type` are filters on what those Queries read: a filter that matches little can return a short (even empty) page with a `next_cursor`; keep following it. ' +
  '`event_id` reads one partition keyed by the event (one Query, then one BatchGetItem of the records it names).';
const invalidFilter = errorBody(
  'validation_error: `limit` not an integer from 1 to 500; a malformed cursor, or one made with other filters; an unknown `status`; `type` empty, over 256 characters or with a `*` that is not last; `since`/`until` not ISO 8601, or `since` not before `until`.',
);
const executionNotFound = errorBody('not_found: no such trigger in the caller\'s account, or no such execution of it (also once it expired, after 7 days).');
const notReplayable = errorBody(
  'not_replayable: the request\'s body was not stored (it was over the size limit), or it is not one the receiver accepts (content type or body refused), or the flow input would exceed 256 KiB.',
);
const replayed: Schema = named('Replay', {
  type: 'object',
  required: ['execution_id', 'replay_of'],
  properties: { execution_id: { type: 'string', pattern: EXECUTION_ID.source, description: 'The new execution.' }, replay_of: { type: 'string', pattern: EXECUTION_ID.source } },
});
const REPLAY =
  'The stored request runs again through the trigger\'s *current* flow as a new execution with the same `event_id` and `replay_of` set, always queued (as in acknowledge mode) ' +
  'whatever the trigger\'s response mode; a replay that fails is retried and dead-lettered like any delivery. It is an operator\'s action: the signature, API key, source address ' +
  'and event filter are not checked again, and deduplication does not hold it back. A refused delivery can be replayed too when its body was stored. The flow sees the stored ' +
  'headers (those that were redacted left out) and the original `received_at`.';
// Inline, not named: api-smart-diff 1.0.6 normalises an `anyOf` behind a `$ref` otherwise than inline (a spurious break).
const bulkReplayBody: Schema = {
  type: 'object',
  additionalProperties: false,
  description: 'The list\'s filters (at least one of `status` and `since`), a page size and the cursor of the previous call.',
  properties: {
    status: { type: 'array', minItems: 1, items: { type: 'string', enum: [...EXECUTION_STATUSES] } },
    type: { type: 'string', minLength: 1, maxLength: 256 },
    event_id: { type: 'string', minLength: 1, maxLength: 256 },
    since: { type: 'string', description: 'ISO 8601' },
    until: { type: 'string', description: 'ISO 8601' },
    limit: { type: 'integer', minimum: 1, maximum: MAX_REPLAYS_PER_CALL, default: MAX_REPLAYS_PER_CALL },
    cursor: { type: 'string', description: 'The `next_cursor` of the previous call.' },
  },
  anyOf: [{ properties: { status: {} }, required: ['status'] }, { properties: { since: {} }, required: ['since'] }],
};

const jsonBody = (schema: Schema) => ({ required: true, content: { 'application/json': schema } });
const notFound = errorBody('not_found: no trigger with this id in the caller\'s account (another account\'s triggers are not found either).');
const unsupportedMediaType = errorBody('unsupported_media_type: the body must be sent as `application/json`.');
const invalidSettings = errorBody(
  'validation_error: body not a JSON object; an unknown or read-only field; `flow` missing, malformed or not a deployed flow; ' +
  '`response_mode` not `acknowledge`/`wait`; an `event_filter` entry empty, over 256 characters or with a `*` that is not trailing; ' +
  '`signature` without `service` or `secret`, an unknown service, `custom` settings missing for (or given to a service other than) `custom`, ' +
  'or a standard_webhooks secret that is not `whsec_<base64>` of at least 24 bytes; `allowed_source_ips` empty, over 50 entries, or with an entry ' +
  'that is not an IPv4/IPv6 address or CIDR range.',
);

const CACHE =
  'Changes reach the webhook URL as follows: a warm receiver may accept deliveries using its cached copy of the trigger for up to ' +
  '`TRIGGER_CACHE_TTL_MS` (default 5000 ms), so disabling, deleting, a new URL, a new API key or a new secret, or a narrower ' +
  '`allowed_source_ips` shuts out old credentials and addresses within that time. Changes that let deliveries in (enabling, a new key or ' +
  'secret, protection off, an address allowed) take effect at once: a refusal is always checked against the stored trigger. The end of ' +
  'an old secret\'s or key\'s overlap does not wait for the cache: the receiver compares its time with its own clock on every delivery.';

/** One line per handshake the receiver answers, from the catalog rows that name one. */
const HANDSHAKE_LINES = SENDERS.filter((row) => row.handshake_answer !== undefined)
  .map((row) => `${row.id}: ${HANDSHAKE_WORDS[row.handshake_answer!]}`).join('; ') + '.';

const RECEIVER_ORDER =
  'The same receiver answers at a trigger\'s `url` (the receiver\'s function URL, `<function URL><webhook_id>`, a host of its own that this document does not list) and here. ' +
  'No gateway authentication: the receiver makes its own checks, in this order, and answers the first that fails. ' +
  '(1) Unknown or disabled `webhook_id`: 404; then any method but POST: 405 with `Allow: POST`, but for the GET handshakes of the trigger\'s sender (below). ' +
  '(2) Body over `WEBHOOK_MAX_BODY_BYTES` (default 1,000,000 bytes; at most 1,037,653, what always fits Lambda\'s 6 MB invocation): 413. ' +
  '(3) Source address, when `allowed_source_ips` is set: the address API Gateway saw (`requestContext.http.sourceIp`; `X-Forwarded-For` is ignored) must be in one of its ranges, else 403 `ip_not_allowed`. ' +
  '(4) API key, when enabled: the `api_key` query parameter or the `X-Api-Key` header (the query parameter wins when both are sent), compared in constant time; the key replaced by `regenerate-api-key` also works until `previous_api_key_expires_at`; missing or wrong: 401 `unauthorized`. ' +
  '(5) Signature, when configured: verified over the exact bytes received, in constant time, with the trigger\'s secret or, until `signature.previous_secret_expires_at`, the secret it replaced; missing, malformed, wrong, by an expired secret, or outside the timestamp tolerance: 401 `invalid_signature`. ' +
  'A signed URL (Twilio, Square, HubSpot) is checked as the URL of the door the request came through (under `PUBLIC_WEBHOOK_BASE_URL` when set; else the function URL, made from the id AWS routed it by, or the API\'s own URL) with the query as sent, never as rebuilt from `Host` or `X-Forwarded-*`, which the caller writes. ' +
  '(6) Content type `application/json`, `application/x-www-form-urlencoded` or `multipart/form-data` (parameters such as charset allowed), else 415; a body that does not parse as its type, is not UTF-8, or is JSON nested deeper than 256 levels: 400. ' +
  '(7) Handshakes, answered by the receiver for a trigger of that sender only, never running the flow, recorded as `handshake` deliveries (its `type` the kind): ' +
  HANDSHAKE_LINES +
  ' A trigger without a signature answers Slack\'s challenge, as it always did. Unsigned handshakes (the GETs, Graph\'s validation, WooCommerce\'s ping) come before the signature check (5); Okta\'s GET and the signed POSTs after it. ' +
  '(8) Event filter: an unlisted type, or none while a filter is set, is 200 ignored and runs no flow. ' +
  '(9) Flow input size: the flow input described below must fit Step Functions\' 256 KiB (262,144 bytes of JSON), else 413 `payload_too_large` in both response modes, because such a flow could never start. ' +
  'Top-level keys of a JSON object body are copied into the input beside `event`, so a JSON body counts about twice: keep JSON bodies under about 128 KiB. ' +
  'Only then does the flow start. Every delivery past check (1) is recorded as an execution with its request (secrets redacted): refused ones (4xx) as `refused` with the code answered, at most 60 per trigger per minute (the rest are only counted, metric `WebhookRefusalsNotRecorded`); ignored and duplicate ones too. ' +
  'The flow\'s input is `{"trigger": {headers, event, type?, data?, webhook_id, received_at, event_id, ...top-level JSON keys}}`: header names lower-case, ' +
  'with `X-Api-Key` withheld so the trigger\'s key never reaches flow inputs or logs (nor does the `api_key` query parameter: the query is not passed), ' +
  'and so are `Authorization`, `Proxy-Authorization`, `Cookie` and each sender\'s secret in clear (GitLab\'s and Telegram\'s token headers, the header an okta or bigcommerce secret names, Asana\'s `X-Hook-Secret`); ' +
  'a secret JSON member (Graph\'s `clientState`, Notion\'s `verification_token`) reads `[redacted]` in `event`. A stored request shows `[redacted]` in each of these places (Meta\'s `hub.verify_token` too); ' +
  '`event` the parsed body (multipart files as `{filename, content_type, size, content_base64}`); top-level keys of a JSON object body are copied under ' +
  '`trigger` but never over the names above, nor `__proto__`, `constructor` or `prototype`. ' +
  '`event_id` is the sender\'s delivery id (Stripe body `id`, `X-GitHub-Delivery`, Slack `event_id`, `X-Shopify-Webhook-Id`, `webhook-id`, ' +
  '`I-Twilio-Idempotency-Token`; without a configured service the first present, then `Idempotency-Key`), else generated. ' + CACHE;

const header = (name: string, description: string) => ({ name, in: 'header' as const, description, schema: { type: 'string' } });

const anyJson: Schema = { description: 'Any JSON value (an object for most senders).' };
const formFields: Schema = {
  type: 'object',
  additionalProperties: { oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }] },
  description: 'Form fields; a repeated name becomes an array.',
};
const multipartFields: Schema = {
  type: 'object',
  description: 'Fields and files; the flow sees each file as `{filename, content_type, size, content_base64}`.',
  additionalProperties: true,
};

// anyOf, not oneOf: a wait-mode flow's output is any JSON, so it can look like any of the receiver's own answers.
const webhookOk: Schema = {
  anyOf: [
    {
      title: 'accepted',
      type: 'object',
      required: ['status', 'event_id'],
      properties: { status: { const: 'accepted' }, event_id: { type: 'string' } },
      description: 'Acknowledge mode: the event is stored on the queue (never answered before), and the flow will run.',
    },
    {
      title: 'ignored',
      type: 'object',
      required: ['status', 'event_id', 'reason'],
      properties: { status: { const: 'ignored' }, event_id: { type: 'string' }, reason: { type: 'string', description: 'Why, e.g. the event type matches none of `event_filter`.' } },
      description: 'Filtered out by `event_filter`; no flow runs.',
    },
    {
      title: 'duplicate',
      type: 'object',
      required: ['status'],
      properties: { status: { const: 'duplicate' } },
      description: 'With `deduplicate`, this event already ran within 24 hours; or a replay of signed content or a single-use id already seen (see `deduplicate`); no flow runs.',
    },
    {
      title: 'challenge',
      type: 'object',
      required: ['challenge'],
      properties: { challenge: { type: 'string' } },
      description: 'Slack URL verification, echoed back; no flow runs and no execution is recorded.',
    },
    { title: 'flow output', description: 'Wait mode: the flow\'s output, as the whole JSON body.' },
  ],
};

const receiveWebhook: OperationDoc = {
  description: RECEIVER_ORDER,
  parameters: [
    { name: 'api_key', in: 'query', description: 'The trigger\'s API key, when `api_key_enabled` (or send `X-Api-Key`).', schema: { type: 'string' } },
    header('X-Api-Key', 'The trigger\'s API key, when `api_key_enabled` (or use the `api_key` query parameter). Withheld from the flow\'s headers.'),
    header('Stripe-Signature', 'stripe: `t=<unix>,v1=<hex>[,v1=<hex>...]`'),
    header('X-Hub-Signature-256', 'github: `sha256=<hex>`'),
    header('X-Slack-Signature', 'slack: `v0=<hex>`, with X-Slack-Request-Timestamp'),
    header('X-Slack-Request-Timestamp', 'slack: unix seconds, within 300 s'),
    header('X-Shopify-Hmac-Sha256', 'shopify: `<base64>`'),
    header('X-Twilio-Signature', 'twilio: `<base64>` HMAC-SHA1 of the URL and sorted form parameters'),
    header('webhook-id', 'standard_webhooks: the message id (also the event_id)'),
    header('webhook-timestamp', 'standard_webhooks: unix seconds, within 300 s'),
    header('webhook-signature', 'standard_webhooks: `v1,<base64>`, several separated by spaces'),
  ],
  requestBody: {
    required: true,
    content: { 'application/json': anyJson, 'application/x-www-form-urlencoded': formFields, 'multipart/form-data': multipartFields },
  },
  responses: {
    '200': {
      description:
        'accepted (acknowledge mode), ignored (event filter), duplicate (deduplicate), a Slack challenge, or the flow\'s output (wait mode) as JSON. ' +
        'A trigger\'s `acknowledge_response` replaces the first three with its fixed answer (any 2xx, its own content type). ' +
        'Every answer of the receiver, refusals included, carries `Content-Security-Policy: sandbox; default-src \'none\'` and `X-Content-Type-Options: nosniff`. ' +
        'A wait-mode flow shapes its own answer when its output has the form of an API Gateway Lambda proxy response, `{"statusCode": 200-599, "headers": {…}, "body": "…", "isBase64Encoded": false}` ' +
        '(nothing else in the object): that status, those headers and that body are sent as they are (base64-decoded when `isBase64Encoded`), e.g. TwiML with `content-type: text/xml` for Twilio. ' +
        'Rules: at most 50 headers, names HTTP tokens, values text without control characters (at most 4096 characters); no `Content-Length`, `Transfer-Encoding`, `Connection` or other hop-by-hop header; ' +
        'no `Set-Cookie` (a sender keeps no cookies, and the gateway\'s domain is the console\'s); `body` a string (base64 when `isBase64Encoded`), none with 204 or 304. A reply that breaks a rule is answered 502 `flow_failed` and its reason is on the execution\'s timeline.',
      content: { 'application/json': webhookOk, 'text/plain': { type: 'string' }, 'text/xml': { type: 'string' }, 'application/octet-stream': { type: 'string', format: 'binary' } },
    },
    '400': errorBody('validation_error: the body does not parse as its content type, is not UTF-8, or is JSON nested deeper than 256 levels.'),
    '401': errorBody('`unauthorized`: API key missing or wrong. `invalid_signature`: signature missing, malformed, wrong, made with a secret whose overlap has ended, or its timestamp outside the tolerance.'),
    '403': errorBody('ip_not_allowed: the trigger has `allowed_source_ips` and the address API Gateway saw is in none of them. Checked after the size and before the API key and signature.'),
    '404': errorBody('not_found: no enabled trigger has this webhook id (unknown, disabled, deleted, or replaced by regenerate-url). Answered for every method.'),
    '405': { ...errorBody('method_not_allowed: a known webhook id with a method other than POST.'), headers: { allow: { type: 'string', const: 'POST' } } },
    '413': errorBody(`payload_too_large: the body is over \`WEBHOOK_MAX_BODY_BYTES\` (default 1,000,000 bytes), checked before credentials; or, after the event filter, the flow input (\`{"trigger": …}\`, which holds a JSON body about twice) is over Step Functions' 256 KiB, in both response modes; or a batching sender's POST to a trigger that splits batches carries more than ${MAX_BATCH_ELEMENTS} elements (\`split_batches\`).`),
    '415': errorBody('unsupported_media_type: not JSON, urlencoded form or multipart form data. Checked after credentials.'),
    '502': errorBody('flow_failed: wait mode, the flow failed, or shaped a reply that breaks the rules above (the reason is on the execution\'s timeline).'),
    '503': errorBody('unavailable: acknowledge mode, the queue did not take the event (nothing was stored; retry), or the flow could not be started.'),
    '504': errorBody('flow_timeout: wait mode, the flow was still running after `WAIT_TIMEOUT_MS` (default 25 s), or 28 s after API Gateway received the request (a cold start counts), whichever came first, so this answer always arrives before API Gateway\'s own 30 s limit.'),
  },
};

export const triggersDocs: OperationDocs = {
  createTrigger: {
    description:
      'Creates a webhook trigger for one of the deployed flows and returns it with its unguessable `url`. Only `flow` is required. ' +
      'With `api_key_enabled`, the response carries `api_key`, shown this once.',
    requestBody: jsonBody(named('TriggerInput', createBody)),
    responses: {
      '201': dataBody('Created', triggerWithKey),
      '400': invalidSettings,
      '415': unsupportedMediaType,
    },
  },

  listFlows: {
    description: 'The names of the deployed flows, in name order: what `flow` may be when creating or changing a trigger. The same for every account.',
    responses: {
      '200': dataBody('The flows', { type: 'object', required: ['flows'], properties: { flows: { type: 'array', items: { type: 'string' } } } }),
    },
  },

  getFlow: {
    description:
      'One deployed flow: its `name` and its `definition`, the Amazon States Language object of its `<name>.asl.json` as the state machine was created from it, ' +
      'except that a function the flow calls is named by its placeholder (`"${Function.<name>}"`) rather than by the ARN the stack fills in. ' +
      'Flows are not secret: they are in the repository. The same for every account; the console draws its picture from it.',
    parameters: [{ name: 'name', in: 'path', description: 'A name `GET /flows` lists: 1 to 64 letters, digits, `-` or `_`.', schema: { type: 'string', pattern: FLOW_NAME.source } }],
    responses: {
      '200': dataBody('The flow', {
        type: 'object',
        required: ['name', 'definition', 'wait_limit_seconds'],
        properties: {
          name: { type: 'string' },
          wait_limit_seconds: {
            type: 'integer', minimum: 1,
            description: 'The longest a wait-mode delivery waits for this flow: the deployment\'s `WAIT_TIMEOUT_MS` (default 25 s), or the flow\'s own `TimeoutSeconds` when shorter. ' +
              'A sender whose `delivery_policy.timeout_seconds` (`GET /signature-services`) is shorter may give up first; the console warns of it.',
          },
          definition: {
            type: 'object',
            required: ['StartAt', 'States'],
            description: 'Amazon States Language (https://states-language.net/spec.html): `StartAt`, `States` and, when the file has them, `Comment`, `QueryLanguage`, `TimeoutSeconds`.',
            properties: { Comment: { type: 'string' }, StartAt: { type: 'string' }, States: { type: 'object', additionalProperties: { type: 'object' } } },
          },
        },
      }),
      '400': errorBody('validation_error: the name is not a flow name (1 to 64 letters, digits, `-` or `_`).'),
      '404': errorBody('not_found: no deployed flow has this name.'),
    },
  },

  listSignatureServices: {
    description:
      'The webhook senders a trigger can verify (`signature.service`), from the sender catalog, in its order: each with its name, group (`category`), ' +
      'its page on verifying webhooks, what to paste as `signature.secret` (`secret_label`, in the sender\'s own words), whether it has a handshake, ' +
      'and, where its signature leaves something unprotected (Mailgun\'s unsigned payload, PayPal\'s CRC32), what (`limits`). ' +
      '`left_out` names the senders the catalog knows but cannot verify, each with the reason. The same for every account.',
    responses: {
      '200': dataBody('The senders', {
        type: 'object',
        required: ['services', 'left_out'],
        properties: {
          services: {
            type: 'array',
            items: named('SignatureService', {
              type: 'object',
              required: ['id', 'name', 'category', 'docs_url', 'secret_label', 'handshake', 'needs_verify_token', 'event_type', 'delivery_id', 'batch', 'delivery_policy', 'event_names'],
              properties: {
                id: { type: 'string', enum: SENDERS.filter((row) => row.verification.primitive !== 'unsupported').map((row) => row.id) },
                name: { type: 'string' },
                category: { type: 'string', enum: [...SENDER_CATEGORIES] },
                docs_url: { type: 'string', format: 'uri' },
                secret_label: { type: 'string' },
                handshake: { type: 'boolean', description: 'The sender expects a handshake or a reply of its own.' },
                limits: { type: 'string', description: 'What the sender\'s signature leaves unprotected, and what the receiver does about it; absent when nothing.' },
                needs_verify_token: { type: 'boolean', description: 'A trigger of this sender needs `signature.verify_token`: the token its handshake carries, which the user chooses (meta).' },
                event_type: {
                  type: 'object',
                  description: 'Where the sender puts a delivery\'s event type, which `event_filter` matches and flows read as `$.trigger.type`: the first of `sources` present (a string of 1 to 256 characters). ' +
                    'No sources: the sender\'s deliveries carry no type, and `note` says what a filter can match instead (a trigger with a filter then ignores every delivery). A missing or malformed field never fails a delivery; the type is then absent.',
                  required: ['sources'],
                  properties: {
                    sources: {
                      type: 'array',
                      items: {
                        oneOf: [
                          ...(requestValue.oneOf as Schema[]),
                          {
                            type: 'object', required: ['from', 'among'],
                            description: 'A type that is a name, not a value (Telegram\'s Update): the first of `among` the JSON body holds as a top-level member.',
                            properties: { from: { const: 'json_key' }, among: { type: 'array', items: { type: 'string' }, minItems: 1 } },
                          },
                        ],
                      },
                    },
                    example: { type: 'string', description: 'One type as the sender writes it.' },
                    note: { type: 'string' },
                  },
                },
                delivery_id: {
                  description: 'Where the sender puts its own id of a delivery (`$.trigger.event_id`); null when it has none. `signed`: the sender\'s signature covers it, so a deduplicating trigger keys on it; unsigned, it is shown, never trusted.',
                  oneOf: [
                    { type: 'null' },
                    { allOf: [requestValue, { type: 'object', required: ['signed'], properties: { signed: { type: 'boolean' } } }] },
                  ],
                },
                batch: {
                  description: 'One POST carries several events (null: one event a POST). With the trigger\'s `split_batches` (default), each element of the list at `list` ' +
                    '(`[]`: the body is the array) is an event of its own: its `$.trigger.type` the first of `type` present in it, its `$.trigger.event_id` its `id` ' +
                    '(several paths joined with `:`; none: the element\'s SHA-256, base64url, so a retry keeps its id), deduplicated on that id when `signed`, else on the element\'s SHA-256. ' +
                    '`nested`: a list of lists (Meta\'s `entry[].changes[]`), each inner element given its outer element\'s `parent.fields` under `parent.as`. ' +
                    'A body without the list, or with an empty one, is one event as for other senders.',
                  oneOf: [
                    { type: 'null' },
                    {
                      type: 'object',
                      required: ['list', 'type'],
                      properties: {
                        list: { type: 'array', items: { type: 'string' } },
                        nested: {
                          type: 'object',
                          required: ['list', 'parent'],
                          properties: {
                            list: { type: 'array', items: { type: 'string' } },
                            parent: { type: 'object', required: ['as', 'fields'], properties: { as: { type: 'string' }, fields: { type: 'array', items: { type: 'string' } } } },
                          },
                        },
                        type: { type: 'array', items: { type: 'array', items: { type: 'string' } } },
                        id: {
                          type: 'object',
                          required: ['paths', 'signed'],
                          properties: { paths: { type: 'array', items: { type: 'array', items: { type: 'string' } } }, signed: { type: 'boolean' } },
                        },
                        note: { type: 'string' },
                      },
                    },
                  ],
                },
                delivery_policy: {
                  type: 'object',
                  description: 'How long the sender waits for an answer and how it retries, as its documentation says (null: it does not say). A wait-mode trigger whose flow may run longer ' +
                    'than `timeout_seconds` answers after the sender gave up: the sender counts the delivery failed and may send it again (the same `event_id` where it has one).',
                  required: ['timeout_seconds', 'retry_window_seconds', 'retries'],
                  properties: {
                    timeout_seconds: { type: ['integer', 'null'], minimum: 1, description: 'Seconds the sender waits for an answer; null: undocumented.' },
                    retry_window_seconds: { type: ['integer', 'null'], minimum: 0, description: 'Seconds after the first attempt within which it retries a failed delivery; 0: it never retries by itself; null: undocumented.' },
                    retries: { type: 'string', description: 'Its schedule and what it counts as a failure, in a sentence or two.' },
                    unconfirmed: { type: 'boolean', enum: [true], description: 'A figure comes from a secondary source, or could not be confirmed in the sender\'s own documentation.' },
                  },
                },
                event_names: {
                  description: 'Event names to pick an event filter from: read from a package that publishes them (GitHub: `@octokit/webhooks-types`; Stripe: `stripe`; Paddle: its SDK), ' +
                    'else the examples the sender\'s documentation shows; null when neither gives any. `source` says which.',
                  oneOf: [
                    { type: 'null' },
                    { type: 'object', required: ['names', 'source'], properties: { names: { type: 'array', items: { type: 'string' } }, source: { type: 'string' } } },
                  ],
                },
              },
            }),
          },
          left_out: {
            type: 'array',
            items: {
              type: 'object',
              required: ['id', 'name', 'docs_url', 'reason'],
              properties: { id: { type: 'string' }, name: { type: 'string' }, docs_url: { type: 'string', format: 'uri' }, reason: { type: 'string' } },
            },
          },
        },
      }),
    },
  },

  listTriggers: {
    description: 'The caller\'s triggers, in id order. Never shows secrets, keys or key hashes.',
    parameters: pageParameters('Triggers'),
    responses: {
      '200': pageBody('A page of triggers', 'triggers', trigger),
      '400': errorBody('validation_error: `limit` not an integer from 1 to 500, or a malformed `cursor`.'),
    },
  },

  getTrigger: {
    description: 'One of the caller\'s triggers. Never shows the signing secret, the API key or its hash.',
    responses: { '200': dataBody('The trigger', trigger), '404': notFound },
  },

  updateTrigger: {
    description:
      'Changes the given settings (at least one) and keeps the others; the same rules as create. `signature` replaces the whole ' +
      'signature (with a new secret) and `null` removes it. Turning `api_key_enabled` on generates a key, returned once as `api_key`; ' +
      'setting it on again keeps the existing key. Another account\'s trigger is 404 whatever the body. ' + CACHE,
    requestBody: jsonBody(named('TriggerPatch', patchBody)),
    responses: {
      '200': dataBody('The changed trigger', triggerWithKey),
      '400': errorBody(`${invalidSettings.description} Also an empty object (nothing to change).`),
      '404': notFound,
      '409': errorBody('conflict: the trigger kept changing concurrently; read it and try again.'),
      '415': unsupportedMediaType,
    },
  },

  deleteTrigger: {
    description: 'Removes the trigger; its URL answers 404 from then on (within the receiver cache\'s TTL). Its executions expire on their own. ' + CACHE,
    responses: {
      '204': { description: 'Deleted' },
      '404': notFound,
      '409': errorBody('conflict: the trigger kept changing concurrently; try again.'),
    },
  },

  regenerateTriggerUrl: {
    description:
      'Gives the trigger a new `webhook_id` and `url`; the old URL answers 404 from then on (within the receiver cache\'s TTL) and is never ' +
      'reused. Everything else, including the API key and signing secret, is kept. The new URL works at once. ' + CACHE,
    responses: {
      '200': dataBody('The trigger with its new URL', trigger),
      '404': notFound,
      '409': errorBody('conflict: the trigger kept changing concurrently; try again.'),
    },
  },

  regenerateTriggerApiKey: {
    description:
      'Replaces the webhook URL\'s API key: the new key is returned once as `api_key` and works at once. The old key stops working at ' +
      'once (within the receiver cache\'s TTL), or with `previous_key_expires_in_seconds` keeps working that much longer, until ' +
      '`previous_api_key_expires_at`, so senders can switch without a refused delivery. A key replaced earlier whose overlap has not ended ' +
      'stops at once: at most two keys work. The body is optional (an empty body is `{}`). A trigger with `api_key_enabled` off has no ' +
      'key to regenerate: 400 (turn it on with PATCH, which returns the first key). Turning protection off discards both keys.',
    requestBody: { required: false, content: { 'application/json': jsonSchemaOf(regenerateApiKey, described) } },
    responses: {
      '200': dataBody('The trigger and its new key', named('TriggerWithNewKey', { ...TRIGGER_WITH_KEY, required: [...(TRIGGER.required as string[]), 'api_key'] })),
      '400': errorBody('validation_error: API key protection is off for this trigger; a body that is not a JSON object, has an unknown field, or an overlap that is not an integer from 0 to 604800.'),
      '404': notFound,
      '409': errorBody('conflict: the trigger kept changing concurrently; try again.'),
      '415': errorBody('unsupported_media_type: a non-empty body must be sent as `application/json`.'),
    },
  },

  rotateTriggerSigningSecret: {
    description:
      'Gives the trigger\'s signature a new secret (same service and settings). Deliveries signed with the new secret are accepted at ' +
      'once; those signed with the replaced one are still accepted for `previous_secret_expires_in_seconds` (default 24 hours), until ' +
      '`signature.previous_secret_expires_at`, and refused (401 `invalid_signature`) after. Both are stored encrypted and never returned. ' +
      'Rotating again during an overlap ends it: the secret before the current one stops at once, so at most two secrets are accepted. ' +
      'Setting `signature` with PATCH replaces the secret with no overlap. ' + CACHE,
    requestBody: jsonBody(jsonSchemaOf(rotateSigningSecret, described)),
    responses: {
      '200': dataBody('The trigger; `signature.previous_secret_expires_at` says when the old secret stops', trigger),
      '400': errorBody(
        'validation_error: the trigger has no signature (set one with PATCH); body not a JSON object or with an unknown field; `secret` ' +
        'missing, empty, over 1024 characters, or for standard_webhooks not `whsec_<base64>` of at least 24 bytes; an overlap that is not an integer from 0 to 604800.',
      ),
      '404': notFound,
      '409': errorBody('conflict: the trigger kept changing concurrently; read it and try again.'),
      '415': unsupportedMediaType,
    },
  },

  awaitTriggerHandshake: {
    description:
      'asana and notion: forgets the trigger\'s signing secret (one a handshake handed over, or one pasted) and opens the handshake window again for `signature.handshake_window_seconds`: ' +
      'the next handover inside it becomes the secret. For the owner who does not recognise a handover (`signature.handed_over_at`, `handed_over_source_ip`), or who re-creates the subscription. ' +
      'Until the sender\'s handshake comes, every delivery is refused (401). No body. ' + CACHE,
    responses: {
      '200': dataBody('The trigger, awaiting its handshake (`signature.handshake_awaited_until`)', trigger),
      '400': errorBody('validation_error: the trigger\'s sender does not hand its secret over in a handshake (only asana and notion do), or it has no signature.'),
      '404': notFound,
      '409': errorBody('conflict: the trigger kept changing concurrently; try again.'),
    },
  },

  listTriggerExecutions: {
    description:
      'The trigger\'s deliveries, newest first: every delivery to its URL while it exists and is enabled, refused, ignored and duplicate ones included ' +
      `(refused ones at most ${MAX_REFUSED_RECORDS_PER_MINUTE} per minute). Records expire after 7 days. The filters combine (all must hold). ` + FILTER_COST,
    parameters: [...pageParameters('Executions'), ...filterParameters],
    responses: {
      '200': pageBody('A page of executions', 'executions', execution),
      '400': invalidFilter,
      '404': notFound,
    },
  },

  getTriggerExecution: {
    description: 'One delivery with the request as received (redacted), the flow\'s output or error, and the attempts timeline. Two reads: the record and its request.',
    responses: { '200': dataBody('The execution', executionDetail), '404': executionNotFound },
  },

  replayTriggerExecution: {
    description: REPLAY,
    responses: {
      '202': dataBody('Queued', replayed),
      '404': executionNotFound,
      '409': notReplayable,
      '503': errorBody('unavailable: the queue did not take the event; nothing was recorded; try again.'),
    },
  },

  replayTriggerExecutions: {
    description:
      `Replays the trigger's executions that match the filters, one page of up to ${MAX_REPLAYS_PER_CALL} per call, newest first; go on with \`next_cursor\` until it is null. ` +
      'Executions that cannot be replayed (no stored body, or one the receiver would refuse) are counted in `not_replayable` and skipped. ' +
      'Calling again with the same cursor replays those executions again. Each replay records `replay_of`. ' + REPLAY,
    requestBody: jsonBody(bulkReplayBody),
    responses: {
      '202': dataBody('Queued', {
        type: 'object',
        required: ['replayed', 'not_replayable', 'next_cursor'],
        properties: {
          replayed: { type: 'integer', minimum: 0 },
          not_replayable: { type: 'integer', minimum: 0 },
          next_cursor: { type: ['string', 'null'] },
        },
      }),
      '400': errorBody(`${invalidFilter.description} Also a body that is not a JSON object, has an unknown field, has neither \`status\` nor \`since\`, or a \`limit\` that is not an integer from 1 to ${MAX_REPLAYS_PER_CALL}.`),
      '404': notFound,
      '415': unsupportedMediaType,
      '503': errorBody('unavailable: the queue stopped taking events part-way; the executions replayed so far stay queued.'),
    },
  },

  receiveWebhook,
};
