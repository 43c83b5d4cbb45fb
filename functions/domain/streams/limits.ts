/**
 * Sizes and bounds of streams, each named with its unit. Names follow the KV buckets' rules
 * (`../kv/limits.ts`), so a stream, its consumers and a bucket are named alike.
 */
export { BUCKET_NAME_PATTERN as STREAM_NAME_PATTERN, GENERATION_BYTES, MAX_DESCRIPTION_BYTES } from '../kv/limits.js';

/** Messages in one publish call: one head reservation, four BatchWriteItem calls. */
export const MAX_PUBLISH_BATCH = 100;

/**
 * The largest message (its `data` as JSON text plus its headers), and the default `max_msg_size`:
 * 256 KiB leaves room in DynamoDB's 400 KB item for the key, headers' names and the msg_id.
 */
export const MAX_MSG_SIZE_BYTES = 256 * 1024;
/** A publish body (up to 100 messages) stays within Lambda's 6 MB invocation payload. */
export const MAX_PUBLISH_BODY_BYTES = 5 * 1024 * 1024;

/** `msg_id`: 1 to 128 printable ASCII characters. */
export const MSG_ID_PATTERN = /^[\x21-\x7e]{1,128}$/;
/** Headers: at most 32, names as HTTP tokens (lower-cased), values of at most 1 KiB of text. */
export const MAX_HEADERS = 32;
export const HEADER_NAME_PATTERN = /^[a-z0-9!#$%&'*+.^_`|~-]{1,64}$/;
export const MAX_HEADER_VALUE_BYTES = 1024;

/** Default `duplicate_window_seconds` (NATS's default, 2 minutes) and its ceiling (1 day). */
export const DEFAULT_DUPLICATE_WINDOW_SECONDS = 120;
export const MAX_DUPLICATE_WINDOW_SECONDS = 86_400;

/** Reads: messages per page by default and at most (a page is also cut at DynamoDB's 1 MB a query). */
export const DEFAULT_READ_LIMIT = 100;
export const MAX_READ_LIMIT = 1000;
/** Listings of streams and dead messages. */
export const DEFAULT_LIST_LIMIT = 100;
export const MAX_LIST_LIMIT = 100;
/**
 * Consumers per page of `GET …/consumers`: each one listed also reads its pending items (up to its
 * `max_ack_pending`) to count them, so a page is smaller by default than other listings.
 */
export const DEFAULT_CONSUMER_LIST_LIMIT = 20;

/** Consumers per stream. */
export const MAX_CONSUMERS = 100;
/** Fetch: messages per call, and the long-poll's ceiling (API Gateway answers within 30 s). */
export const MAX_FETCH_BATCH = 100;
export const MAX_FETCH_WAIT_MS = 20_000;
/**
 * How often a waiting fetch looks again: first after this, then half as long again each time, up
 * to {@link FETCH_POLL_MAX_MS}. Each look reads two small items (the stream's head and the
 * consumer, 1 read unit each); the pending items and messages are read only when one of them says
 * something changed (a publish, an ack or nak, a redelivery coming due). A 20 s wait makes at most
 * about 45 looks.
 */
export const FETCH_POLL_MS = 100;
export const FETCH_POLL_MAX_MS = 500;
/**
 * Times one fetch reads its consumer's pending items (at most `max_ack_pending` of them, about 135
 * bytes each: 10,000 are about 330 read units): once at the start, then only when an ack or nak,
 * or a redelivery coming due, changed them, and never more than this.
 */
export const MAX_PENDING_SCANS_PER_FETCH = 3;

/**
 * The bytes of messages one answer carries (a fetch, a read of messages), counted as Lambda carries
 * them: each message's data and headers as JSON text escaped once more inside Lambda's response
 * (`answerBytes`), plus its other fields. 5 MiB leaves a margin under Lambda's 6 MB response limit
 * (which API Gateway's 10 MB does not raise) for the envelope and headers. A page stops before the
 * message that would pass it (the first message always fits: 256 KiB at most, 2 × that escaped).
 * A fetch claims only the messages it answers with.
 */
export const MAX_ANSWER_BYTES = 5 * 1024 * 1024;
/** Per message in an answer: `seq`, `ts`, `msg_id` (≤ 128), `deliveries` and their names, generously. */
export const ANSWER_MESSAGE_OVERHEAD_BYTES = 512;

/** Consumer defaults: NATS's ack wait (30 s), unlimited deliveries, 1,000 unacknowledged at most. */
export const DEFAULT_ACK_WAIT_SECONDS = 30;
export const MAX_ACK_WAIT_SECONDS = 12 * 3600;
export const DEFAULT_MAX_ACK_PENDING = 1000;
export const MAX_MAX_ACK_PENDING = 10_000;
export const MAX_BACKOFF_STEPS = 20;
/** A nak's delay, at most. */
export const MAX_NAK_DELAY_SECONDS = 12 * 3600;
/** Sequences in one ack call. */
export const MAX_ACK_SEQS = 1000;
