import { generateApiKey, generateId, hashApiKey, ID_PATTERN } from '../api-keys.js';
import type { Clock } from '../clock.js';
import type { RandomBytes } from '../random-bytes.js';
import type { SecretBox } from '../secret-box.js';
import { AppError, notFound } from '../../shared/errors.js';
import { signingSecretContext } from '../webhooks/trigger-lookup.js';
import { isLive } from './overlap.js';
import { armedSignature, isHandshakeAwaited } from './handshake-window.js';
import type { StoredSignature, TriggerRecord } from './trigger.js';
import type { ApiKeyRegeneration, SigningSecretRotation, TriggerPatch, TriggerSettings } from './trigger-requests.js';
import type { TriggerStore } from './trigger-store.js';
import { newWebhookId } from './webhook-url.js';

export interface TriggerDeps {
  store: TriggerStore;
  secretBox: SecretBox;
  randomBytes: RandomBytes;
  now: Clock;
}

/** Read-modify-write attempts before a change racing other changes gives up (409 conflict). */
const MAX_CHANGE_ATTEMPTS = 3;

/** A trigger and, when one was just generated, its API key (shown this once). */
export interface TriggerChange {
  record: TriggerRecord;
  apiKey?: string;
}

/** `at`: the change's one reading of the clock, so a window armed now opens exactly when the record says it changed. */
async function sealSignature(deps: TriggerDeps, record: Pick<TriggerRecord, 'account_id' | 'id'>, signature: TriggerSettings['signature'], at: string): Promise<StoredSignature | null> {
  if (!signature) return null;
  // Asana and Notion hand the secret over in their handshake: until then the trigger has none.
  const secret_sealed = signature.secret === undefined ? undefined : await deps.secretBox.seal(signature.secret, signingSecretContext(record));
  return {
    service: signature.service,
    ...(secret_sealed !== undefined && { secret_sealed }),
    ...(signature.custom && { custom: signature.custom }),
    // Kept as API keys are, by its SHA-256: the handshake compares hashes in constant time.
    ...(signature.verify_token !== undefined && { verify_token_hash: hashApiKey(signature.verify_token) }),
    ...(signature.handshake_window_seconds !== undefined && { handshake_window_seconds: signature.handshake_window_seconds }),
    // Set up without its secret: the handshake window opens now.
    ...(secret_sealed === undefined && { handshake_armed_at: at }),
  };
}

/** Only a sender that waits can be answered by a listener: asked of an acknowledge-mode trigger, it is refused rather than ignored. */
function refuseListenerAnswerWithoutWait(record: Pick<TriggerRecord, 'answer_from_listener' | 'response_mode'>): void {
  if (record.answer_from_listener === true && record.response_mode !== 'wait') {
    throw new AppError('validation_error', 'answer_from_listener needs response_mode wait', undefined,
      'answer_from_listener: true only applies to a trigger with response_mode "wait" (an acknowledge-mode sender is answered at once); set response_mode to "wait" in the same request, or leave answer_from_listener false');
  }
}

export async function createTrigger(deps: TriggerDeps, accountId: string, settings: TriggerSettings): Promise<TriggerChange> {
  refuseListenerAnswerWithoutWait(settings);
  const id = generateId(deps.randomBytes);
  const now = new Date(deps.now()).toISOString();
  const apiKey = settings.api_key_enabled ? generateApiKey(deps.randomBytes) : undefined;
  const record: TriggerRecord = {
    id,
    account_id: accountId,
    webhook_id: newWebhookId(deps.randomBytes),
    ...(settings.name != null && { name: settings.name }),
    ...(settings.description != null && { description: settings.description }),
    flow: settings.flow,
    response_mode: settings.response_mode,
    event_filter: settings.event_filter,
    api_key_enabled: settings.api_key_enabled,
    ...(apiKey && { api_key_hash: hashApiKey(apiKey) }),
    signature: await sealSignature(deps, { account_id: accountId, id }, settings.signature, now),
    allowed_source_ips: settings.allowed_source_ips,
    enabled: settings.enabled,
    deduplicate: settings.deduplicate,
    ...(settings.split_batches === false && { split_batches: false }),
    ...(settings.acknowledge_response && { acknowledge_response: settings.acknowledge_response }),
    ...(settings.answer_from_listener === true && { answer_from_listener: true }),
    created_at: now,
    updated_at: now,
    version: 1,
  };
  await deps.store.create(record);
  return { record, apiKey };
}

export async function getTrigger(deps: Pick<TriggerDeps, 'store'>, accountId: string, id: string): Promise<TriggerRecord> {
  const record = ID_PATTERN.test(id) ? await deps.store.get(accountId, id) : undefined;
  if (!record) throw notFound('trigger');
  return record;
}

/** The record without an old secret or key whose overlap has ended: a change tidies them away. */
function withoutEndedOverlaps(record: TriggerRecord, now: Date): TriggerRecord {
  const tidy = { ...record };
  if (!isLive(tidy.previous_api_key_expires_at, now)) {
    delete tidy.previous_api_key_hash;
    delete tidy.previous_api_key_expires_at;
  }
  if (tidy.signature && !isLive(tidy.signature.previous_secret_expires_at, now)) {
    const { previous_secret_sealed: _sealed, previous_secret_expires_at: _expires, ...signature } = tidy.signature;
    tidy.signature = signature;
  }
  return tidy;
}

/** Applies `change` to the current trigger, re-reading when a concurrent change got there first. */
async function changeTrigger(
  deps: TriggerDeps,
  accountId: string,
  id: string,
  change: (current: TriggerRecord) => Promise<TriggerChange>,
): Promise<TriggerChange> {
  for (let attempt = 0; attempt < MAX_CHANGE_ATTEMPTS; attempt++) {
    const current = await getTrigger(deps, accountId, id);
    const next = await change(current);
    const now = new Date(deps.now());
    next.record = { ...withoutEndedOverlaps(next.record, now), version: current.version + 1, updated_at: now.toISOString() };
    if (await deps.store.replace(current, next.record)) return next;
  }
  throw new AppError('conflict', 'trigger changed concurrently');
}

export function updateTrigger(deps: TriggerDeps, accountId: string, id: string, patch: TriggerPatch): Promise<TriggerChange> {
  return changeTrigger(deps, accountId, id, async (current) => {
    const { signature, api_key_enabled, ...plain } = patch;
    const record: TriggerRecord = { ...current, ...plain };
    if (signature !== undefined) record.signature = await sealSignature(deps, current, signature, new Date(deps.now()).toISOString());
    let apiKey: string | undefined;
    if (api_key_enabled === true && !current.api_key_enabled) {
      apiKey = generateApiKey(deps.randomBytes);
      record.api_key_enabled = true;
      record.api_key_hash = hashApiKey(apiKey);
    } else if (api_key_enabled === false) {
      record.api_key_enabled = false;
      delete record.api_key_hash;
      delete record.previous_api_key_hash;
      delete record.previous_api_key_expires_at;
    }
    refuseListenerAnswerWithoutWait(record);
    return { record, apiKey };
  });
}

export function regenerateUrl(deps: TriggerDeps, accountId: string, id: string): Promise<TriggerChange> {
  return changeTrigger(deps, accountId, id, async (current) => ({ record: { ...current, webhook_id: newWebhookId(deps.randomBytes) } }));
}

/** ISO 8601 time `seconds` from now. */
const secondsFromNow = (deps: Pick<TriggerDeps, 'now'>, seconds: number) => new Date(deps.now() + seconds * 1000).toISOString();

/**
 * A new API key, returned once. The replaced key keeps working for `previous_key_expires_in_seconds`
 * (default 0: it stops at once); a key replaced earlier, still in its own overlap, stops at once.
 */
export function regenerateApiKey(deps: TriggerDeps, accountId: string, id: string, options: Partial<ApiKeyRegeneration> = {}): Promise<TriggerChange> {
  const overlap = options.previous_key_expires_in_seconds ?? 0;
  return changeTrigger(deps, accountId, id, async (current) => {
    if (!current.api_key_enabled) throw new AppError('validation_error', undefined, undefined, 'API key protection is off; enable api_key_enabled first');
    const apiKey = generateApiKey(deps.randomBytes);
    const { previous_api_key_hash: _hash, previous_api_key_expires_at: _expires, ...rest } = current;
    const previous = overlap > 0 && current.api_key_hash
      ? { previous_api_key_hash: current.api_key_hash, previous_api_key_expires_at: secondsFromNow(deps, overlap) }
      : {};
    return { record: { ...rest, api_key_hash: hashApiKey(apiKey), ...previous }, apiKey };
  });
}

/**
 * A new signing secret for the trigger's scheme. Deliveries signed with the replaced secret are
 * accepted for `previous_secret_expires_in_seconds` more (0: not at all); a secret replaced
 * earlier, still in its own overlap, stops at once, so at most two secrets are ever accepted. The
 * replaced secret is moved as sealed, never opened: this function may seal, not open.
 */
export function rotateSigningSecret(deps: TriggerDeps, accountId: string, id: string, rotation: SigningSecretRotation): Promise<TriggerChange> {
  return changeTrigger(deps, accountId, id, async (current) => {
    if (!current.signature) throw new AppError('validation_error', undefined, undefined, 'the trigger has no signature to rotate; set one with PATCH');
    // The request schemas load with the first request that has a body; this one already did.
    (await import('./trigger-requests.js')).checkSecretFor(current.signature, rotation.secret);
    // A handshake's handover is no longer what the trigger verifies with: its time and address would mislead.
    const { previous_secret_sealed: _sealed, previous_secret_expires_at: _expires, handed_over_at: _at, handed_over_source_ip: _ip, ...signature } = current.signature;
    const overlap = rotation.previous_secret_expires_in_seconds;
    return {
      record: {
        ...current,
        signature: {
          ...signature,
          secret_sealed: await deps.secretBox.seal(rotation.secret, signingSecretContext(current)),
          ...(overlap > 0 && signature.secret_sealed !== undefined && { previous_secret_sealed: signature.secret_sealed, previous_secret_expires_at: secondsFromNow(deps, overlap) }),
        },
      },
    };
  });
}

/** Deletes the trigger as last read, reading again when a concurrent change got there first. */
export async function deleteTrigger(deps: Pick<TriggerDeps, 'store'>, accountId: string, id: string): Promise<void> {
  for (let attempt = 0; attempt < MAX_CHANGE_ATTEMPTS; attempt++) {
    if (await deps.store.delete(await getTrigger(deps, accountId, id))) return;
  }
  throw new AppError('conflict', 'trigger changed concurrently');
}

/** What became of a handed-over secret: kept, or refused because the trigger has one or awaits none. */
export type Handover = 'adopted' | 'has_secret' | 'not_awaited';

/**
 * Keeps the secret a sender's handshake hands over (Asana's `X-Hook-Secret`, Notion's
 * `verification_token`) as the trigger's signing secret, sealed, with when and from where it came;
 * only inside the handshake window (`handshake-window.ts`), decided on the stored trigger, never on
 * a cached copy, and never replacing a secret the trigger has (a second handshake cannot).
 */
export async function adoptHandshakeSecret(
  deps: TriggerDeps,
  record: Pick<TriggerRecord, 'account_id' | 'id'>,
  secret: string,
  options: { revealOnce: boolean; sourceIp?: string },
): Promise<Handover> {
  let outcome: Handover = 'adopted';
  await changeTrigger(deps, record.account_id, record.id, async (current) => {
    const refusal = !current.signature || current.signature.secret_sealed !== undefined ? 'has_secret' : !isHandshakeAwaited(current, deps.now()) ? 'not_awaited' : undefined;
    if (refusal) {
      outcome = refusal;
      throw new AppError('conflict', 'no handover taken');
    }
    outcome = 'adopted';
    const secret_sealed = await deps.secretBox.seal(secret, signingSecretContext(current));
    const handover = { handed_over_at: new Date(deps.now()).toISOString(), ...(options.sourceIp !== undefined && { handed_over_source_ip: options.sourceIp }) };
    return { record: { ...current, signature: { ...current.signature!, secret_sealed, ...handover, ...(options.revealOnce && { verification_token_unseen: true as const }) } } };
  }).catch((error: unknown) => {
    if (!(error instanceof AppError && error.code === 'conflict')) throw error;
    if (outcome === 'adopted') outcome = 'has_secret'; // changed concurrently, three times over: someone else's handover won
  });
  return outcome;
}

/**
 * Opens the handshake window again (`POST /triggers/{id}/await-handshake`): the secret a handshake
 * handed over (or one pasted) is forgotten, and the next handover within the window is taken. For
 * the owner who does not recognise a handover's time or address, or who re-creates the subscription.
 */
export function awaitHandshake(deps: TriggerDeps, accountId: string, id: string): Promise<TriggerChange> {
  return changeTrigger(deps, accountId, id, async (current) => {
    // The request schemas (and the catalog) load with the first request that needs them.
    (await import('./trigger-requests.js')).checkAwaitsHandshake(current.signature);
    return { record: { ...current, signature: armedSignature(current.signature!, new Date(deps.now()).toISOString()) } };
  });
}

/**
 * A trigger for its owner to read, with Notion's verification token the one time it has not been
 * shown yet (Notion asks the user to paste it back): opened, returned, and marked as shown. Two
 * reads at the same moment may both show it; none after.
 */
export async function readTrigger(deps: TriggerDeps, accountId: string, id: string): Promise<TriggerChange & { verificationToken?: string }> {
  const record = await getTrigger(deps, accountId, id);
  const signature = record.signature;
  if (!signature?.verification_token_unseen || signature.secret_sealed === undefined) return { record };
  const verificationToken = await deps.secretBox.open(signature.secret_sealed, signingSecretContext(record));
  const shown = await changeTrigger(deps, accountId, id, async (current) => {
    const { verification_token_unseen: _unseen, ...rest } = current.signature!;
    return { record: { ...current, signature: rest } };
  });
  return { record: shown.record, verificationToken };
}
