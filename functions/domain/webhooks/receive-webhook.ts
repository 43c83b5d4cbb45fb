import { createHash } from 'node:crypto';
import { AppError } from '../../shared/errors.js';
import { logFault } from '../../shared/logger.js';
import { epochSeconds, type Clock } from '../clock.js';
import { MAX_FLOW_INPUT_BYTES } from '../flows/limits.js';
import { newExecutionId } from '../flows/execution-id.js';
import { buildFlowMessage } from '../flows/message.js';
import type { EventQueue, ExecutionRef, ExecutionStore, FlowRunner } from '../flows/ports.js';
import { isLive } from '../triggers/overlap.js';
import type { StoredSignature, TriggerRecord } from '../triggers/trigger.js';
import { WEBHOOK_ID } from '../triggers/webhook-url.js';
import { parseWebhookBody, type WebhookBody } from './body.js';
import { checkBodyRule } from './body-rule.js';
import { constantTimeEqual } from './signatures/hmac.js';
import type { SenderRow } from './senders/catalog-types.js';
import type { KeyFetcher } from './senders/context.js';
import { signedBodyOf } from './senders/signed-fields.js';
import { verifySender } from './senders/verify.js';
import { isSourceIpAllowed } from './source-ips.js';
import type { RefusalBudget } from './refusal-budget.js';
import { REDACTED, storedRequest } from './stored-request.js';
import { NO_SECRET_FIELDS, secretLocations, withheldFromFlow, type SecretLocations } from './secret-fields.js';
import type { Handover } from '../triggers/manage-triggers.js';
import { handshakeStage } from './handshake-stages.js';
import type { HandshakeKindName, HandshakeOutcome, HandshakeRequest, HandshakeStage } from './handshakes.js';

/**
 * Handshake answers and flow-shaped replies load with the first request that needs one: most
 * deliveries need neither, and the receiver's bundle has a 300 KB budget at init.
 */
let handshakes: Promise<typeof import('./handshakes.js')> | undefined;
const answerHandshake = async (kind: HandshakeKindName | undefined, stage: HandshakeStage, request: HandshakeRequest, secrets: readonly string[]): Promise<HandshakeOutcome | undefined> =>
  (await (handshakes ??= import('./handshakes.js'))).answerHandshake(kind, stage, request, secrets);
let flowReplies: Promise<typeof import('./flow-reply.js')> | undefined;
/**
 * The sender catalog (about 21 KB) loads with the first delivery to a trigger with a signature,
 * as the KMS client that opens its secret does: 404s, 405s and unsigned triggers never need it.
 */
let catalog: Promise<typeof import('./senders/catalog.js')> | undefined;
import { buildTriggerData, eventType, matchesEventFilter, senderEventId } from './trigger-input.js';
import type { ActiveTrigger, TriggerLookup } from './trigger-lookup.js';
import { flowWaitMs } from './wait-budget.js';
import { replayClaim } from './replay-key.js';

export { DEDUP_WINDOW_SECONDS } from './replay-key.js';

export interface IncomingWebhook {
  webhookId: string;
  method: string;
  /** Lower-case names. */
  headers: Record<string, string>;
  query: Record<string, string>;
  rawBody: Uint8Array;
  /** The URL the sender called, as it called it (Twilio signs it). */
  publicUrl: string;
  /**
   * The client address API Gateway saw (`requestContext.http.sourceIp`), never a header the client
   * could write such as `X-Forwarded-For`. Without it, an allowlist lets nothing in.
   */
  sourceIp?: string;
  /** Epoch ms by which a wait-mode answer must be sent (see `wait-budget.ts`). */
  answerByMs?: number;
}

/** The receiver's answer: JSON (`body`), or text or bytes as they are (`raw`), with its own headers. */
export interface WebhookReply {
  status: number;
  body?: unknown;
  raw?: { body: string; isBase64Encoded: boolean };
  headers?: Record<string, string>;
}

/**
 * An answer of the receiver's own (accepted, ignored, duplicate): the trigger's fixed
 * `acknowledge_response` when it has one, else the JSON it always was.
 */
function ownAnswer(record: TriggerRecord, body: Record<string, unknown>): WebhookReply {
  const fixed = record.acknowledge_response;
  if (!fixed) return { status: 200, body };
  return { status: fixed.status_code, raw: { body: fixed.body, isBase64Encoded: false }, headers: fixed.content_type === undefined ? {} : { 'content-type': fixed.content_type } };
}

export interface ReceiverDeps {
  triggers: TriggerLookup;
  executions: ExecutionStore;
  queue: EventQueue;
  flows: FlowRunner;
  now: Clock;
  newId: () => string;
  /** Which refused deliveries are recorded (`refusal-budget.ts`); one per receiver, so its count lasts. */
  refusals: RefusalBudget;
  maxBodyBytes: number;
  waitTimeoutMs: number;
  /** Senders' published keys (certificates, JWKS), fetched only from the hosts their catalog rows allow. */
  keys: KeyFetcher;
  /**
   * Seals and keeps `secret` as the trigger's signing secret, handed over by its sender's handshake
   * (Asana, Notion), with when and from where; refused when the trigger has one already (another
   * handshake got there first) or awaits none (its window, `handshake-window.ts`, has closed).
   */
  adoptSecret(record: TriggerRecord, secret: string, options: { revealOnce: boolean; sourceIp?: string }): Promise<Handover>;
}

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest();


/** Refusals that a newer version of the trigger could lift (enabled again, an address allowed, a new key or secret). */
const SETTINGS_REFUSALS: ReadonlySet<string> = new Set(['not_found', 'ip_not_allowed', 'unauthorized', 'invalid_signature']);

/**
 * Refusals recorded as `refused` executions of the trigger they were sent to. Unknown and disabled
 * ids (404) are not: there is no trigger to own them.
 */
const RECORDED_REFUSALS: ReadonlySet<string> = new Set([
  'method_not_allowed', 'payload_too_large', 'ip_not_allowed', 'unauthorized', 'invalid_signature', 'unsupported_media_type', 'validation_error',
]);

/**
 * The receiver, in the documented order: unknown or disabled id (404), method (405), size (413),
 * source address (403), API key (401), signature (401), content type and body (415/400), Slack's URL challenge, event
 * filter, the flow input's size (413: over Step Functions' 256 KiB the flow could never start),
 * duplicates, then the flow: queued (acknowledge) or run while the sender waits. Every delivery to
 * a known, enabled trigger is recorded with its request, refusals included (within a budget).
 */
export async function receiveWebhook(deps: ReceiverDeps, request: IncomingWebhook): Promise<WebhookReply> {
  const nowMs = deps.now();
  const now = new Date(nowMs);
  let trigger = WEBHOOK_ID.test(request.webhookId) ? await deps.triggers.find(request.webhookId) : undefined;
  let refusal = await firstRefusal(deps, trigger, request, now);
  if (refusal && trigger?.cached && SETTINGS_REFUSALS.has(refusal.code)) {
    // A cached copy may predate the change that lets this request in, so a refusal is only final
    // against the stored trigger; it costs a refused request one read, as an unknown id does.
    // Acceptance may rest on the cached copy: revocations reach the receiver within its TTL.
    trigger = await deps.triggers.findFresh(request.webhookId);
    refusal = await firstRefusal(deps, trigger, request, now);
  }
  if (!trigger || refusal?.code === 'not_found') throw refusal ?? new AppError('not_found');
  const delivery: Delivery = {
    trigger: trigger.record, receivedAt: now, ref: { triggerId: trigger.record.id, executionId: newExecutionId(nowMs, deps.newId()) }, secrets: await secretLocationsOf(trigger),
  };
  try {
    if (refusal) throw refusal;
    // The handshakes that come before the body is trusted (GETs, unsigned POSTs); the signed ones are in `accept`.
    const kind = await handshakeKindOf(trigger.record);
    const stage = handshakeStage(kind);
    if (stage === 'get' || stage === 'get_signed' || stage === 'unsigned') {
      const outcome = await answerHandshake(kind, stage, await handshakeRequestOf(request, undefined, trigger.record.signature?.verify_token_hash), signingSecretsOrNone(trigger, now));
      if (outcome) return await handshakeAnswer(deps, request, delivery, kind!, outcome);
      // A GET that is not its sender's handshake is a method a trigger does not take.
      if (request.method === 'GET') throw new AppError('method_not_allowed', undefined, { allow: 'POST' });
    }
    return await accept(deps, request, delivery, trigger);
  } catch (error) {
    if (error instanceof AppError && RECORDED_REFUSALS.has(error.code)) await recordRefusal(deps, request, delivery, error.code);
    throw error;
  }
}

interface Delivery {
  trigger: TriggerRecord;
  receivedAt: Date;
  ref: ExecutionRef;
  /** Where its sender carries a secret in clear: never stored, never handed to the flow. */
  secrets: SecretLocations;
}

/** The trigger's sender's secret fields (its catalog row's), resolved against its secrets. */
async function secretLocationsOf(trigger: ActiveTrigger): Promise<SecretLocations> {
  const signature = trigger.record.signature;
  if (!signature) return NO_SECRET_FIELDS;
  const secrets = [trigger.signingSecret, trigger.previousSigningSecret].filter((secret) => secret !== undefined);
  return secretLocations((await senderRowOf(signature))?.secret_fields, secrets);
}

/**
 * The handshake a trigger's sender makes, which the receiver answers itself: its catalog row's,
 * or, for a trigger without a signature, Slack's URL challenge (answered so from the start).
 */
async function handshakeKindOf(record: TriggerRecord): Promise<HandshakeKindName | undefined> {
  if (!record.signature) return 'slack_url_verification';
  return (await senderRowOf(record.signature))?.handshake_answer;
}

/**
 * A request's body, parsed once however many steps read it: the unsigned-handshake check, the
 * early handshakes and the flow input may each need it, and a multipart body is not cheap. Keyed
 * by the content type it is read as (a row may read SNS's `text/plain` as JSON).
 */
const parsedBodies = new WeakMap<IncomingWebhook, Map<string | undefined, Promise<WebhookBody>>>();
function bodyOf(request: IncomingWebhook, contentType: string | undefined = request.headers['content-type']): Promise<WebhookBody> {
  let byType = parsedBodies.get(request);
  if (!byType) parsedBodies.set(request, (byType = new Map()));
  let parsed = byType.get(contentType);
  if (!parsed) byType.set(contentType, (parsed = parseWebhookBody(request.rawBody, contentType)));
  return parsed;
}

/** What a handshake looks at: the body parsed as JSON or a form when it is one. */
async function handshakeRequestOf(request: IncomingWebhook, parsed?: WebhookBody, verifyTokenHash?: string): Promise<HandshakeRequest> {
  const body = parsed ?? (request.rawBody.length > 0 ? await bodyOf(request).catch(() => undefined) : undefined);
  return {
    method: request.method,
    headers: request.headers,
    query: request.query,
    rawBody: request.rawBody,
    json: body?.kind === 'json' ? body.value : undefined,
    ...(body?.kind === 'form' && { form: body.value }),
    ...(verifyTokenHash !== undefined && { verifyTokenHash }),
  };
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
  try {
    if (await deps.refusals.take(delivery.trigger.id, delivery.receivedAt.getTime())) {
      await deps.executions.record(delivery.ref, {
        event_id: deps.newId(), received_at: delivery.receivedAt.toISOString(), type: kind, status: 'handshake', attempts: 0,
      }, storedRequest(request, !('revealOnce' in outcome && outcome.revealOnce) && request.rawBody.length <= deps.maxBodyBytes, delivery.secrets));
    }
  } catch (error) {
    await logFault('handshake not recorded', error);
  }
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
  const { urlOnSenderHosts } = await import('./senders/primitives/x509-rsa.js');
  if (verification?.primitive !== 'x509_rsa' || !urlOnSenderHosts(url, verification.certificateUrl.hosts)) {
    throw new AppError('invalid_signature', 'the handshake names a URL off the sender\'s hosts');
  }
  try {
    await deps.keys.fetchText(url);
  } catch (error) {
    throw new AppError('unavailable', `the sender's URL did not answer: ${(error as Error).message}`);
  }
}

/** Everything after the checks of `firstRefusal` passed. */
async function accept(deps: ReceiverDeps, request: IncomingWebhook, delivery: Delivery, trigger: ActiveTrigger): Promise<WebhookReply> {
  const { trigger: record, receivedAt, ref } = delivery;
  const row = record.signature ? await senderRowOf(record.signature) : undefined;
  const body = await bodyOf(request, row?.body_as === 'json' ? 'application/json' : undefined);
  if (row?.accepts) checkBodyRule(row.accepts, request.headers, body);
  const kind = await handshakeKindOf(record);
  if (handshakeStage(kind) === 'signed') {
    const outcome = await answerHandshake(kind, 'signed', await handshakeRequestOf(request, body), signingSecretsOrNone(trigger, receivedAt));
    if (outcome) return await handshakeAnswer(deps, request, delivery, kind!, outcome);
  }

  const { headers, body: visibleBody } = withheldFromFlow(request.headers, signedBodyOf(row, body), delivery.secrets, REDACTED);
  const data = buildTriggerData({ row, headers, body: visibleBody, webhookId: request.webhookId, receivedAt, newEventId: deps.newId });
  const execution = { event_id: data.event_id, received_at: data.received_at, ...(data.type !== undefined && { type: data.type }) };
  const stored = storedRequest(request, true, delivery.secrets);
  // A retry or a replay: with `deduplicate`, of the same signed id or content; whatever it says,
  // of a single-use id or of the same signed bytes within the sender's tolerance (`replay-key.ts`).
  const claim = replayClaim(row, record.deduplicate, { ...request, url: request.publicUrl, body }, data.event_id);
  const duplicate = async () => {
    await deps.executions.record(ref, { ...execution, status: 'duplicate', attempts: 0 }, stored);
    return ownAnswer(record, { status: 'duplicate' });
  };
  // A single-use id is spent by its first delivery even when the filter ignores it: the payload
  // it does not bind could otherwise be rewritten to pass the filter on a second use.
  const spentFirst = claim !== undefined && row?.single_use !== undefined;
  if (spentFirst && !(await deps.executions.claimEvent(record.id, claim.key, claim.ttlSeconds))) return await duplicate();

  if (!matchesEventFilter(record.event_filter, data.type)) {
    await deps.executions.record(ref, { ...execution, status: 'ignored', attempts: 0 }, stored);
    return ownAnswer(record, { status: 'ignored' });
  }
  // Serialised once: its size decides whether the flow can start at all, and the same text goes
  // into the queue message or the synchronous start.
  const inputJson = JSON.stringify({ trigger: data });
  if (Buffer.byteLength(inputJson) > MAX_FLOW_INPUT_BYTES) throw new AppError('payload_too_large', 'flow input over the Step Functions limit');
  if (claim && !spentFirst && !(await deps.executions.claimEvent(record.id, claim.key, claim.ttlSeconds))) return await duplicate();
  // A claimed event whose flow never started must stay claimable, or the sender's retry is lost.
  const releaseClaim = () => (claim ? deps.executions.releaseEvent(record.id, claim.key) : Promise.resolve());

  if (record.response_mode === 'acknowledge') {
    await deps.executions.record(ref, { ...execution, flow: record.flow, status: 'queued', attempts: 0 }, stored);
    try {
      await deps.queue.send(await buildFlowMessage(deps, { triggerId: record.id, flow: record.flow, ref }, inputJson));
    } catch (error) {
      await Promise.allSettled([deps.executions.discard(ref, data.event_id), releaseClaim()]);
      throw error instanceof AppError ? error : new AppError('unavailable', (error as Error).name);
    }
    return ownAnswer(record, { status: 'accepted', event_id: data.event_id });
  }

  const waitMs = flowWaitMs({ waitTimeoutMs: deps.waitTimeoutMs, nowMs: deps.now(), answerByMs: request.answerByMs });
  if (waitMs <= 0) {
    // A cold start and the reads before the flow used up the gateway's time: answer our 504 now
    // rather than start a flow whose answer could only arrive after the gateway's bare 503.
    await releaseClaim();
    throw new AppError('flow_timeout', 'no time left to run the flow');
  }
  const started_at = new Date(deps.now()).toISOString();
  await deps.executions.record(ref, { ...execution, flow: record.flow, status: 'running', attempts: 1, timeline: [{ attempt: 1, started_at, status: 'running' }] }, stored);
  let result;
  try {
    result = await deps.flows.run(record.flow, inputJson, { timeoutMs: waitMs });
  } catch (error) {
    await Promise.allSettled([deps.executions.discard(ref, data.event_id), releaseClaim()]);
    throw error;
  }
  const finished_at = new Date(deps.now()).toISOString();
  if (result.status === 'succeeded') {
    const { replyFromFlowOutput, summarizeReply } = await (flowReplies ??= import('./flow-reply.js'));
    const shaped = replyFromFlowOutput(result.output);
    if (shaped.kind === 'malformed') {
      // The flow ran, but what it asked to answer cannot be sent: the sender gets our 502.
      await deps.executions.update(ref, { status: 'failed', attempts: 1, output: result.output, error: shaped.reason, attempt: { attempt: 1, started_at, finished_at, status: 'failed', error: shaped.reason } });
      throw new AppError('flow_failed', shaped.reason);
    }
    const reply = shaped.kind === 'shaped' ? summarizeReply(shaped.reply) : undefined;
    await deps.executions.update(ref, { status: 'succeeded', attempts: 1, output: result.output, ...(reply && { reply }), attempt: { attempt: 1, started_at, finished_at, status: 'succeeded' } });
    if (shaped.kind === 'json') return { status: 200, body: result.output };
    const { status, headers, body, isBase64Encoded } = shaped.reply;
    return { status, headers, raw: { body, isBase64Encoded } };
  }
  const error = result.status === 'timed_out' ? 'flow_timeout' : 'flow_failed';
  const reason = result.status === 'failed' ? result.error : error;
  await deps.executions.update(ref, { status: 'failed', attempts: 1, error: reason, attempt: { attempt: 1, started_at, finished_at, status: result.status, error: reason } });
  throw new AppError(error);
}

/**
 * Records a refused delivery, when the trigger's refusal budget allows, with what can be read from
 * it (the body's event id and type, when it parses). The refusal is answered whatever happens here.
 */
async function recordRefusal(deps: ReceiverDeps, request: IncomingWebhook, delivery: Delivery, code: string): Promise<void> {
  try {
    if (!(await deps.refusals.take(delivery.trigger.id, delivery.receivedAt.getTime()))) return;
    const withBody = request.rawBody.length <= deps.maxBodyBytes;
    // The copy the earlier steps parsed, when they did (a body rule refuses after parsing): not parsed twice.
    const body = withBody ? await bodyOf(request).catch(() => undefined) : undefined;
    const { signature } = delivery.trigger;
    const row = signature ? (await senderRowOf(signature)) ?? {} : undefined;
    const type = body && eventType(row, request.headers, body);
    await deps.executions.record(delivery.ref, {
      event_id: (body && senderEventId(row, request.headers, body)) ?? deps.newId(),
      received_at: delivery.receivedAt.toISOString(),
      ...(type !== undefined && { type }),
      status: 'refused',
      error: code,
      attempts: 0,
    }, storedRequest(request, withBody, delivery.secrets));
  } catch (error) {
    await logFault('refused delivery not recorded', error);
  }
}

/** True when `presented` is the trigger's API key, or the key it replaced while that one's overlap lasts. */
function isTriggerApiKey(record: TriggerRecord, presented: string | undefined, now: Date): boolean {
  if (!presented) return false;
  // Compare hashes, in constant time, so neither the key nor its length leaks through timing.
  const hash = sha256(presented);
  const matches = (stored: string | undefined) => stored !== undefined && constantTimeEqual(hash, Buffer.from(stored, 'hex'));
  return matches(record.api_key_hash) || (isLive(record.previous_api_key_expires_at, now) && matches(record.previous_api_key_hash));
}

/** The signing secrets, or none for a trigger without a signature. */
const signingSecretsOrNone = (trigger: ActiveTrigger, now: Date): string[] => (trigger.signingSecret === undefined ? [] : signingSecrets(trigger, now));

/** The secrets a signature may be made with now: the current one, and the replaced one while its overlap lasts. */
function signingSecrets(trigger: ActiveTrigger, now: Date): string[] {
  const previousLive = trigger.previousSigningSecret !== undefined && isLive(trigger.record.signature?.previous_secret_expires_at, now);
  return previousLive ? [trigger.signingSecret!, trigger.previousSigningSecret!] : [trigger.signingSecret!];
}

/** The catalog row a trigger's signature is verified by: the sender's, or `custom` with the trigger's own settings. */
async function senderRowOf(signature: StoredSignature): Promise<SenderRow | undefined> {
  return (await (catalog ??= import('./senders/catalog.js'))).rowOfSignature(signature);
}

/** Checks 1 to 5 against one copy of the trigger, in order: the first refusal, if any. */
async function firstRefusal(deps: ReceiverDeps, trigger: ActiveTrigger | undefined, request: IncomingWebhook, now: Date): Promise<AppError | undefined> {
  if (!trigger || !trigger.record.enabled) return new AppError('not_found');
  const kind = await handshakeKindOf(trigger.record);
  const stage = handshakeStage(kind);
  const getHandshake = request.method === 'GET' && (stage === 'get' || stage === 'get_signed');
  if (request.method !== 'POST' && !getHandshake) return new AppError('method_not_allowed', undefined, { allow: 'POST' });
  if (request.rawBody.length > deps.maxBodyBytes) return new AppError('payload_too_large');
  const { record } = trigger;
  if (record.allowed_source_ips && !isSourceIpAllowed(record.allowed_source_ips, request.sourceIp)) {
    return new AppError('ip_not_allowed', `source address ${request.sourceIp ?? '(none)'}`);
  }
  if (record.api_key_enabled && !isTriggerApiKey(record, request.query.api_key ?? request.headers['x-api-key'], now)) {
    return new AppError('unauthorized');
  }
  // Unsigned handshakes (a GET challenge, Graph's validation, WooCommerce's ping) carry no signature to check.
  const unsignedHandshake = getHandshake ? stage === 'get' : stage === 'unsigned' && await answerHandshake(kind, 'unsigned', await handshakeRequestOf(request), signingSecretsOrNone(trigger, now)) !== undefined;
  if (record.signature && !unsignedHandshake) {
    const row = await senderRowOf(record.signature);
    // Until its sender's handshake hands the secret over (Asana, Notion), nothing verifies.
    const verified = row !== undefined && trigger.signingSecret !== undefined && await verifySender(row, {
      request: { rawBody: request.rawBody, headers: request.headers, url: request.publicUrl, nowSeconds: epochSeconds(now.getTime()) },
      secrets: signingSecrets(trigger, now),
      keys: deps.keys,
      method: request.method,
    });
    if (!verified) return new AppError('invalid_signature');
  }
  return undefined;
}
