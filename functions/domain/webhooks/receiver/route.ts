import { AppError } from '../../../shared/errors.js';
import { MAX_FLOW_INPUT_BYTES } from '../../flows/limits.js';
import type { StoredRequest } from '../../flows/ports.js';
import type { TriggerRecord } from '../../triggers/trigger.js';
import { matchesEventFilter } from '../trigger-input.js';
import type { ReceivedEvent } from './events.js';
import { ownAnswer, type ReceiverDeps, type WebhookReply } from './types.js';

/** How an event ended, for its POST's answer: the reply, and what a batch's answer lists for it. */
export interface EventOutcome {
  reply: WebhookReply;
  result: unknown;
}

/** An event routed to its flow: its input, serialised once, and how to give its claim back if the flow never starts. */
export interface FlowBound {
  inputJson: string;
  /** The key the event claimed, if it claimed one. */
  claimKey?: string;
  releaseClaim(): Promise<void>;
}

/**
 * Stage "route", once per event: the event filter and the claim that makes it run at most once.
 * An event ignored or a duplicate is recorded so and answered here; one bound for its flow comes
 * back with its input.
 */
export async function route(deps: ReceiverDeps, record: TriggerRecord, event: ReceivedEvent): Promise<EventOutcome | FlowBound> {
  const { ref, data, execution, stored, spentFirst, inputJson: serialised, recordIsClaim } = event;
  // Keyed on its claim (`claim-record.ts`), the event's record is its claim: no claim item, unless
  // it was signed before this receiver started, when an older version may hold its claim item.
  const claim = recordIsClaim && !recordIsClaim.alsoClaimItem ? undefined : event.claim;
  if (spentFirst && claim && !(await deps.executions.claimEvent(record.id, claim.key, claim.ttlSeconds))) return answerDuplicate(deps, record, event);
  if (!matchesEventFilter(record.event_filter, data.type)) {
    // An ignored event's answer names it (as `accepted` does) and says why: the sender's logs then say which event was dropped.
    const ignored = { status: 'ignored' as const, event_id: data.event_id, reason: ignoredReason(data.type) };
    const outcome = { reply: ownAnswer(record, ignored), result: { status: ignored.status, event_id: data.event_id } };
    const recordOf = { ...execution, status: ignored.status, attempts: 0 };
    // A single-use claim is spent by the ignored delivery too: keyed on it, its record is the claim.
    if (recordIsClaim && spentFirst) return (await deps.executions.recordFirst(ref, recordOf, stored as StoredRequest)) ? outcome : answerDuplicate(deps, record, event);
    await deps.executions.record(recordIsClaim?.otherRef ?? ref, recordOf, stored);
    return outcome;
  }
  // Serialised once: its size decides whether the flow can start at all, and the same text goes
  // into the queue message or the synchronous start.
  const inputJson = serialised ?? JSON.stringify({ trigger: data });
  if (Buffer.byteLength(inputJson) > MAX_FLOW_INPUT_BYTES) throw new AppError('payload_too_large', 'flow input over the Step Functions limit', undefined, `the flow input is over ${MAX_FLOW_INPUT_BYTES} bytes`);
  if (claim && !spentFirst && !(await deps.executions.claimEvent(record.id, claim.key, claim.ttlSeconds))) return answerDuplicate(deps, record, event);
  // A claimed event whose flow never started must stay claimable, or the sender's retry is lost
  // (keyed on its claim, discarding its record gives it back).
  return { inputJson, ...(claim && { claimKey: claim.key }), releaseClaim: () => (claim ? deps.executions.releaseEvent(record.id, claim.key) : Promise.resolve()) };
}

/** A duplicate, recorded so (under the delivery's own id when the event's is its claim's) and answered. */
export async function answerDuplicate(deps: ReceiverDeps, record: TriggerRecord, event: ReceivedEvent): Promise<EventOutcome> {
  await deps.executions.record(event.recordIsClaim?.otherRef ?? event.ref, { ...event.execution, status: 'duplicate', attempts: 0 }, event.stored);
  return { reply: ownAnswer(record, { status: 'duplicate' }), result: { status: 'duplicate', event_id: event.data.event_id } };
}

/** Why the event filter let an event by, in words for the sender's logs (the filter itself stays the owner's). */
const ignoredReason = (type: unknown): string =>
  typeof type === 'string' && type !== '' ? `the event type ${JSON.stringify(type)} matches none of the trigger's event_filter` : "the event has no type, and the trigger's event_filter runs only the types it lists";

export const isAnswered = (routed: EventOutcome | FlowBound): routed is EventOutcome => 'reply' in routed;
