import {
  DEFAULT_ACK_WAIT_SECONDS, DEFAULT_CONSUMER_LIST_LIMIT, DEFAULT_DUPLICATE_WINDOW_SECONDS, DEFAULT_LIST_LIMIT, DEFAULT_MAX_ACK_PENDING, DEFAULT_READ_LIMIT,
  MAX_ACK_SEQS, MAX_ACK_WAIT_SECONDS, MAX_ANSWER_BYTES, MAX_BACKOFF_STEPS, MAX_CONSUMERS, MAX_DESCRIPTION_BYTES, MAX_DUPLICATE_WINDOW_SECONDS,
  MAX_FETCH_BATCH, MAX_FETCH_WAIT_MS, MAX_HEADERS, MAX_LIST_LIMIT, MAX_MAX_ACK_PENDING, MAX_MSG_SIZE_BYTES, MAX_NAK_DELAY_SECONDS,
  MAX_PUBLISH_BATCH, MAX_READ_LIMIT, MSG_ID_PATTERN, STREAM_NAME_PATTERN,
} from '../domain/streams/limits.js';
import { dataBody, errorBody, named, pageBody, pageParameters, type OperationDocs, type Schema } from './types.js';

const SCOPE = 'Streams belong to the caller\'s account; a stream of another account answers 404 like a missing one.';
const GUARANTEES =
  'Delivery is at least once and ordered per stream: sequences are contiguous from 1 (a purge moves the first sequence ' +
  'on, never back), a publish answers only once its messages are committed, and readers see messages only up to the ' +
  'committed watermark `last_seq`, so no reader ever sees a sequence missing that is filled in later.';

const nullableInt = (description: string, minimum = 1, maximum = Number.MAX_SAFE_INTEGER): Schema => ({ type: ['integer', 'null'], minimum, maximum, description });

const configProperties: Record<string, Schema> = {
  description: { type: ['string', 'null'], description: `At most ${MAX_DESCRIPTION_BYTES} UTF-8 bytes.` },
  max_msgs: nullableInt('Most messages kept; null: no limit.'),
  max_bytes: nullableInt('Most bytes kept (each message counts its data as JSON text plus its headers); null: no limit.'),
  max_age_seconds: nullableInt('Messages older than this are hidden from reads and consumers at once and removed; null: kept until other limits drop them.'),
  max_msg_size: { type: 'integer', minimum: 1, maximum: MAX_MSG_SIZE_BYTES, default: MAX_MSG_SIZE_BYTES, description: 'Largest message; a larger one is 413.' },
  discard: { enum: ['old', 'new'], default: 'old', description: 'At `max_msgs` or `max_bytes`: `old` drops the oldest messages, `new` refuses the publish (409 `stream_full`).' },
  duplicate_window_seconds: {
    type: 'integer', minimum: 0, maximum: MAX_DUPLICATE_WINDOW_SECONDS, default: DEFAULT_DUPLICATE_WINDOW_SECONDS,
    description: 'A `msg_id` published again within this many seconds of its first publish is not stored again; 0 turns deduplication off.',
  },
};

const streamSchema: Schema = named('Stream', {
  type: 'object',
  required: ['name', ...Object.keys(configProperties), 'created_at', 'messages', 'bytes', 'first_seq', 'last_seq', 'first_ts', 'last_ts', 'consumers'],
  properties: {
    name: { type: 'string', pattern: STREAM_NAME_PATTERN.source },
    ...configProperties,
    created_at: { type: 'string', format: 'date-time' },
    messages: { type: 'integer', minimum: 0, description: 'Messages in the stream: `last_seq - first_seq + 1`.' },
    bytes: { type: 'integer', minimum: 0 },
    first_seq: { type: 'integer', minimum: 1, description: 'The oldest sequence kept; `last_seq + 1` when the stream is empty.' },
    last_seq: { type: 'integer', minimum: 0, description: 'The committed watermark: the newest sequence readers see.' },
    first_ts: { type: ['string', 'null'], format: 'date-time' },
    last_ts: { type: ['string', 'null'], format: 'date-time' },
    consumers: { type: 'integer', minimum: 0 },
  },
});

const MESSAGE: Schema = {
  type: 'object',
  required: ['seq', 'ts', 'data', 'headers', 'msg_id'],
  properties: {
    seq: { type: 'integer', minimum: 1 },
    ts: { type: 'string', format: 'date-time', description: 'When it was published.' },
    data: { description: 'The JSON value published.' },
    headers: { type: ['object', 'null'], additionalProperties: { type: 'string' } },
    msg_id: { type: ['string', 'null'] },
  },
};
const messageSchema = named('Message', MESSAGE);
/** A message as a consumer's fetch hands it out: with how many times it has been delivered. */
const deliveredMessage = named('DeliveredMessage', { ...MESSAGE, properties: { ...(MESSAGE.properties as object), deliveries: { type: 'integer', minimum: 1 } } });

const consumerConfig: Record<string, Schema> = {
  deliver_policy: {
    enum: ['all', 'new', 'last', 'by_start_sequence', 'by_start_time'], default: 'all',
    description: '`all`: from the first message kept; `new`: only messages published after creation; `last`: from the newest message; `by_start_sequence`: from `opt_start_seq`; `by_start_time`: from the first message published at or after `opt_start_time`.',
  },
  opt_start_seq: nullableInt('With `by_start_sequence` only.'),
  opt_start_time: { type: ['string', 'null'], format: 'date-time', description: 'With `by_start_time` only.' },
  ack_wait_seconds: { type: 'integer', minimum: 1, maximum: MAX_ACK_WAIT_SECONDS, default: DEFAULT_ACK_WAIT_SECONDS, description: 'A delivered message not acknowledged within this is delivered again.' },
  max_deliver: nullableInt('Deliveries at most; a message whose last delivery goes unacknowledged past its wait is recorded as dead (`…/dead`) by the next fetch. null: no limit.', 1, 1000),
  backoff_seconds: {
    type: 'array', maxItems: MAX_BACKOFF_STEPS, items: { type: 'integer', minimum: 1, maximum: MAX_ACK_WAIT_SECONDS },
    description: 'Instead of `ack_wait_seconds`: the wait after the n-th delivery is the n-th entry (the last repeating). No more entries than `max_deliver`.',
  },
  max_ack_pending: { type: 'integer', minimum: 1, maximum: MAX_MAX_ACK_PENDING, default: DEFAULT_MAX_ACK_PENDING, description: 'No new messages are delivered while this many are unacknowledged.' },
};

const consumerSchema: Schema = named('Consumer', {
  type: 'object',
  properties: {
    name: { type: 'string', pattern: STREAM_NAME_PATTERN.source },
    ...consumerConfig,
    created_at: { type: 'string', format: 'date-time' },
    num_pending: { type: 'integer', description: 'Messages not yet delivered (the lag).' },
    num_ack_pending: { type: 'integer', description: 'Delivered and not acknowledged.' },
    ack_floor: { type: 'integer', description: 'Every sequence up to it is acknowledged, dead, or before the consumer\'s start.' },
    delivered_seq: { type: 'integer', description: 'The newest sequence delivered for the first time.' },
    num_redelivered: { type: 'integer', description: 'Redeliveries so far.' },
  },
});

const badStream = errorBody(`validation_error: the stream name does not match \`${STREAM_NAME_PATTERN.source}\`.`);
const missingStream = errorBody('not_found: no such stream in the caller\'s account.');
const missingConsumer = errorBody('not_found: no such stream in the caller\'s account, or no such consumer.');
const notJson = errorBody('unsupported_media_type: the body must be `application/json`.');
const jsonBody = (schema: Schema, required = true) => ({ required, content: { 'application/json': schema } });

export const streamsDocs: OperationDocs = {
  listStreams: {
    description: 'The caller\'s streams in name order, each with its configuration and counts.',
    parameters: pageParameters('Streams', { max: MAX_LIST_LIMIT, default: DEFAULT_LIST_LIMIT }),
    responses: { '200': pageBody('A page of streams', 'streams', streamSchema), '400': errorBody('validation_error: bad `limit` or cursor.') },
  },
  createStream: {
    description:
      'Creates a stream (201), or replaces the configuration of the account\'s stream of this name (200): the body is the whole ' +
      'configuration, an omitted field takes its default. The body is optional; every field is optional and other fields are refused. ' +
      'Messages, sequences and consumers stay. Limits apply from the update on: with `discard: old`, a lowered `max_msgs` or ' +
      '`max_bytes` drops the oldest messages at once (up to 1,000 in the call, the rest on the next reads and publishes); with ' +
      '`discard: new` the messages stay and publishes are refused (409 `stream_full`) until the stream is under its limits again. ' +
      `A lowered \`max_age_seconds\` hides older messages at once; messages over a lowered \`max_msg_size\` stay. ${SCOPE}`,
    requestBody: jsonBody(named('StreamInput', { type: 'object', additionalProperties: false, properties: configProperties }), false),
    responses: {
      '200': dataBody('The stream, with its new configuration', streamSchema),
      '201': dataBody('The new stream', streamSchema),
      '400': errorBody('validation_error: bad stream name, unknown field, or a field out of range; `message` says which. Nothing changes.'),
      '415': notJson,
    },
  },
  getStream: {
    description: `The stream's configuration and counts. Reading also enforces retention (age) and moves the watermark over messages already written. ${SCOPE}`,
    responses: { '200': dataBody('The stream', streamSchema), '400': badStream, '404': missingStream },
  },
  deleteStream: {
    description: `Deletes the stream with its messages and consumers; it is gone at once. ${SCOPE}`,
    responses: { '204': { description: 'Deleted' }, '400': badStream, '404': missingStream },
  },
  purgeStream: {
    description:
      'Removes every message and keeps the configuration and the consumers, in one small conditional write whatever the ' +
      'stream holds (the stream moves to a new generation). `first_seq` moves past every sequence published so far; new ' +
      'messages continue the sequence, and consumers continue from the new first sequence. A publish in flight during ' +
      `the purge is purged with the rest. ${SCOPE}`,
    responses: {
      '200': {
        description: 'Purged',
        content: { 'application/json': { type: 'object', properties: { message: { type: 'string' }, first_seq: { type: 'integer' } } } },
      },
      '400': badStream,
      '404': missingStream,
    },
  },
  publishMessages: {
    description:
      `Publishes 1 to ${MAX_PUBLISH_BATCH} messages, in order, with contiguous sequences, and answers once they are committed ` +
      '(readable and deliverable). Batches are the fast path: one call costs two small head writes and one write per ' +
      'message whatever the batch size. A message whose `msg_id` was published within the duplicate window is not ' +
      'stored again and gets its first sequence; a repeat within the batch gets the first occurrence\'s. A malformed ' +
      `batch stores nothing. ${GUARANTEES} ${SCOPE}`,
    requestBody: jsonBody({
      type: 'object', additionalProperties: false, required: ['messages'],
      properties: {
        messages: {
          type: 'array', minItems: 1, maxItems: MAX_PUBLISH_BATCH,
          items: {
            type: 'object', additionalProperties: false, required: ['data'],
            properties: {
              data: { description: 'Any JSON value.' },
              headers: { type: 'object', maxProperties: MAX_HEADERS, additionalProperties: { type: 'string', maxLength: 1024 }, description: 'Lower-case HTTP token names, text values of at most 1 KiB.' },
              msg_id: { type: 'string', pattern: MSG_ID_PATTERN.source, description: 'Deduplication id.' },
            },
          },
        },
      },
    }),
    responses: {
      '200': dataBody('Committed', { type: 'object', required: ['seqs'], properties: {
        seqs: { type: 'array', items: { type: 'integer', minimum: 1 }, description: 'Each message\'s sequence, in the order sent.' },
        acks: {
          type: 'array',
          description: 'Each message\'s acknowledgement, in the order sent, as NATS\'s PubAck: `duplicate` is true when its `msg_id` was already published within the duplicate window (or earlier in the batch): nothing new was stored and `seq` is the first publish\'s.',
          items: { type: 'object', required: ['seq', 'duplicate'], properties: { seq: { type: 'integer', minimum: 1 }, duplicate: { type: 'boolean' } } },
        },
      } }),
      '400': errorBody('validation_error: not 1 to 100 messages, a message without `data`, an unknown field, bad headers or `msg_id`; nothing is stored.'),
      '404': missingStream,
      '409': errorBody('stream_full: `discard: new` and the publish would pass `max_msgs` or `max_bytes` (nothing stored); or conflict: the stream was purged or deleted during the publish.'),
      '413': errorBody('payload_too_large: a message is larger than `max_msg_size`; nothing is stored.'),
      '415': notJson,
      '503': errorBody('unavailable: stored but earlier publishes have not committed within 10 s; publish again with the same `msg_id` to learn the sequences.'),
    },
  },
  readMessages: {
    description:
      'Messages in sequence order, after `after_seq` (default 0) or from the first published at or after `start_time`, up to ' +
      'the committed watermark. Continue with `after_seq=next_after_seq`; an empty page means nothing newer yet (a tailing ' +
      `reader polls). A page may hold fewer than \`limit\` messages: it also stops before ${MAX_ANSWER_BYTES / 1024 / 1024} MiB of ` +
      `messages (counted as Lambda carries them), under Lambda's 6 MB answer. ${GUARANTEES} ${SCOPE}`,
    parameters: [
      { name: 'after_seq', in: 'query', description: 'Read after this sequence.', schema: { type: 'integer', minimum: 0 } },
      { name: 'start_time', in: 'query', description: 'Read from this time (ISO 8601); not with `after_seq`.', schema: { type: 'string', format: 'date-time' } },
      { name: 'limit', in: 'query', description: 'Messages per page.', schema: { type: 'integer', minimum: 1, maximum: MAX_READ_LIMIT, default: DEFAULT_READ_LIMIT } },
    ],
    responses: {
      '200': dataBody('A page of messages', {
        type: 'object', required: ['messages', 'next_after_seq', 'first_seq', 'last_seq'],
        properties: { messages: { type: 'array', items: messageSchema }, next_after_seq: { type: 'integer' }, first_seq: { type: 'integer' }, last_seq: { type: 'integer' } },
      }),
      '400': errorBody('validation_error: bad stream name, `after_seq`, `start_time` (or both given) or `limit`.'),
      '404': missingStream,
    },
  },
  getMessage: {
    description: `One message by its sequence. ${SCOPE}`,
    parameters: [{ name: 'seq', in: 'path', description: 'The sequence, a positive integer.', schema: { type: 'string', pattern: '^[0-9]{1,16}$' } }],
    responses: {
      '200': dataBody('The message', messageSchema),
      '400': errorBody('validation_error: bad stream name or sequence.'),
      '404': errorBody('not_found: no such stream, or the sequence is not in the stream (not yet committed, dropped by retention, purged).'),
    },
  },
  createConsumer: {
    description:
      `Creates a durable consumer (at most ${MAX_CONSUMERS} a stream). Its position starts where \`deliver_policy\` says; its ` +
      'state lives in the table, so any number of clients may fetch from it. The configuration cannot change afterwards.',
    requestBody: jsonBody(named('ConsumerInput', { type: 'object', additionalProperties: false, properties: consumerConfig }), false),
    responses: {
      '201': dataBody('The new consumer', consumerSchema),
      '400': errorBody('validation_error: bad name, unknown field, or a field out of range; `message` says which.'),
      '404': missingStream,
      '409': errorBody(`already_exists: a consumer of this name exists; conflict: the stream has ${MAX_CONSUMERS} consumers.`),
      '415': notJson,
    },
  },
  listConsumers: {
    description:
      'A page of the stream\'s consumers in name order, each with its configuration, position and lag (`num_pending`: not yet ' +
      'delivered; `num_ack_pending`: delivered, not acknowledged). Each consumer listed reads its pending messages to count ' +
      `them, so pages are small by default. ${SCOPE}`,
    parameters: pageParameters('Consumers', { max: MAX_LIST_LIMIT, default: DEFAULT_CONSUMER_LIST_LIMIT }),
    responses: {
      '200': pageBody('A page of consumers', 'consumers', consumerSchema),
      '400': errorBody('validation_error: bad stream name, `limit` or cursor.'),
      '404': missingStream,
    },
  },
  getConsumer: {
    description: 'The consumer\'s configuration and position.',
    responses: { '200': dataBody('The consumer', consumerSchema), '400': badStream, '404': missingConsumer },
  },
  deleteConsumer: {
    description: 'Deletes the consumer; its pending deliveries go with it.',
    responses: { '204': { description: 'Deleted' }, '400': badStream, '404': missingConsumer },
  },
  fetchMessages: {
    description:
      `Up to \`batch\` (1 to ${MAX_FETCH_BATCH}, default 1) messages to process: first those due again (not acknowledged ` +
      'within their wait, or nak\'d), then new ones in sequence order while fewer than `max_ack_pending` are unacknowledged. ' +
      `With nothing to deliver it waits up to \`wait_ms\` (0 to ${MAX_FETCH_WAIT_MS}, default 0) for messages. Each message ` +
      'is claimed with a conditional write before it is handed out, so two clients fetching at once never get the same ' +
      'message while it is pending. Delivery is at least once: acknowledge each message with `…/ack` within its wait. ' +
      `An answer holds at most ${MAX_ANSWER_BYTES / 1024 / 1024} MiB of messages (counted as Lambda carries them, under its 6 MB answer); ` +
      'a message that does not fit is not claimed and comes with the next fetch.',
    requestBody: jsonBody({
      type: 'object', additionalProperties: false,
      properties: { batch: { type: 'integer', minimum: 1, maximum: MAX_FETCH_BATCH, default: 1 }, wait_ms: { type: 'integer', minimum: 0, maximum: MAX_FETCH_WAIT_MS, default: 0 } },
    }, false),
    responses: {
      '200': dataBody('Messages to process', {
        type: 'object', required: ['messages'],
        properties: { messages: { type: 'array', items: deliveredMessage } },
      }),
      '400': errorBody('validation_error: bad `batch` or `wait_ms`.'),
      '404': missingConsumer,
      '415': notJson,
    },
  },
  ackMessages: {
    description: `Acknowledges 1 to ${MAX_ACK_SEQS} delivered messages; answers which were pending (acknowledging again is harmless). It reads which are pending first and writes only to remove those.`,
    requestBody: jsonBody({ type: 'object', additionalProperties: false, required: ['seqs'], properties: { seqs: { type: 'array', minItems: 1, maxItems: MAX_ACK_SEQS, items: { type: 'integer', minimum: 1 } } } }),
    responses: {
      '200': dataBody('Acknowledged', { type: 'object', properties: { acked: { type: 'array', items: { type: 'integer' } } } }),
      '400': errorBody('validation_error: `seqs` is not a list of sequences.'),
      '404': missingConsumer,
      '415': notJson,
    },
  },
  nakMessage: {
    description: 'Asks for a pending message again after `delay_seconds` (default 0: the next fetch). It counts as a delivery when it is delivered again.',
    requestBody: jsonBody({ type: 'object', additionalProperties: false, required: ['seq'], properties: { seq: { type: 'integer', minimum: 1 }, delay_seconds: { type: 'integer', minimum: 0, maximum: MAX_NAK_DELAY_SECONDS } } }),
    responses: {
      '200': dataBody('Will be delivered again', { type: 'object', properties: { seq: { type: 'integer' }, redeliver_after_seconds: { type: 'integer' } } }),
      '400': errorBody('validation_error: bad `seq` or `delay_seconds`.'),
      '404': errorBody('not_found: no such stream or consumer, or the message is not pending (acknowledged, dead, or never delivered).'),
      '415': notJson,
    },
  },
  listDeadMessages: {
    description: 'Messages that reached `max_deliver` without acknowledgement, in sequence order, with their delivery count. Read the message itself with `GET …/messages/{seq}` while the stream keeps it.',
    parameters: pageParameters('Dead messages', { max: MAX_LIST_LIMIT, default: DEFAULT_LIST_LIMIT }),
    responses: {
      '200': pageBody('A page of dead messages', 'dead', { type: 'object', properties: { seq: { type: 'integer' }, deliveries: { type: 'integer' }, dead_at: { type: 'string', format: 'date-time' } } }),
      '400': errorBody('validation_error: bad name, `limit` or cursor.'),
      '404': missingConsumer,
    },
  },
};
