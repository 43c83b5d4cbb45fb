import { AppError } from '../../../shared/errors.js';
import { buildFlowMessage } from '../../flows/message.js';
import type { TriggerRecord } from '../../triggers/trigger.js';
import { flowWaitMs } from '../wait-budget.js';
import type { ReceivedEvent } from './events.js';
import type { NewExecution, StoredRequest } from '../../flows/ports.js';
import { answerDuplicate, type EventOutcome, type FlowBound } from './route.js';
import { ownAnswer, type ReceiverDeps, type WebhookReply } from './types.js';
import type { ListenerAnswer } from '../../listen/ports.js';

/** Flow-shaped replies load with the first wait-mode answer that needs one. */
let flowReplies: Promise<typeof import('../flow-reply.js')> | undefined;

/**
 * Stage "dispatch", once per event bound for its flow: queued for the flow worker (acknowledge
 * mode: answered once the queue holds it), or run while the sender waits (wait mode: answered with
 * the flow's output, or the reply it shaped). Its record is written first, so the event is never
 * lost between the two; an event whose flow could not start leaves no record and no claim behind.
 */
export async function dispatch(deps: ReceiverDeps, record: TriggerRecord, event: ReceivedEvent, bound: FlowBound, answerByMs: number | undefined): Promise<EventOutcome> {
  const { ref, execution, stored } = event;
  const { inputJson, claimKey, releaseClaim } = bound;
  // Keyed on its claim (`claim-record.ts`), the record's first write is the claim: a replay's finds it taken.
  const recordFirst = async (first: NewExecution): Promise<boolean> => {
    if (event.recordIsClaim) return deps.executions.recordFirst(ref, first, stored as StoredRequest);
    await deps.executions.record(ref, first, stored);
    return true;
  };
  if (record.response_mode === 'acknowledge') {
    if (!(await recordFirst({ ...execution, flow: record.flow, status: 'queued', attempts: 0, ...(claimKey !== undefined && { claim_key: claimKey }) }))) return answerDuplicate(deps, record, event);
    try {
      await deps.queue.send(await buildFlowMessage(deps, { triggerId: record.id, flow: record.flow, ref }, inputJson), { triggerId: record.id });
    } catch (error) {
      await Promise.allSettled([deps.executions.discard(ref, execution.event_id), releaseClaim()]);
      throw error instanceof AppError ? error : new AppError('unavailable', (error as Error).name);
    }
    const accepted = { status: 'accepted', event_id: execution.event_id };
    return { reply: ownAnswer(record, accepted), result: accepted };
  }

  const waitMs = flowWaitMs({ waitTimeoutMs: deps.waitTimeoutMs, nowMs: deps.now(), answerByMs });
  if (waitMs <= 0) {
    // A cold start and the reads before the flow used up the gateway's time: answer our 504 now
    // rather than start a flow whose answer could only arrive after the gateway's bare 503.
    await releaseClaim();
    throw new AppError('flow_timeout', 'no time left to run the flow');
  }
  const started_at = new Date(deps.now()).toISOString();
  if (!(await recordFirst({ ...execution, flow: record.flow, status: 'running', attempts: 1, timeline: [{ attempt: 1, started_at, status: 'running' }] }))) return answerDuplicate(deps, record, event);
  // A listener's answer, when the trigger takes it: asked now (its push is under way), taken over
  // the flow's once the flow is done, whose run is recorded either way.
  const fromListener = record.answer_from_listener === true && deps.listeners ? deps.listeners.answer(ref, waitMs) : undefined;
  if (!fromListener) return runWhileWaiting(deps, record, event, bound, waitMs, started_at);
  let outcome: EventOutcome;
  try {
    outcome = await runWhileWaiting(deps, record, event, bound, waitMs, started_at);
  } catch (error) {
    const local = await fromListener;
    if (local) return { reply: listenerReply(local), result: undefined };
    throw error;
  }
  const local = await fromListener;
  return local ? { reply: listenerReply(local), result: outcome.result } : outcome;
}

const listenerReply = (answer: ListenerAnswer): WebhookReply =>
  ({ status: answer.status, headers: answer.headers, raw: { body: answer.body, isBase64Encoded: answer.isBase64Encoded } });

/** Wait mode: runs the flow while the sender waits and answers with its output, or the reply it shaped. */
async function runWhileWaiting(deps: ReceiverDeps, record: TriggerRecord, event: ReceivedEvent, bound: FlowBound, waitMs: number, started_at: string): Promise<EventOutcome> {
  const { ref, execution } = event;
  const { inputJson, releaseClaim } = bound;
  let result;
  try {
    result = await deps.flows.run(record.flow, inputJson, { timeoutMs: waitMs });
  } catch (error) {
    await Promise.allSettled([deps.executions.discard(ref, execution.event_id), releaseClaim()]);
    throw error;
  }
  const finished_at = new Date(deps.now()).toISOString();
  if (result.status === 'succeeded') {
    const { replyFromFlowOutput, summarizeReply } = await (flowReplies ??= import('../flow-reply.js'));
    const shaped = replyFromFlowOutput(result.output);
    if (shaped.kind === 'malformed') {
      // The flow ran, but what it asked to answer cannot be sent: the sender gets our 502.
      await deps.executions.update(ref, { status: 'failed', attempts: 1, output: result.output, error: shaped.reason, attempt: { attempt: 1, started_at, finished_at, status: 'failed', error: shaped.reason } });
      throw new AppError('flow_failed', shaped.reason);
    }
    const reply = shaped.kind === 'shaped' ? summarizeReply(shaped.reply) : undefined;
    await deps.executions.update(ref, { status: 'succeeded', attempts: 1, output: result.output, ...(reply && { reply }), attempt: { attempt: 1, started_at, finished_at, status: 'succeeded' } });
    if (shaped.kind === 'json') return { reply: { status: 200, body: result.output }, result: result.output };
    const { status, headers, body, isBase64Encoded } = shaped.reply;
    return { reply: { status, headers, raw: { body, isBase64Encoded } }, result: result.output };
  }
  const error = result.status === 'timed_out' ? 'flow_timeout' : 'flow_failed';
  const reason = result.status === 'failed' ? result.error : error;
  await deps.executions.update(ref, { status: 'failed', attempts: 1, error: reason, attempt: { attempt: 1, started_at, finished_at, status: result.status, error: reason } });
  throw new AppError(error);
}
