export type FlowResult =
  | { status: 'succeeded'; output: unknown }
  | { status: 'failed'; error: string; cause?: string }
  | { status: 'timed_out' };

/** Runs a flow to completion (Step Functions express, synchronously) within a time limit. */
export interface FlowRunner {
  /** @param inputJson the flow input `{"trigger": …}` as JSON text (serialised once by the caller). */
  run(flow: string, inputJson: string, options: { timeoutMs: number; name?: string }): Promise<FlowResult>;
}

/**
 * The error of every event of a batch that failed as a whole (`States.Runtime` or
 * `States.DataLimitExceeded`, which no Catch holds): each may have run or not, so each goes back
 * through the queue, its attempt counted, to run alone.
 */
export const BATCH_FAILED = 'batch_failed';

/**
 * Runs one flow for several events in one execution (the flow's batch state machine), each event
 * alone with its own input. `undefined`: the batch did not start (the flow has no batch state
 * machine, or Step Functions refused the input), so nothing ran and each event should run in its
 * own execution now. A batch that started and failed as a whole answers `failed` with
 * `BATCH_FAILED` for every event, one that timed out `timed_out`: what each event did is unknown.
 * Throws `AppError('unavailable')` when Step Functions could not be reached.
 */
export interface BatchFlowRunner {
  runBatch(flow: string, inputsJson: readonly string[], options: { timeoutMs: number }): Promise<FlowResult[] | undefined>;
}

/** The queue of accepted events for the flow worker. Throws `AppError('unavailable')` when it cannot take one. */
export interface EventQueue {
  /** @param about the trigger the event is for, when the sender knows it (the receiver does). */
  send(body: string, about?: { triggerId: string }): Promise<void>;
}

/**
 * The flow worker invoked asynchronously with a flow message (Lambda's `Event` invocation): resolves
 * once Lambda holds the event, throws when it did not take it (refused, throttled, unreachable).
 */
export interface WorkerInvoker {
  invoke(body: string): Promise<void>;
}

/** When a received queue message comes back (SQS ChangeMessageVisibility). */
export interface Redelivery {
  /** The message with this receipt handle is delivered again `seconds` from now. */
  delay(receiptHandle: string, seconds: number): Promise<void>;
}

/** A queue the worker sends to: the flow queue (a direct attempt's retry), or its dead-letter queue (a message whose last attempt failed). */
export interface RetryQueue {
  /** Puts `body` on the queue, to be delivered `seconds` from now (SQS `DelaySeconds`, at most 900). */
  requeue(body: string, seconds: number): Promise<void>;
}

/**
 * Every state an execution record can be in; the OpenAPI document lists these. `refused` is a
 * delivery the receiver answered with a 4xx before any flow could start (its `error` is the code);
 * `handshake` one it answered itself as its sender's handshake (its `type` names the kind), no flow run.
 */
export const EXECUTION_STATUSES = ['queued', 'running', 'succeeded', 'failed', 'ignored', 'duplicate', 'refused', 'handshake'] as const;
/** The statuses the receiver records within a trigger's refusal budget, counted as the budget is taken. */
export type RefusalOutcome = 'refused' | 'handshake';
export type ExecutionStatus = (typeof EXECUTION_STATUSES)[number];

/** Where an execution record lives; carried in the queue message so the worker can update it. */
export interface ExecutionRef {
  triggerId: string;
  /** See `execution-id.ts`: it starts with the received time, so records list newest first. */
  executionId: string;
}

/** One run of an execution's flow. */
export interface AttemptRecord {
  attempt: number;
  started_at: string;
  finished_at?: string;
  status: 'running' | 'succeeded' | 'failed' | 'timed_out';
  error?: string;
}

/**
 * A listener's (`flowgate listen`) local answer to a delivery it was forwarded: recorded beside the
 * flow's own run, never in its place.
 */
export interface ForwardedAttempt {
  /** When the answer was recorded (ISO 8601). */
  at: string;
  /** The listener's connection id. */
  listener: string;
  /** The local server's HTTP status; absent when it could not be reached (`error` says why). */
  status?: number;
  /** Milliseconds from the listener receiving the delivery to its local server's answer. */
  ms?: number;
  error?: string;
  /** The sender got this answer (the trigger's `answer_from_listener`). */
  answered_sender?: true;
}

/**
 * A delivery's request as it was received, for inspection and replay. Secrets are replaced by
 * `"[redacted]"` before it is stored (`stored-request.ts`).
 */
export interface StoredRequest {
  method: string;
  /** Lower-case names. */
  headers: Record<string, string>;
  query: Record<string, string>;
  source_ip?: string;
  /** The raw body as text (`utf8`) or, when it is not valid UTF-8, `base64`; absent when it was not stored (over the size limit). */
  body?: string;
  body_encoding?: 'utf8' | 'base64';
  /** The body's size in bytes as received. */
  body_bytes: number;
}

export interface Execution {
  execution_id: string;
  event_id: string;
  received_at: string;
  type?: string;
  status: ExecutionStatus;
  output?: unknown;
  error?: string;
  attempts: number;
  /** When a failed attempt will be retried (ISO 8601); absent once no retry is due. */
  next_attempt_at?: string;
  /** Every run so far, oldest first. */
  timeline: AttemptRecord[];
  /** The execution this one replays. */
  replay_of?: string;
  /**
   * A refused delivery whose `type` and `event_id` were read from a body nobody verified (a wrong
   * signature or API key, an address not allowed): anyone could have written them, so they are not
   * the sender's word.
   */
  unverified?: true;
  /** The flow that runs it: set on deliveries queued or run, absent on those recorded before flows were kept. */
  flow?: string;
  /** Wait mode: what the sender was answered, when the flow shaped its reply. */
  reply?: ReplySummary;
  /** The event is one element of a batch its sender sent in one POST (`request_id`: the execution id the POST's request is stored under). */
  batch?: BatchPosition;
  /** What listeners' local servers answered when it was forwarded to them, oldest first. */
  forwarded?: ForwardedAttempt[];
}

/** An element's record keeps its batch's request by this link, not a copy. */
export interface BatchRequestLink {
  batch_request: string;
}

/** Where an element of a batch was in its POST: the POST's request is stored once, under `request_id`. */
export interface BatchPosition {
  request_id: string;
  /** From 0, in the sender's order. */
  index: number;
  size: number;
}

/** What an execution keeps of a reply its flow shaped (never its body: the flow's output has it). */
export interface ReplySummary {
  status: number;
  content_type?: string;
  /** The body's size in bytes as sent. */
  bytes: number;
}

/** An execution with its request, as one is read by id. */
export interface ExecutionDetail extends Execution {
  request?: StoredRequest;
}

/**
 * What the receiver records first: the record's fields a first write sets, and the replay claim
 * the delivery took (`claim_key`, never listed): a delivery recorded but never acknowledged (a crash
 * before its request was stored) gives that claim back, or the sender's retry would be refused as
 * a duplicate of an event that never ran.
 */
export type NewExecution = Omit<Execution, 'execution_id' | 'timeline' | 'output' | 'next_attempt_at'> & { timeline?: AttemptRecord[]; claim_key?: string };

/**
 * A move of an execution record to a new state; fields not given are cleared. `attempt` is the
 * timeline entry of run `attempt.attempt`, written whole (a start, then the same run finished).
 */
export type ExecutionChange = Pick<Execution, 'status' | 'attempts'> & { output?: unknown; error?: string; nextAttemptAt?: string; attempt?: AttemptRecord; reply?: ReplySummary };

/**
 * What `ExecutionStore.update` did with a change: `written`; `outdated`, when the record has a later
 * attempt's outcome already (or is gone); `succeeded_already`, when the record says `succeeded`
 * already, which it says for good. A change not written still adds its own attempt to the timeline
 * when the timeline has none under that number, or only its start (`running`).
 */
export type ExecutionUpdate = 'written' | 'outdated' | 'succeeded_already';

/** A record's status and attempts: all that decides what it counts as (`countOfState`). */
export type RecordState = Pick<Execution, 'status' | 'attempts'>;

/** `ExecutionStore.updateReplacing`'s answer: what was done, and for a written change the state it replaced. */
export type ReplacingUpdate = { result: 'written'; replaced: RecordState } | { result: Exclude<ExecutionUpdate, 'written'> };

/** Filters of a trigger's execution list; they combine (all must hold). */
export interface ExecutionFilter {
  statuses?: readonly ExecutionStatus[];
  /** Exact type, or a prefix when it ends in `*` (as in event filters). */
  type?: string;
  eventId?: string;
  /** ISO 8601 (as `toISOString` writes it): received at or after. */
  since?: string;
  /** ISO 8601: received before. */
  until?: string;
}

export interface ExecutionPage {
  items: Execution[];
  nextCursor: string | null;
}

/** Delivery records of a trigger (kept 7 days), their requests, dedup claims, and event payloads stored aside. */
export interface ExecutionStore {
  /**
   * Writes a new record, and the request it was made from (once: no later change rewrites it), or,
   * for an element of a batch, a link to the batch's request stored once by `storeRequest`.
   */
  record(ref: ExecutionRef, execution: NewExecution, request?: StoredRequest | BatchRequestLink): Promise<void>;
  /**
   * As `record`, unless a live record has `ref` already: then nothing is written and the answer is
   * false. The record is written before its request, so a request is never written over another's.
   * The write that claims a delivery keyed on its signed content (`receiver/claim-record.ts`).
   */
  recordFirst(ref: ExecutionRef, execution: NewExecution, request: StoredRequest): Promise<boolean>;
  /** Stores a batch's request once, under `ref` (the batch's `request_id` is its execution id), for its elements' records to link to. */
  storeRequest(ref: ExecutionRef, request: StoredRequest): Promise<void>;
  /**
   * Removes a record whose event was not accepted after all (the queue refused it), with the
   * request recorded for it, so that nothing of a delivery answered 503 is left behind.
   */
  discard(ref: ExecutionRef, eventId: string): Promise<void>;
  /**
   * Moves a record on, unless a later attempt has been recorded already, or the record says
   * `succeeded`: a success is final. Duplicate copies of one event (at-least-once delivery) may
   * run side by side, each under its own attempt number; a success is therefore written whatever
   * later attempt the record shows (keeping the higher `attempts`), and nothing moves a
   * `succeeded` record again. The normal path is one conditional write; a refused one reads the
   * record to say why (and may add the change's timeline entry, see `ExecutionUpdate`).
   */
  update(ref: ExecutionRef, change: ExecutionChange): Promise<ExecutionUpdate>;
  /**
   * `update`, answering also the status and attempts a written change replaced (read back by the
   * same write, at no further cost): what the delivery counts move from, exact whatever order
   * copies of one event write in.
   */
  updateReplacing(ref: ExecutionRef, change: ExecutionChange): Promise<ReplacingUpdate>;
  /**
   * The record's status as written last (a strongly consistent read of the small status record),
   * undefined when there is none: how a retried run learns that another copy of its event has
   * succeeded already.
   */
  statusOf(ref: ExecutionRef): Promise<ExecutionStatus | undefined>;
  /** One record with its request; undefined when there is none (or it expired). */
  get(ref: ExecutionRef): Promise<ExecutionDetail | undefined>;
  /**
   * The request a record already read (from `list`) was made from, without reading the record
   * again; undefined when none was stored (or it expired).
   */
  requestOf(ref: ExecutionRef, eventId: string): Promise<StoredRequest | undefined>;
  /** A page of a trigger's records, newest first, that match `filter`. */
  list(triggerId: string, filter: ExecutionFilter, page: { limit: number; cursor?: string }): Promise<ExecutionPage>;
  /**
   * Counts one refused delivery (or handshake: `outcome`) of a trigger in minute `minute` (epoch
   * minutes); true while the count is at most `max`, so it may be recorded. The same write counts
   * it in the trigger's delivery counts (`GET /triggers/{id}/stats`): the record written after it
   * is not counted again (`CountingExecutionStore`'s `countedBefore`).
   */
  countRefusal(triggerId: string, minute: number, max: number, outcome?: RefusalOutcome): Promise<boolean>;
  /** Takes back a `countRefusal` whose record could not be written, so the counts stay those of the list. */
  uncountRefusal(triggerId: string, minute: number, outcome?: RefusalOutcome): Promise<void>;
  /** Claims an event id for a trigger for `ttlSeconds`; false when already claimed. */
  claimEvent(triggerId: string, eventId: string, ttlSeconds: number): Promise<boolean>;
  releaseEvent(triggerId: string, eventId: string): Promise<void>;
  /** Keeps a payload too large for a queue message; returns a reference to load it by. */
  storePayload(id: string, payload: string): Promise<{ id: string; chunks: number }>;
  loadPayload(ref: { id: string; chunks: number }): Promise<string>;
}
