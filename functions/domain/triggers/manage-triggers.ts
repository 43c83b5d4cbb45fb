import { generateApiKey, generateId, hashApiKey, ID_PATTERN } from '../api-keys.js';
import type { Clock } from '../clock.js';
import type { RandomBytes } from '../random-bytes.js';
import type { SecretBox } from '../secret-box.js';
import { AppError } from '../../shared/errors.js';
import { signingSecretContext } from '../webhooks/trigger-lookup.js';
import type { TriggerPatch, TriggerRecord, TriggerSettings } from './trigger.js';
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

async function sealSignature(deps: TriggerDeps, record: Pick<TriggerRecord, 'account_id' | 'id'>, signature: TriggerSettings['signature']) {
  if (!signature) return null;
  const secret_sealed = await deps.secretBox.seal(signature.secret, signingSecretContext(record));
  return { service: signature.service, secret_sealed, ...(signature.custom && { custom: signature.custom }) };
}

export async function createTrigger(deps: TriggerDeps, accountId: string, settings: TriggerSettings): Promise<TriggerChange> {
  const id = generateId(deps.randomBytes);
  const now = new Date(deps.now()).toISOString();
  const apiKey = settings.api_key_enabled ? generateApiKey(deps.randomBytes) : undefined;
  const record: TriggerRecord = {
    id,
    account_id: accountId,
    webhook_id: newWebhookId(deps.randomBytes),
    flow: settings.flow,
    response_mode: settings.response_mode,
    event_filter: settings.event_filter,
    api_key_enabled: settings.api_key_enabled,
    ...(apiKey && { api_key_hash: hashApiKey(apiKey) }),
    signature: await sealSignature(deps, { account_id: accountId, id }, settings.signature),
    enabled: settings.enabled,
    deduplicate: settings.deduplicate,
    created_at: now,
    updated_at: now,
    version: 1,
  };
  await deps.store.create(record);
  return { record, apiKey };
}

export async function getTrigger(deps: Pick<TriggerDeps, 'store'>, accountId: string, id: string): Promise<TriggerRecord> {
  const record = ID_PATTERN.test(id) ? await deps.store.get(accountId, id) : undefined;
  if (!record) throw new AppError('not_found');
  return record;
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
    next.record = { ...next.record, version: current.version + 1, updated_at: new Date(deps.now()).toISOString() };
    if (await deps.store.replace(current, next.record)) return next;
  }
  throw new AppError('conflict', 'trigger changed concurrently');
}

export function updateTrigger(deps: TriggerDeps, accountId: string, id: string, patch: TriggerPatch): Promise<TriggerChange> {
  return changeTrigger(deps, accountId, id, async (current) => {
    const { signature, api_key_enabled, ...plain } = patch;
    const record: TriggerRecord = { ...current, ...plain };
    if (signature !== undefined) record.signature = await sealSignature(deps, current, signature);
    let apiKey: string | undefined;
    if (api_key_enabled === true && !current.api_key_enabled) {
      apiKey = generateApiKey(deps.randomBytes);
      record.api_key_enabled = true;
      record.api_key_hash = hashApiKey(apiKey);
    } else if (api_key_enabled === false) {
      record.api_key_enabled = false;
      delete record.api_key_hash;
    }
    return { record, apiKey };
  });
}

export function regenerateUrl(deps: TriggerDeps, accountId: string, id: string): Promise<TriggerChange> {
  return changeTrigger(deps, accountId, id, async (current) => ({ record: { ...current, webhook_id: newWebhookId(deps.randomBytes) } }));
}

export function regenerateApiKey(deps: TriggerDeps, accountId: string, id: string): Promise<TriggerChange> {
  return changeTrigger(deps, accountId, id, async (current) => {
    if (!current.api_key_enabled) throw new AppError('validation_error', 'API key protection is off; enable api_key_enabled first');
    const apiKey = generateApiKey(deps.randomBytes);
    return { record: { ...current, api_key_hash: hashApiKey(apiKey) }, apiKey };
  });
}

/** Deletes the trigger as last read, reading again when a concurrent change got there first. */
export async function deleteTrigger(deps: Pick<TriggerDeps, 'store'>, accountId: string, id: string): Promise<void> {
  for (let attempt = 0; attempt < MAX_CHANGE_ATTEMPTS; attempt++) {
    if (await deps.store.delete(await getTrigger(deps, accountId, id))) return;
  }
  throw new AppError('conflict', 'trigger changed concurrently');
}
