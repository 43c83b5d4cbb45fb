export type FlowResult =
  | { status: 'succeeded'; output: unknown }
  | { status: 'failed'; error: string; cause?: string }
  | { status: 'timed_out' };

/** Runs a flow to completion (Step Functions express, synchronously) within a time limit. */
export interface FlowRunner {
  /** @param inputJson the flow input `{"trigger": …}` as JSON text (serialised once by the caller). */
  run(flow: string, inputJson: string, options: { timeoutMs: number; name?: string }): Promise<FlowResult>;
}

/** The queue of accepted events for the flow worker. Throws `AppError('unavailable')` when it cannot take one. */
export interface EventQueue {
  send(body: string): Promise<void>;
}

/** When a received queue message comes back (SQS ChangeMessageVisibility). */
export interface Redelivery {
  /** The message with this receipt handle is delivered again `seconds` from now. */
  delay(receiptHandle: string, seconds: number): Promise<void>;
}

/** Every state an execution record can be in; the OpenAPI document lists these. */
export const EXECUTION_STATUSES = ['queued', 'running', 'succeeded', 'failed', 'ignored', 'duplicate'] as const;
export type ExecutionStatus = (typeof EXECUTION_STATUSES)[number];

/** Where an execution record lives; carried in the queue message so the worker can update it. */
export interface ExecutionRef {
  triggerId: string;
  /** Sort key: received time then a delivery id, so records list newest first. */
  key: string;
}

export interface Execution {
  event_id: string;
  received_at: string;
  type?: string;
  status: ExecutionStatus;
  output?: unknown;
  error?: string;
  attempts: number;
  /** When a failed attempt will be retried (ISO 8601); absent once no retry is due. */
  next_attempt_at?: string;
}

/** A move of an execution record to a new state; fields not given are cleared. */
export type ExecutionChange = Pick<Execution, 'status' | 'attempts'> & { output?: unknown; error?: string; nextAttemptAt?: string };

/** Delivery records of a trigger (kept 7 days), dedup claims, and event payloads stored aside. */
export interface ExecutionStore {
  record(ref: ExecutionRef, execution: Execution): Promise<void>;
  /** Removes a record whose event was not accepted after all (the queue refused it). */
  discard(ref: ExecutionRef): Promise<void>;
  /** Moves a record on; ignored when a later attempt has already been recorded. */
  update(ref: ExecutionRef, change: ExecutionChange): Promise<void>;
  list(triggerId: string, page: { limit: number; cursor?: string }): Promise<{ items: Execution[]; nextCursor: string | null }>;
  /** Claims an event id for a trigger for `ttlSeconds`; false when already claimed. */
  claimEvent(triggerId: string, eventId: string, ttlSeconds: number): Promise<boolean>;
  releaseEvent(triggerId: string, eventId: string): Promise<void>;
  /** Keeps a payload too large for a queue message; returns a reference to load it by. */
  storePayload(id: string, payload: string): Promise<{ id: string; chunks: number }>;
  loadPayload(ref: { id: string; chunks: number }): Promise<string>;
}
