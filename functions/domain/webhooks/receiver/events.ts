import type { BatchRequestLink, ExecutionRef, NewExecution, StoredRequest } from '../../flows/ports.js';
import type { WebhookBody } from '../body.js';
import { replayClaim, signedTimeOfClaim, type ReplayClaim } from '../replay-key.js';
import { withheldFromFlow } from '../secret-fields.js';
import type { SenderRow } from '../senders/catalog-types.js';
import { signedBodyOf } from '../senders/signed-fields.js';
import { REDACTED, storedRequest } from '../stored-request.js';
import { buildTriggerData, type TriggerData } from '../trigger-input.js';
import type { Delivery, IncomingWebhook, ReceiverDeps } from './types.js';

/**
 * One event the per-event stages (route, dispatch) take once: a whole delivery, or one element of
 * a batch (`batch.ts`).
 */
export interface ReceivedEvent {
  ref: ExecutionRef;
  /** The flow input's `trigger`. */
  data: TriggerData;
  /** What every record of the event starts from. */
  execution: Pick<NewExecution, 'event_id' | 'received_at' | 'type' | 'batch'>;
  /** What its first record keeps of the request: the request itself, or the batch request it came in (stored once). */
  stored: StoredRequest | BatchRequestLink;
  /** The claim that makes it run at most once (`replay-key.ts`), if any. */
  claim?: ReplayClaim;
  /**
   * The claim is spent before the filter: a single-use id is spent by its first delivery even
   * when the filter ignores it, since the payload it does not bind could otherwise be rewritten
   * to pass the filter on a second use.
   */
  spentFirst: boolean;
  /**
   * Set when `ref` is made from the claim (`claim-record.ts`): the record's first write is the
   * claim. A duplicate's record, or one that must not claim, goes under `otherRef`.
   */
  /** `alsoClaimItem`: a claim item is taken too, as versions up to 1.0.0 took it (`claim-record.ts`). */
  recordIsClaim?: { otherRef: ExecutionRef; alsoClaimItem?: true };
  /** The signed timestamp of a claim on the exact signed content (`signedTimeOfClaim`): what `claim-record.ts` keys the record on. */
  claimSignedAtMs?: number;
  /** The flow input, when serialised ahead: a batch checks every element's size before any of it is queued. */
  inputJson?: string;
}

/** The flow's view of a verified delivery: its headers and body without the sender's secrets, and only what it signs. */
export function visibleToFlow(request: IncomingWebhook, delivery: Delivery, row: SenderRow | undefined, body: WebhookBody) {
  return withheldFromFlow(request.headers, signedBodyOf(row, body), delivery.secrets, REDACTED);
}

/** A whole delivery as one event: its type and id where its sender's row says, its claim on the signed material. */
export function wholeDelivery(deps: ReceiverDeps, request: IncomingWebhook, delivery: Delivery, row: SenderRow | undefined, body: WebhookBody): ReceivedEvent {
  const { headers, body: visibleBody } = visibleToFlow(request, delivery, row, body);
  const data = buildTriggerData({ row, headers, body: visibleBody, webhookId: request.webhookId, receivedAt: delivery.receivedAt, newEventId: deps.newId });
  // A retry or a replay: with `deduplicate`, of the same signed id or content; whatever it says,
  // of a single-use id or of the same signed bytes within the sender's tolerance (`replay-key.ts`).
  const received = { ...request, url: request.publicUrl, body };
  const claim = replayClaim(row, delivery.trigger.deduplicate, received, data.event_id);
  const claimSignedAtMs = signedTimeOfClaim(row, delivery.trigger.deduplicate, claim, received);
  return {
    ref: delivery.ref,
    data,
    execution: { event_id: data.event_id, received_at: data.received_at, ...(data.type !== undefined && { type: data.type }) },
    stored: storedRequest(request, true, delivery.secrets),
    ...(claim && { claim }),
    ...(claimSignedAtMs !== undefined && { claimSignedAtMs }),
    spentFirst: claim !== undefined && row?.single_use !== undefined,
  };
}
