import type { TriggerData } from '../webhooks/trigger-input.js';
import type { ExecutionRef, ExecutionStore } from './ports.js';

/** What the receiver puts on the flow queue for the worker. */
export interface FlowMessage {
  v: 1;
  trigger_id: string;
  flow: string;
  ref: ExecutionRef;
  /** The flow input inline, or a reference to it stored aside when too large for a message. */
  input?: { trigger: TriggerData };
  payload?: { id: string; chunks: number };
  /**
   * Attempts the execution had already made when this message was sent: absent (0) for a new
   * event or a replay; set when the local stack queues an unfinished execution again after a
   * restart, so its next run is recorded as the attempt after them rather than as attempt 1.
   */
  attempts_before?: number;
  /**
   * Of `attempts_before`, those made outside the queue (a direct invocation of the worker,
   * `direct-first-queue.ts`): they count against the queue's `maxReceiveCount`, so an event retried
   * through the queue after a direct attempt still has the same number of attempts in all.
   */
  direct_attempts?: number;
}

/**
 * Messages above this go through the payload store. SQS takes up to 256 KiB (1 MiB in AWS since
 * 2025); staying well under the older limit keeps every engine and region happy.
 */
export const MAX_INLINE_MESSAGE_BYTES = 200 * 1024;

export function parseFlowMessage(body: string): FlowMessage {
  const message = JSON.parse(body) as FlowMessage;
  const attemptsBefore = message?.attempts_before;
  if (message?.v !== 1 || typeof message.flow !== 'string' || typeof message.ref?.executionId !== 'string' || (!message.input && !message.payload)
    || (attemptsBefore !== undefined && !(Number.isSafeInteger(attemptsBefore) && attemptsBefore >= 0))
    || (message.direct_attempts !== undefined && !(Number.isSafeInteger(message.direct_attempts) && message.direct_attempts >= 0 && message.direct_attempts <= (attemptsBefore ?? 0)))) {
    throw new Error('not a flow message');
  }
  return message;
}

/**
 * The queue message for the worker; the input goes in as the text already serialised, or, when
 * the message would be too large, is stored aside and referenced.
 */
export async function buildFlowMessage(
  deps: { executions: Pick<ExecutionStore, 'storePayload'>; newId: () => string },
  target: { triggerId: string; flow: string; ref: ExecutionRef; attemptsBefore?: number },
  inputJson: string,
): Promise<string> {
  const { triggerId, flow, ref, attemptsBefore } = target;
  const head = JSON.stringify({ v: 1, trigger_id: triggerId, flow, ref, ...(attemptsBefore ? { attempts_before: attemptsBefore } : {}) } satisfies Omit<FlowMessage, 'input' | 'payload'>).slice(0, -1);
  const inline = `${head},"input":${inputJson}}`;
  if (Buffer.byteLength(inline) <= MAX_INLINE_MESSAGE_BYTES) return inline;
  const payload = await deps.executions.storePayload(deps.newId(), inputJson);
  return `${head},"payload":${JSON.stringify(payload)}}`;
}
