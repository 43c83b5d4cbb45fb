import { newExecutionId } from '../../flows/execution-id.js';
import type { BatchPosition } from '../../flows/ports.js';
import type { WebhookBody } from '../body.js';
import { AppError } from '../../../shared/errors.js';
import { isPlainObject } from '../../../shared/json.js';
import { MAX_FLOW_INPUT_BYTES } from '../../flows/limits.js';
import { matchesEventFilter } from '../trigger-input.js';
import { MAX_BATCH_ELEMENTS, batchElements, elementContentId, elementDedupKey, elementId, elementType } from '../batch-elements.js';
import { DEDUP_WINDOW_SECONDS, singleUseWindowSeconds } from '../replay-key.js';
import type { BatchRule, SenderRow } from '../senders/catalog-types.js';
import { storedRequest } from '../stored-request.js';
import { buildTriggerData } from '../trigger-input.js';
import { dispatch } from './dispatch.js';
import { visibleToFlow, type ReceivedEvent } from './events.js';
import { isAnswered, route, type EventOutcome } from './route.js';
import { ownAnswer, type Delivery, type IncomingWebhook, type ReceiverDeps, type WebhookReply } from './types.js';

/** Elements of one batch routed and dispatched at once: enough to keep a 100-element POST quick, few enough not to flood the store. */
const ELEMENT_CONCURRENCY = 8;

/** A batch to split: the sender's rule, and its elements as the flow may see them (the sender's secrets withheld). */
export interface SplitBatch {
  rule: BatchRule;
  elements: unknown[];
  headers: Record<string, string>;
  /** The row's single-use window (`replay-key.ts`): a deduplicating trigger's element claims last at least as long. */
  replayWindowSeconds?: number;
}

/**
 * The batch a verified delivery carries, when its sender batches, the trigger splits batches and
 * the body holds a list where the row says; `undefined` otherwise (one delivery, as today). A batch
 * of more than `MAX_BATCH_ELEMENTS` is refused, 413 `payload_too_large`, before anything is written.
 */
export function batchOf(request: IncomingWebhook, delivery: Delivery, row: SenderRow | undefined, body: WebhookBody): SplitBatch | undefined {
  if (!row?.batch || delivery.trigger.split_batches === false || body.kind !== 'json') return undefined;
  const { headers, body: visible } = visibleToFlow(request, delivery, row, body);
  const elements = batchElements(row.batch, visible.value);
  if (elements && elements.length > MAX_BATCH_ELEMENTS) {
    throw new AppError('payload_too_large', `batch of ${elements.length} elements`, undefined,
      `A batch may carry at most ${MAX_BATCH_ELEMENTS} events to a trigger that splits batches; this one carries ${elements.length}. Have the sender send fewer per POST, or set the trigger's split_batches to false to take such a POST whole.`);
  }
  const replayWindowSeconds = singleUseWindowSeconds(row);
  return elements && { rule: row.batch, elements, headers, ...(replayWindowSeconds !== undefined && { replayWindowSeconds }) };
}

/** One element of a batch as planned: its event, or the earlier element it repeats. */
type PlannedElement = { event: ReceivedEvent } | { copyOf: number; eventId: string };

/**
 * Checks a batch whole before anything of it is written or queued, and collapses repeats: every
 * element must be a JSON object (400), and each that would run must make a flow input Step
 * Functions takes (413); either names the element, and nothing of the POST runs. An element whose
 * key (`elementDedupKey`: its signed id, else the SHA-256 of its content) an earlier element of the
 * same POST has is that element again: it runs once, whatever the trigger's `deduplicate` says
 * (a captured element copied 1,000 times into one POST is one event, not 1,000 runs).
 */
function planBatch(deps: ReceiverDeps, request: IncomingWebhook, delivery: Delivery, batch: SplitBatch): PlannedElement[] {
  const { rule } = batch;
  const firstOf = new Map<string, number>();
  const planned: PlannedElement[] = [];
  const size = batch.elements.length;
  for (const [index, element] of batch.elements.entries()) {
    if (!isPlainObject(element)) {
      throw new AppError('validation_error', `batch element ${index} is not an object`, undefined, `elements[${index}] of the batch is not a JSON object; nothing of this POST was queued.`);
    }
    const key = elementDedupKey(rule, element);
    const earlier = firstOf.get(key);
    if (earlier !== undefined) {
      const first = planned[earlier] as { event: ReceivedEvent };
      planned.push({ copyOf: earlier, eventId: first.event.data.event_id });
      continue;
    }
    firstOf.set(key, index);
    const event = elementEvent(deps, request, delivery, batch, element, { request_id: delivery.ref.executionId, index, size });
    if (matchesEventFilter(delivery.trigger.event_filter, event.data.type)) {
      event.inputJson = JSON.stringify({ trigger: event.data });
      const bytes = Buffer.byteLength(event.inputJson);
      if (bytes > MAX_FLOW_INPUT_BYTES) {
        throw new AppError('payload_too_large', `batch element ${index}: flow input over the Step Functions limit`, undefined,
          `elements[${index}] of the batch (event ${event.data.event_id}) makes a flow input of ${bytes} bytes, over the ${MAX_FLOW_INPUT_BYTES} bytes a flow can start with; nothing of this POST was queued.`);
      }
    }
    planned.push({ event });
  }
  return planned;
}

/**
 * The per-event stages once per element: the POST's request is stored once (under the delivery's
 * execution id, the batch's `request_id`), then each element is routed and dispatched as an event
 * of its own, with its own record, type, id, filter decision, claim and flow run. The batch is
 * checked whole first (`planBatch`): a bad element refuses the POST before anything of it is
 * stored or queued, and a repeat of an element within the POST runs once. The sender gets
 * one answer: acknowledge mode, once every element is recorded and queued (one that could not be
 * fails the POST, so the sender sends it again); wait mode, the elements' results as a JSON array
 * in their order (a flow's output, or `{status, event_id}` for an element ignored or a duplicate),
 * or the first failure's error.
 */
export async function receiveBatch(deps: ReceiverDeps, request: IncomingWebhook, delivery: Delivery, batch: SplitBatch, whole: ReceivedEvent): Promise<WebhookReply> {
  const { trigger: record } = delivery;
  // Without `deduplicate`, the POST's own single-use claim (an exact replay within the sender's
  // tolerance) holds for the POST as a whole, before any element is looked at: a replay is one
  // duplicate record, as an unsplit POST's is. With it, each element claims its own key instead.
  const planned = planBatch(deps, request, delivery, batch);
  const postClaim = record.deduplicate ? undefined : whole.claim;
  if (postClaim && !(await deps.executions.claimEvent(record.id, postClaim.key, postClaim.ttlSeconds))) {
    await deps.executions.record(whole.ref, { ...whole.execution, status: 'duplicate', attempts: 0 }, whole.stored);
    return ownAnswer(record, { status: 'duplicate' });
  }
  try {
    return await receiveElements(deps, request, delivery, planned);
  } catch (error) {
    // Nothing of a POST that failed may keep its retry out.
    if (postClaim) await deps.executions.releaseEvent(record.id, postClaim.key).catch(() => undefined);
    throw error;
  }
}

async function receiveElements(deps: ReceiverDeps, request: IncomingWebhook, delivery: Delivery, planned: PlannedElement[]): Promise<WebhookReply> {
  const { trigger: record, ref: requestRef } = delivery;
  await deps.executions.storeRequest(requestRef, storedRequest(request, true, delivery.secrets));
  const size = planned.length;
  const outcomes = new Array<PromiseSettledResult<EventOutcome>>(size);
  let next = 0;
  const worker = async () => {
    for (let index = next++; index < size; index = next++) {
      const plan = planned[index]!;
      if ('copyOf' in plan) {
        // A repeat within the POST: answered as a duplicate, not recorded again (its first is).
        const duplicate = { status: 'duplicate', event_id: plan.eventId };
        outcomes[index] = { status: 'fulfilled', value: { reply: ownAnswer(record, duplicate), result: duplicate } };
        continue;
      }
      const { event } = plan;
      outcomes[index] = await route(deps, record, event)
        .then((routed) => (isAnswered(routed) ? routed : dispatch(deps, record, event, routed, request.answerByMs)))
        .then((value) => ({ status: 'fulfilled' as const, value }), (reason: unknown) => ({ status: 'rejected' as const, reason }));
    }
  };
  await Promise.all(Array.from({ length: Math.min(ELEMENT_CONCURRENCY, size) }, worker));
  const failed = outcomes.find((outcome) => outcome.status === 'rejected');
  if (failed) throw failed.reason;
  const results = outcomes.map((outcome) => (outcome as PromiseFulfilledResult<EventOutcome>).value.result);
  if (record.response_mode === 'wait') return { status: 200, body: fitWaitAnswer(results, planned) };
  return ownAnswer(record, { status: 'accepted', request_id: requestRef.executionId, events: results });
}

/**
 * The bytes of a wait-mode batch answer, as Lambda's response carries it (the body's text escaped
 * once more inside it): 5 MiB leaves a margin under Lambda's 6 MB response limit. Each flow's output
 * is at most 256 KiB, but a batch of them can pass it.
 */
const MAX_WAIT_ANSWER_BYTES = 5 * 1024 * 1024;

/**
 * A wait-mode batch answer that Lambda can return: the flows' outputs in element order, or, when
 * together they would pass {@link MAX_WAIT_ANSWER_BYTES}, each element's `{status, event_id}`
 * (`output_omitted: true` for a flow's output, which its execution record keeps).
 */
function fitWaitAnswer(results: unknown[], planned: PlannedElement[]): unknown[] {
  if (Buffer.byteLength(JSON.stringify(JSON.stringify(results))) <= MAX_WAIT_ANSWER_BYTES) return results;
  return results.map((result, index) => {
    const plan = planned[index]!;
    if ('copyOf' in plan || (isPlainObject(result) && typeof result.status === 'string' && typeof result.event_id === 'string' && Object.keys(result).length === 2)) return result;
    return { status: 'succeeded', event_id: plan.event.data.event_id, output_omitted: true };
  });
}

/** One element as an event: its own execution id, type, id and claim; its records point at the batch's stored request. */
function elementEvent(deps: ReceiverDeps, request: IncomingWebhook, delivery: Delivery, batch: SplitBatch, element: unknown, position: BatchPosition): ReceivedEvent {
  const { rule } = batch;
  const id = elementId(rule, element);
  const type = elementType(rule, element);
  const data = buildTriggerData({
    // The element's type and id are read by the batch rule, below and in `newEventId`.
    row: {},
    headers: batch.headers,
    body: { kind: 'json', value: element },
    webhookId: request.webhookId,
    receivedAt: delivery.receivedAt,
    newEventId: () => id ?? elementContentId(element),
  });
  if (type !== undefined) data.type = type;
  data.batch = position;
  return {
    ref: { triggerId: delivery.trigger.id, executionId: newExecutionId(delivery.receivedAt.getTime(), deps.newId()) },
    data,
    execution: { event_id: data.event_id, received_at: data.received_at, ...(type !== undefined && { type }), batch: position },
    stored: { batch_request: position.request_id },
    ...(delivery.trigger.deduplicate && { claim: { key: elementDedupKey(rule, element), ttlSeconds: Math.max(DEDUP_WINDOW_SECONDS, batch.replayWindowSeconds ?? 0) } }),
    spentFirst: false,
  };
}
