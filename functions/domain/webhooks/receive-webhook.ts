import { AppError } from '../../shared/errors.js';
import { admit } from './receiver/admit.js';
import { dispatch } from './receiver/dispatch.js';
import { keyedOnClaim } from './receiver/claim-record.js';
import { wholeDelivery } from './receiver/events.js';
import { answerEarlyHandshake, answerSignedHandshake } from './receiver/handshake.js';
import { readBody } from './receiver/read.js';
import { RECORDED_REFUSALS, recordRefusal } from './receiver/record.js';
import { isAnswered, route } from './receiver/route.js';
import { rowOfTrigger } from './receiver/sender-row.js';
import type { IncomingWebhook, ReceiverDeps, WebhookReply } from './receiver/types.js';

export type { IncomingWebhook, ReceiverDeps, WebhookReply } from './receiver/types.js';
export { DEDUP_WINDOW_SECONDS } from './replay-key.js';

/** The batch stage loads with the first POST of a batching sender: the receiver's bundle has a 300 KB budget at init. */
let batches: Promise<typeof import('./receiver/batch.js')> | undefined;

/**
 * The receiver: a short pipeline of stages (`receiver/`), each passed once, in the documented
 * order.
 *
 * 1. admit: unknown or disabled id (404), method (405), size (413), source address (403), API key
 *    (401), signature (401);
 * 2. handshake, before the body is trusted: GET challenges and unsigned POSTs (Graph, Asana);
 * 3. read: the body as the sender's row reads it, and its body rule (415/400);
 * 4. handshake, once verified: Slack's URL challenge, Discord's PING, SNS's subscription;
 * 5. then per event: route (event filter, the flow input's size (413: over Step Functions'
 *    256 KiB the flow could never start), duplicates) and dispatch (queued, acknowledge mode; or
 *    run while the sender waits), each recorded with its request. A batching sender's POST is
 *    stored once and each of its elements passes route and dispatch as an event of its own
 *    (`receiver/batch.ts`).
 *
 * Every delivery to a known, enabled trigger is recorded, refusals included (within a budget).
 */
export async function receiveWebhook(deps: ReceiverDeps, request: IncomingWebhook): Promise<WebhookReply> {
  const { trigger, delivery, refusal } = await admit(deps, request);
  try {
    if (refusal) throw refusal;
    const early = await answerEarlyHandshake(deps, request, delivery, trigger);
    if (early) return early;
    const row = await rowOfTrigger(trigger.record);
    const body = await readBody(request, row);
    const signed = await answerSignedHandshake(deps, request, delivery, trigger, body);
    if (signed) return signed;
    const whole = wholeDelivery(deps, request, delivery, row, body);
    if (row?.batch && trigger.record.split_batches !== false) {
      const { batchOf, receiveBatch } = await (batches ??= import('./receiver/batch.js'));
      const batch = batchOf(request, delivery, row, body);
      if (batch) return await receiveBatch(deps, request, delivery, batch, whole);
    }
    const event = keyedOnClaim(whole, { claimItemsSignedBeforeMs: deps.startedAtMs });
    const routed = await route(deps, trigger.record, event);
    return (isAnswered(routed) ? routed : await dispatch(deps, trigger.record, event, routed, request.answerByMs)).reply;
  } catch (error) {
    if (error instanceof AppError && RECORDED_REFUSALS.has(error.code)) await recordRefusal(deps, request, delivery, error.code);
    throw error;
  }
}
