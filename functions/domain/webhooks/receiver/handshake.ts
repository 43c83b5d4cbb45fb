import { AppError } from '../../../shared/errors.js';
import type { TriggerRecord } from '../../triggers/trigger.js';
import type { WebhookBody } from '../body.js';
import { handshakeStage } from '../handshake-stages.js';
import type { HandshakeKindName, HandshakeOutcome, HandshakeRequest, HandshakeStage } from '../handshakes.js';
import type { ActiveTrigger } from '../trigger-lookup.js';
import { handshakeRequestOf } from './read.js';
import { recordHandshake } from './record.js';
import { handshakeKindOf, senderRowOf, signingSecretsOrNone } from './sender-row.js';
import type { Delivery, IncomingWebhook, ReceiverDeps, WebhookReply } from './types.js';

/**
 * Handshake answers load with the first request that needs one: most deliveries need none, and
 * the receiver's bundle has a 300 KB budget at init.
 */
let handshakes: Promise<typeof import('../handshakes.js')> | undefined;
export const answerHandshake = async (kind: HandshakeKindName | undefined, stage: HandshakeStage, request: HandshakeRequest, secrets: readonly string[]): Promise<HandshakeOutcome | undefined> =>
  (await (handshakes ??= import('../handshakes.js'))).answerHandshake(kind, stage, request, secrets);

/**
 * Stage "handshake", before the body is trusted: the handshakes of GETs and unsigned POSTs. The
 * reply when the request is one; `undefined` when it is a delivery to verify and route.
 */
export async function answerEarlyHandshake(deps: ReceiverDeps, request: IncomingWebhook, delivery: Delivery, trigger: ActiveTrigger): Promise<WebhookReply | undefined> {
  const kind = await handshakeKindOf(trigger.record);
  const stage = handshakeStage(kind);
  if (stage !== 'get' && stage !== 'get_signed' && stage !== 'unsigned') return undefined;
  const outcome = await answerHandshake(kind, stage, await handshakeRequestOf(request, undefined, trigger.record.signature?.verify_token_hash), signingSecretsOrNone(trigger, delivery.receivedAt));
  if (outcome) return handshakeAnswer(deps, request, delivery, kind!, outcome);
  // A GET that is not its sender's handshake is a method a trigger does not take.
  if (request.method === 'GET') throw new AppError('method_not_allowed', undefined, { allow: 'POST' });
  return undefined;
}

/** Stage "handshake", once the request verified: the signed handshakes (Slack's challenge, Discord's PING, SNS's subscription). */
export async function answerSignedHandshake(deps: ReceiverDeps, request: IncomingWebhook, delivery: Delivery, trigger: ActiveTrigger, body: WebhookBody): Promise<WebhookReply | undefined> {
  const kind = await handshakeKindOf(trigger.record);
  if (handshakeStage(kind) !== 'signed') return undefined;
  const outcome = await answerHandshake(kind, 'signed', await handshakeRequestOf(request, body), signingSecretsOrNone(trigger, delivery.receivedAt));
  return outcome && handshakeAnswer(deps, request, delivery, kind!, outcome);
}

/**
 * A handshake's answer, recorded as a `handshake` execution (its type the kind) within the trigger's
 * refusal budget, since an unsigned one could be sent by anyone; a wrong verify token is 401.
 */
async function handshakeAnswer(deps: ReceiverDeps, request: IncomingWebhook, delivery: Delivery, kind: HandshakeKindName, outcome: HandshakeOutcome): Promise<WebhookReply> {
  if ('refused' in outcome) throw new AppError('invalid_signature', `${kind}: the token does not match`);
  if (outcome.visit !== undefined) await visitSenderUrl(deps, delivery.trigger, outcome.visit);
  const handover = outcome.adopt === undefined ? 'adopted' : await deps.adoptSecret(delivery.trigger, outcome.adopt, { revealOnce: outcome.revealOnce === true, sourceIp: request.sourceIp });
  if (handover !== 'adopted') throw new AppError('invalid_signature', handover === 'not_awaited' ? 'the handshake window has closed' : 'the trigger already has its signing secret');
  await recordHandshake(deps, request, delivery, kind, !('revealOnce' in outcome && outcome.revealOnce));
  const { reply } = outcome;
  if ('json' in reply) return { status: reply.status, body: reply.json };
  return { status: reply.status, raw: { body: reply.text, isBase64Encoded: false }, headers: { ...reply.headers, 'content-type': reply.contentType, 'x-content-type-options': 'nosniff' } };
}

/**
 * GETs a URL of the sender's that a handshake names (SNS's `SubscribeURL`), only on the hosts the
 * sender's row allows for its certificates: a signed message from elsewhere still cannot send the
 * receiver anywhere else. A visit that fails is 503, so the sender tries again.
 */
async function visitSenderUrl(deps: ReceiverDeps, record: TriggerRecord, url: string): Promise<void> {
  const verification = record.signature && (await senderRowOf(record.signature))?.verification;
  const { urlOnSenderHosts } = await import('../senders/primitives/x509-rsa.js');
  if (verification?.primitive !== 'x509_rsa' || !urlOnSenderHosts(url, verification.certificateUrl.hosts)) {
    throw new AppError('invalid_signature', 'the handshake names a URL off the sender\'s hosts');
  }
  try {
    await deps.keys.fetchText(url);
  } catch (error) {
    throw new AppError('unavailable', `the sender's URL did not answer: ${(error as Error).message}`);
  }
}
