import { createHash } from 'node:crypto';
import { AppError } from '../../../shared/errors.js';
import { epochSeconds } from '../../clock.js';
import { newExecutionId } from '../../flows/execution-id.js';
import { isLive } from '../../triggers/overlap.js';
import type { TriggerRecord } from '../../triggers/trigger.js';
import { WEBHOOK_ID } from '../../triggers/webhook-url.js';
import { handshakeStage } from '../handshake-stages.js';
import { constantTimeEqual } from '../signatures/hmac.js';
import { NO_SECRET_FIELDS, secretLocations, type SecretLocations } from '../secret-fields.js';
import { verifySender } from '../senders/verify.js';
import { isSourceIpAllowed } from '../source-ips.js';
import type { ActiveTrigger } from '../trigger-lookup.js';
import { answerHandshake } from './handshake.js';
import { handshakeRequestOf } from './read.js';
import { handshakeKindOf, senderRowOf, signingSecrets, signingSecretsOrNone } from './sender-row.js';
import type { Delivery, IncomingWebhook, ReceiverDeps } from './types.js';

/** Refusals that a newer version of the trigger could lift (enabled again, an address allowed, a new key or secret). */
const SETTINGS_REFUSALS: ReadonlySet<string> = new Set(['not_found', 'ip_not_allowed', 'unauthorized', 'invalid_signature']);

/** What "admit" hands on: the trigger, the delivery to record against, and the refusal, if any, still to record. */
export interface Admission {
  trigger: ActiveTrigger;
  delivery: Delivery;
  refusal?: AppError;
}

/**
 * Stage "admit": looks the trigger up and runs checks 1 to 5 (known and enabled, method, size,
 * source address, API key, signature). An unknown or disabled id throws 404 (nothing owns it);
 * any other refusal comes back with the delivery, for the receiver to record and throw.
 */
export async function admit(deps: ReceiverDeps, request: IncomingWebhook): Promise<Admission> {
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
  return { trigger, delivery, ...(refusal && { refusal }) };
}

/** The trigger's sender's secret fields (its catalog row's), resolved against its secrets. */
async function secretLocationsOf(trigger: ActiveTrigger): Promise<SecretLocations> {
  const signature = trigger.record.signature;
  if (!signature) return NO_SECRET_FIELDS;
  const secrets = [trigger.signingSecret, trigger.previousSigningSecret].filter((secret) => secret !== undefined);
  return secretLocations((await senderRowOf(signature))?.secret_fields, secrets);
}

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest();

/** True when `presented` is the trigger's API key, or the key it replaced while that one's overlap lasts. */
function isTriggerApiKey(record: TriggerRecord, presented: string | undefined, now: Date): boolean {
  if (!presented) return false;
  // Compare hashes, in constant time, so neither the key nor its length leaks through timing.
  const hash = sha256(presented);
  const matches = (stored: string | undefined) => stored !== undefined && constantTimeEqual(hash, Buffer.from(stored, 'hex'));
  return matches(record.api_key_hash) || (isLive(record.previous_api_key_expires_at, now) && matches(record.previous_api_key_hash));
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
