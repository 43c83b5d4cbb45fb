import { logFault } from '../../../shared/logger.js';
import type { RefusalOutcome } from '../../flows/ports.js';
import type { HandshakeKindName } from '../handshakes.js';
import { storedRequest } from '../stored-request.js';
import { eventType, senderEventId } from '../trigger-input.js';
import { bodyOf } from './read.js';
import { senderRowOf } from './sender-row.js';
import type { Delivery, IncomingWebhook, ReceiverDeps } from './types.js';

/**
 * Refusals recorded as `refused` executions of the trigger they were sent to. Unknown and disabled
 * ids (404) are not: there is no trigger to own them.
 */
export const RECORDED_REFUSALS: ReadonlySet<string> = new Set([
  'method_not_allowed', 'payload_too_large', 'ip_not_allowed', 'unauthorized', 'invalid_signature', 'unsupported_media_type', 'validation_error',
]);

/**
 * The refusals decided after the request proved its sender (a verified body that breaks the row's
 * body rule, a bad batch element). Any other refusal came with a body anyone could have written:
 * the type and id read from it are marked `unverified`, never shown as the sender's.
 */
const REFUSED_AFTER_VERIFYING: ReadonlySet<string> = new Set(['validation_error']);

/**
 * Stage "record", for a refused delivery: recorded when the trigger's refusal budget allows, with
 * what can be read from it (the body's event id and type, when it parses, marked `unverified`
 * unless the sender was verified). The refusal is answered whatever happens here.
 */
export async function recordRefusal(deps: ReceiverDeps, request: IncomingWebhook, delivery: Delivery, code: string): Promise<void> {
  try {
    if (!(await deps.refusals.take(delivery.trigger.id, delivery.receivedAt.getTime()))) return;
    const withBody = request.rawBody.length <= deps.maxBodyBytes;
    // The copy the earlier stages parsed, when they did (a body rule refuses after parsing): not parsed twice.
    const body = withBody ? await bodyOf(request).catch(() => undefined) : undefined;
    const { signature } = delivery.trigger;
    const row = signature ? (await senderRowOf(signature)) ?? {} : undefined;
    const type = body && eventType(row, request.headers, body);
    const eventId = body && senderEventId(row, request.headers, body);
    const unverified = (type !== undefined || eventId !== undefined) && !REFUSED_AFTER_VERIFYING.has(code);
    await recordCounted(deps, delivery, 'refused', () => deps.executions.record(delivery.ref, {
      event_id: eventId ?? deps.newId(),
      received_at: delivery.receivedAt.toISOString(),
      ...(type !== undefined && { type }),
      ...(unverified && { unverified: true as const }),
      status: 'refused',
      error: code,
      attempts: 0,
    }, storedRequest(request, withBody, delivery.secrets)));
  } catch (error) {
    await logFault('refused delivery not recorded', error);
  }
}

/**
 * Stage "record", for a handshake: a `handshake` execution (its type the kind) within the
 * trigger's refusal budget, since an unsigned one could be sent by anyone. `withBody` false for a
 * handshake whose secret is revealed once (its body carries it).
 */
export async function recordHandshake(deps: ReceiverDeps, request: IncomingWebhook, delivery: Delivery, kind: HandshakeKindName, withBody: boolean): Promise<void> {
  try {
    if (await deps.refusals.take(delivery.trigger.id, delivery.receivedAt.getTime(), 'handshake')) {
      await recordCounted(deps, delivery, 'handshake', () => deps.executions.record(delivery.ref, {
        event_id: deps.newId(), received_at: delivery.receivedAt.toISOString(), type: kind, status: 'handshake', attempts: 0,
      }, storedRequest(request, withBody && request.rawBody.length <= deps.maxBodyBytes, delivery.secrets)));
    }
  } catch (error) {
    await logFault('handshake not recorded', error);
  }
}

/**
 * Writes a record the refusal budget has counted already (its grant was the count): when the
 * write fails, the count is taken back, so the chart never shows a delivery the list lacks.
 */
async function recordCounted(deps: ReceiverDeps, delivery: Delivery, outcome: RefusalOutcome, write: () => Promise<void>): Promise<void> {
  try {
    await write();
  } catch (error) {
    await deps.refusals.giveBack(delivery.trigger.id, delivery.receivedAt.getTime(), outcome).catch((undo) => logFault('refusal count not taken back', undo));
    throw error;
  }
}
