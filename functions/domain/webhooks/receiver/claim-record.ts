import { newExecutionId } from '../../flows/execution-id.js';
import type { ReceivedEvent } from './events.js';

/** Characters of the claim key's digest in the id: 132 bits, as many as a random id's. */
const DIGEST_CHARS = 22;

/**
 * The event keyed on its claim, when its claim allows: a claim on the exact signed content with
 * its signed timestamp (`replay-key.ts`, `signedTimeOfClaim`). Its record's id is then made from that
 * timestamp and the claim key's digest, so a replay of the delivery, whenever it comes, has the
 * same id: the first write of the record (a conditional put, `ExecutionStore.recordFirst`) is the
 * claim, and no claim item is written beside it (one write unit less per delivery).
 *
 *   delivery  t=1795817000 + body ──sha256──▶ id 0mi5k2s00k<digest>  put if none ──▶ queued
 *   replay    t=1795817000 + body ──sha256──▶ id 0mi5k2s00k<digest>  put fails   ──▶ duplicate
 *   retry     t=1795817060 + body ──sha256──▶ another id             put         ──▶ queued
 *
 * The record sorts by the signed time (within the sender's tolerance of its arrival); its
 * `received_at` stays when it arrived. A duplicate, and a record that must not claim (an event the
 * filter ignores without spending its claim), go under the delivery's own id (`otherRef`).
 *
 * Versions up to 1.0.0 claimed an exact replay with a claim item, not with the record: after an
 * upgrade, a delivery such a version took (signed before the new code ran) could be replayed once
 * more, its record keyed anew. So a delivery signed before this receiver started
 * (`claimItemsSignedBeforeMs`) takes the claim item too (`alsoClaimItem`), which an older version's
 * item refuses. Deliveries signed once it runs were never seen by an older version and cost
 * nothing more. Once every timestamp signed before a 1.0.0 receiver stopped is past its
 * tolerance (twice the longest tolerance a row allows), the rule does nothing and can go.
 */
export function keyedOnClaim(event: ReceivedEvent, options: { claimItemsSignedBeforeMs?: number } = {}): ReceivedEvent {
  const { claim, claimSignedAtMs } = event;
  if (!claim || claimSignedAtMs === undefined || !claim.key.startsWith('sha256:') || 'batch_request' in event.stored) return event;
  const digest = claim.key.slice('sha256:'.length, 'sha256:'.length + DIGEST_CHARS);
  const { claimItemsSignedBeforeMs } = options;
  return {
    ...event,
    ref: { triggerId: event.ref.triggerId, executionId: newExecutionId(claimSignedAtMs, `k${digest}`) },
    recordIsClaim: { otherRef: event.ref, ...(claimItemsSignedBeforeMs !== undefined && claimSignedAtMs < claimItemsSignedBeforeMs && { alsoClaimItem: true as const }) },
  };
}

