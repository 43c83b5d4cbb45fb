import { parseFlowMessage, type FlowMessage } from './message.js';

/*
 * The flow worker's side of the direct path (`direct-first-queue.ts`): what a failed direct attempt
 * becomes on the flow queue. Apart from `message.ts`, which the receiver loads at init.
 */

/**
 * The message of a retry through the queue after `attempts` more attempts made outside it (a
 * direct attempt that failed, or a worker that crashed on one): counted in `attempts_before` (the
 * record's attempt numbers go on) and in `direct_attempts` (the queue's receives are fewer).
 */
export function retryAfterDirect(message: FlowMessage, attempts: number): string {
  return JSON.stringify({
    ...message,
    attempts_before: (message.attempts_before ?? 0) + attempts,
    direct_attempts: (message.direct_attempts ?? 0) + attempts,
  } satisfies FlowMessage);
}

/**
 * Lambda's record of an asynchronous invocation that failed (its on-failure destination is the flow
 * queue): `requestPayload` is the flow message the worker was invoked with, `requestContext`'s
 * `approximateInvokeCount` the runs it had (0 when the event expired unrun). Returns the message
 * to retry through the queue, or undefined when `body` is not such a record.
 * https://docs.aws.amazon.com/lambda/latest/dg/invocation-async-retain-records.html
 */
export function retryOfDestinationRecord(body: string): string | undefined {
  if (!body.startsWith('{"version"') && !body.includes('"requestPayload"')) return undefined;
  let record: { requestContext?: { approximateInvokeCount?: unknown }; requestPayload?: unknown };
  try {
    record = JSON.parse(body) as typeof record;
  } catch {
    return undefined;
  }
  if (typeof record?.requestPayload !== 'object' || record.requestPayload === null || typeof record.requestContext !== 'object') return undefined;
  const invoked = record.requestContext.approximateInvokeCount;
  const attempts = Number.isSafeInteger(invoked) && (invoked as number) >= 0 ? invoked as number : 1;
  let message: FlowMessage;
  try {
    message = parseFlowMessage(JSON.stringify(record.requestPayload));
  } catch {
    return undefined;
  }
  return retryAfterDirect(message, attempts);
}
