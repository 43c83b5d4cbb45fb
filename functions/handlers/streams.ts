import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { AwsClients } from '../adapters/aws/clients.js';
import { dynamoClient } from '../adapters/aws/clients/dynamo.js';
import { DynamoStreamStore } from '../adapters/aws/dynamo-stream-store.js';
import { sqsSweepQueueOnFirstUse } from '../adapters/aws/sqs-on-first-use.js';
import { settleSecondsFor } from '../domain/kv/sweep-task.js';
import type { Authenticator } from '../domain/authenticator.js';
import { ConsumerService, type ConsumerInfo, type Delivery } from '../domain/streams/consumers.js';
import { DEFAULT_CONSUMER_LIST_LIMIT, DEFAULT_LIST_LIMIT, DEFAULT_READ_LIMIT, MAX_LIST_LIMIT, MAX_READ_LIMIT } from '../domain/streams/limits.js';
import { countsOf } from '../domain/streams/log.js';
import { StreamService, type StreamInfo } from '../domain/streams/service.js';
import type { StoredMessage, StreamRef } from '../domain/streams/types.js';
import {
  parseAck, parseConsumerConfig, parseFetch, parseNak, parsePublishBody, parseReadStart, parseSeq, parseStreamConfig,
  validateConsumerName, validateStreamName,
} from '../domain/streams/validation.js';
import { FUNCTIONS } from '../manifest.js';
import type { Settings } from '../settings.js';
import { createHttpHandler, type HandlerOptions, type RouteRequest } from '../shared/handler.js';
import { idempotencyOnFirstUse } from '../adapters/aws/idempotency-on-first-use.js';
import { created, json, jsonObjectBody, limitParam, noContent, ok, pathParam, queryParam } from '../shared/http.js';
import { createGatewayAuthenticator } from './gateway-auth.js';

const streamOf = ({ event, principal }: RouteRequest): StreamRef =>
  ({ accountId: principal.accountId, name: validateStreamName(pathParam(event, 'stream')) });
const consumerOf = ({ event }: RouteRequest): string => validateConsumerName(pathParam(event, 'consumer'));
const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

const streamResource = ({ stream, firstTs, consumers }: StreamInfo) => {
  const { config, head } = stream;
  const { messages, bytes } = countsOf(head);
  return {
    name: stream.name,
    description: config.description,
    max_msgs: config.maxMsgs,
    max_bytes: config.maxBytes,
    max_age_seconds: config.maxAgeSeconds,
    max_msg_size: config.maxMsgSize,
    discard: config.discard,
    duplicate_window_seconds: config.duplicateWindowSeconds,
    created_at: stream.createdAt,
    messages,
    bytes,
    first_seq: head.firstSeq,
    last_seq: head.lastSeq,
    first_ts: messages > 0 ? iso(firstTs) : null,
    last_ts: iso(head.lastTs),
    consumers,
  };
};

const messageResource = (message: StoredMessage) => ({
  seq: message.seq,
  ts: iso(message.ts),
  data: JSON.parse(message.data) as unknown,
  headers: message.headers,
  msg_id: message.msgId,
});

const deliveryResource = (delivery: Delivery) => ({ ...messageResource(delivery), deliveries: delivery.deliveries });

const consumerResource = (info: ConsumerInfo) => {
  const { consumer } = info;
  const { config } = consumer;
  return {
    name: consumer.name,
    deliver_policy: config.deliverPolicy,
    opt_start_seq: config.optStartSeq,
    opt_start_time: iso(config.optStartTime),
    ack_wait_seconds: config.ackWaitSeconds,
    max_deliver: config.maxDeliver,
    backoff_seconds: config.backoffSeconds,
    max_ack_pending: config.maxAckPending,
    created_at: consumer.createdAt,
    num_pending: info.numPending,
    num_ack_pending: info.numAckPending,
    ack_floor: info.ackFloor,
    delivered_seq: info.deliveredSeq,
    num_redelivered: consumer.numRedelivered,
  };
};

/** The streams function's routes over its two use-case modules; exported so tests can build it over other stores. */
export const createStreamsHandler = (streams: StreamService, consumers: ConsumerService, authenticator: Authenticator, options: HandlerOptions = {}) => createHttpHandler('streams', {
  async listStreams({ event, principal }) {
    const page = { limit: limitParam(event, DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT), cursor: queryParam(event, 'cursor') };
    const { streams: infos, nextCursor } = await streams.listStreams(principal.accountId, page);
    return ok({ streams: infos.map(streamResource), next_cursor: nextCursor });
  },
  async createStream(request) {
    const { info, created: isNew } = await streams.putStream(streamOf(request), parseStreamConfig(jsonObjectBody(request.event, { optional: true })));
    return isNew ? created(streamResource(info)) : ok(streamResource(info));
  },
  getStream: async (request) => ok(streamResource(await streams.describeStream(streamOf(request)))),
  async deleteStream(request) {
    await streams.deleteStream(streamOf(request));
    return noContent();
  },
  async purgeStream(request) {
    const stream = await streams.purgeStream(streamOf(request));
    return json(200, { message: `Stream '${stream.name}' purged; its configuration and consumers are unchanged.`, first_seq: stream.head.firstSeq });
  },
  async publishMessages(request) {
    const stream = streamOf(request);
    const acks = await streams.publishAcks(stream, parsePublishBody(jsonObjectBody(request.event)));
    // `acks` as NATS's PubAck: a msg_id already seen is `duplicate: true` (stored nothing new).
    return ok({ seqs: acks.map((ack) => ack.seq), acks });
  },
  async readMessages(request) {
    const { event } = request;
    const stream = streamOf(request);
    const start = parseReadStart({ afterSeq: queryParam(event, 'after_seq'), startTime: queryParam(event, 'start_time') });
    const { messages, nextAfterSeq, stream: read } = await streams.readMessages(stream, { start, limit: limitParam(event, DEFAULT_READ_LIMIT, MAX_READ_LIMIT) });
    return ok({ messages: messages.map(messageResource), next_after_seq: nextAfterSeq, first_seq: read.head.firstSeq, last_seq: read.head.lastSeq });
  },
  getMessage: async (request) => ok(messageResource(await streams.getMessage(streamOf(request), parseSeq(pathParam(request.event, 'seq'), 'seq')))),

  createConsumer: async (request) =>
    created(consumerResource(await consumers.createConsumer(streamOf(request), consumerOf(request), parseConsumerConfig(jsonObjectBody(request.event, { optional: true }))))),
  async listConsumers(request) {
    const { event } = request;
    const page = { limit: limitParam(event, DEFAULT_CONSUMER_LIST_LIMIT, MAX_LIST_LIMIT), cursor: queryParam(event, 'cursor') };
    const { consumers: infos, nextCursor } = await consumers.listConsumers(streamOf(request), page);
    return ok({ consumers: infos.map(consumerResource), next_cursor: nextCursor });
  },
  getConsumer: async (request) => ok(consumerResource(await consumers.getConsumer(streamOf(request), consumerOf(request)))),
  async deleteConsumer(request) {
    await consumers.deleteConsumer(streamOf(request), consumerOf(request));
    return noContent();
  },
  async fetchMessages(request) {
    const deliveries = await consumers.fetch(streamOf(request), consumerOf(request), parseFetch(jsonObjectBody(request.event, { optional: true })));
    return ok({ messages: deliveries.map(deliveryResource) });
  },
  async ackMessages(request) {
    const acked = await consumers.ack(streamOf(request), consumerOf(request), parseAck(jsonObjectBody(request.event)));
    return ok({ acked });
  },
  async nakMessage(request) {
    const { seq, delaySeconds } = parseNak(jsonObjectBody(request.event));
    await consumers.nak(streamOf(request), consumerOf(request), seq, delaySeconds);
    return ok({ seq, redeliver_after_seconds: delaySeconds });
  },
  async listDeadMessages(request) {
    const { event } = request;
    const page = { limit: limitParam(event, DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT), cursor: queryParam(event, 'cursor') };
    const { dead, nextCursor } = await consumers.listDead(streamOf(request), consumerOf(request), page);
    return ok({ dead: dead.map((d) => ({ seq: d.seq, deliveries: d.deliveries, dead_at: iso(d.deadAt) })), next_cursor: nextCursor });
  },
}, authenticator, {}, options);

/** A publisher stops writing past its function's timeout; the lease adds a margin for clocks and latency. */
export const WRITE_DEADLINE_MS = FUNCTIONS.streams.timeoutSeconds * 1000;
export const LEASE_MARGIN_MS = 30_000;
/** A publish waits this long for earlier publishes to commit, leaving time to answer within API Gateway's 30 s. */
export const COMMIT_WAIT_MS = 10_000;

export function composeStreams(settings: Settings, aws: AwsClients) {
  const store = new DynamoStreamStore(dynamoClient(aws), settings.kvTable);
  const common = { store, now: Date.now, randomBytes, sleep: (ms: number) => sleep(ms).then(() => undefined) };
  const leaseMs = settings.streamsLeaseSeconds === undefined ? WRITE_DEADLINE_MS + LEASE_MARGIN_MS : settings.streamsLeaseSeconds * 1000;
  const streams = new StreamService({
    ...common,
    // Only a purge or delete sends to the sweep queue: the SQS client loads on the first.
    sweeps: sqsSweepQueueOnFirstUse(settings.kvSweepQueueUrl, aws),
    settleMs: (settings.kvSweepSettleSeconds ?? settleSecondsFor(FUNCTIONS.streams.timeoutSeconds)) * 1000,
    writeDeadlineMs: Math.min(WRITE_DEADLINE_MS, leaseMs / 2), leaseMs, commitWaitMs: COMMIT_WAIT_MS,
  });
  const consumers = new ConsumerService({ ...common, streams });
  return createStreamsHandler(streams, consumers, createGatewayAuthenticator(settings, aws), { idempotency: idempotencyOnFirstUse(settings.kvTable, aws) });
}
