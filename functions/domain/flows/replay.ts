import { AppError, notFound } from '../../shared/errors.js';
import type { Clock } from '../clock.js';
import type { TriggerRecord } from '../triggers/trigger.js';
import { parseWebhookBody, type WebhookBody } from '../webhooks/body.js';
import { replayHeaders, storedBodyBytes } from '../webhooks/stored-request.js';
import { rowOfSignature } from '../webhooks/senders/catalog.js';
import { buildTriggerData } from '../webhooks/trigger-input.js';
import { newExecutionId } from './execution-id.js';
import type { BulkReplayRequest } from './execution-filter.js';
import { MAX_FLOW_INPUT_BYTES } from './limits.js';
import { buildFlowMessage } from './message.js';
import type { BatchPosition, EventQueue, ExecutionDetail, ExecutionStore } from './ports.js';
import { batchElements, elementType } from '../webhooks/batch-elements.js';
import type { BatchRule, SenderRow } from '../webhooks/senders/catalog-types.js';

export interface ReplayDeps {
  executions: ExecutionStore;
  queue: EventQueue;
  now: Clock;
  newId: () => string;
}

/** Replays of one bulk call run this many at a time: 500 of them fit the API's 30 s many times over. */
const REPLAY_CONCURRENCY = 16;

/**
 * Runs a stored delivery again through the trigger's current flow: a new execution with the same
 * `event_id` and `replay_of`, always queued, whatever the trigger's response mode. An operator's
 * action: the signature, API key, source address and event filter are not checked again, and
 * deduplication does not hold it back. The flow sees the stored request's headers less the
 * redacted ones, and the original `received_at`.
 */
export async function replayExecution(deps: ReplayDeps, trigger: TriggerRecord, executionId: string): Promise<{ execution_id: string; replay_of: string }> {
  const original = await deps.executions.get({ triggerId: trigger.id, executionId });
  if (!original) throw notFound('execution');
  return replay(deps, trigger, original);
}

/**
 * The flow input a stored delivery runs with again: its request parsed as the receiver parses it,
 * with the stored headers less the redacted ones, its own `event_id` and `received_at`, and the
 * trigger's current settings. Throws `not_replayable` when the request cannot run again.
 */
async function storedFlowInput(trigger: TriggerRecord, original: ExecutionDetail): Promise<{ inputJson: string; type?: string }> {
  const rawBody = original.request && storedBodyBytes(original.request);
  if (!original.request || !rawBody) throw new AppError('not_replayable', undefined, undefined, 'the request body was not stored');
  const headers = replayHeaders(original.request);
  let body: WebhookBody;
  try {
    body = await parseWebhookBody(rawBody, headers['content-type']);
  } catch {
    throw new AppError('not_replayable', undefined, undefined, 'the stored body is not one the receiver accepts');
  }
  const row: Partial<SenderRow> | undefined = trigger.signature ? rowOfSignature(trigger.signature) ?? {} : undefined;
  const data = original.batch
    ? batchElementInput(row?.batch, original.batch, headers, body, trigger.webhook_id, original)
    : buildTriggerData({ row, headers, body, webhookId: trigger.webhook_id, receivedAt: new Date(original.received_at), newEventId: () => original.event_id });
  data.event_id = original.event_id;
  const inputJson = JSON.stringify({ trigger: data });
  if (Buffer.byteLength(inputJson) > MAX_FLOW_INPUT_BYTES) throw new AppError('not_replayable', 'flow input over the Step Functions limit', undefined, `the flow input would be over ${MAX_FLOW_INPUT_BYTES} bytes`);
  return { inputJson, type: data.type };
}

/** An element of a batch runs again alone, as it first ran: the element at its index of the stored POST. */
function batchElementInput(rule: BatchRule | undefined, position: BatchPosition, headers: Record<string, string>, body: WebhookBody, webhookId: string, original: ExecutionDetail) {
  const element = rule && body.kind === 'json' ? batchElements(rule, body.value)?.[position.index] : undefined;
  if (element === undefined) throw new AppError('not_replayable', undefined, undefined, 'the element is not in the stored request');
  const data = buildTriggerData({ row: {}, headers, body: { kind: 'json', value: element }, webhookId, receivedAt: new Date(original.received_at), newEventId: () => original.event_id });
  const type = elementType(rule!, element);
  if (type !== undefined) data.type = type;
  data.batch = position;
  return data;
}

async function replay(deps: ReplayDeps, trigger: TriggerRecord, original: ExecutionDetail): Promise<{ execution_id: string; replay_of: string }> {
  const { inputJson, type } = await storedFlowInput(trigger, original);
  const nowMs = deps.now();
  const ref = { triggerId: trigger.id, executionId: newExecutionId(nowMs, deps.newId()) };
  await deps.executions.record(ref, {
    event_id: original.event_id,
    received_at: new Date(nowMs).toISOString(),
    ...(type !== undefined && { type }),
    status: 'queued',
    attempts: 0,
    replay_of: original.execution_id,
    flow: trigger.flow,
    ...(original.batch && { batch: original.batch }),
  }, original.batch ? { batch_request: original.batch.request_id } : original.request);
  try {
    await deps.queue.send(await buildFlowMessage(deps, { triggerId: trigger.id, flow: trigger.flow, ref }, inputJson));
  } catch (error) {
    await deps.executions.discard(ref, original.event_id).catch(() => undefined);
    throw error instanceof AppError ? error : new AppError('unavailable', (error as Error).name);
  }
  return { execution_id: ref.executionId, replay_of: original.execution_id };
}

/**
 * Replays one page (up to 500) of the trigger's executions that match the filter; the cursor goes
 * on to the next page. Executions whose request cannot run again (no stored body, or one the
 * receiver would refuse) are counted in `not_replayable` and left as they are.
 */
export async function replayMatching(deps: ReplayDeps, trigger: TriggerRecord, request: BulkReplayRequest) {
  const page = await deps.executions.list(trigger.id, request.filter, { limit: request.limit, cursor: request.cursor });
  let replayed = 0;
  let notReplayable = 0;
  const queue = [...page.items];
  const worker = async () => {
    for (let item = queue.shift(); item; item = queue.shift()) {
      try {
        // The listed record is the one to replay: only its request is read, not the record again.
        const request = await deps.executions.requestOf({ triggerId: trigger.id, executionId: item.execution_id }, item.event_id);
        await replay(deps, trigger, request ? { ...item, request } : item);
        replayed++;
      } catch (error) {
        if (!(error instanceof AppError && error.code === 'not_replayable')) throw error;
        notReplayable++;
      }
    }
  };
  await Promise.all(Array.from({ length: REPLAY_CONCURRENCY }, worker));
  return { replayed, not_replayable: notReplayable, next_cursor: page.nextCursor };
}

/** Why an unfinished execution was not queued again: it stays as it is, marked `failed` with this error. */
export const INTERRUPTED = 'interrupted';

/**
 * Queues an execution that was still `queued` or `running` when the local stack stopped (its queue
 * is in memory) again, under its own id, with the message a replay of it would carry: the run is
 * at least once, the flow sees the same `event_id`. A run that had started is recorded as an
 * attempt that failed with `interrupted`, and the next run as the attempt after it:
 *
 *   attempt 1 running ── stack stops ── restart: attempt 1 failed (interrupted) ── attempt 2 runs
 *
 * A delivery whose request can no longer run (or whose trigger is gone) is recorded `failed` with
 * the reason rather than left `queued` for ever. Returns what was done.
 */
export async function requeueExecution(
  deps: ReplayDeps,
  trigger: TriggerRecord | undefined,
  execution: ExecutionDetail & { triggerId: string },
): Promise<'requeued' | 'failed'> {
  const ref = { triggerId: execution.triggerId, executionId: execution.execution_id };
  const now = new Date(deps.now()).toISOString();
  const started = execution.status === 'running' ? execution.timeline.find((entry) => entry.attempt === execution.attempts) : undefined;
  const interrupted = started && { ...started, finished_at: now, status: 'failed' as const, error: INTERRUPTED };
  let inputJson: string;
  try {
    if (!trigger) throw new AppError('not_replayable', undefined, undefined, 'its trigger was deleted');
    ({ inputJson } = await storedFlowInput(trigger, execution));
  } catch (error) {
    if (!(error instanceof AppError && error.code === 'not_replayable')) throw error;
    await deps.executions.update(ref, { status: 'failed', attempts: execution.attempts, error: `${INTERRUPTED}: ${error.publicMessage ?? error.detail ?? error.code}`, ...(interrupted && { attempt: interrupted }) });
    return 'failed';
  }
  if (interrupted) await deps.executions.update(ref, { status: 'queued', attempts: execution.attempts, error: INTERRUPTED, attempt: interrupted });
  await deps.queue.send(await buildFlowMessage(deps, { triggerId: ref.triggerId, flow: trigger.flow, ref, attemptsBefore: execution.attempts }, inputJson));
  return 'requeued';
}
