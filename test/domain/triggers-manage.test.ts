import { describe, expect, it } from 'vitest';
import { hashApiKey } from '../../functions/domain/api-keys.js';
import type { SecretBox } from '../../functions/domain/secret-box.js';
import {
  adoptHandshakeSecret, awaitHandshake, createTrigger, deleteTrigger, getTrigger, regenerateApiKey, regenerateUrl, rotateSigningSecret, updateTrigger, type TriggerDeps,
} from '../../functions/domain/triggers/manage-triggers.js';
import { toPublicTrigger, type TriggerRecord } from '../../functions/domain/triggers/trigger.js';
import type { TriggerSettings } from '../../functions/domain/triggers/trigger-requests.js';
import type { TriggerStore } from '../../functions/domain/triggers/trigger-store.js';
import { CachedTriggerLookup } from '../../functions/domain/webhooks/trigger-lookup.js';
import { AppError } from '../../functions/shared/errors.js';

const ACCOUNT = 'acct-1';
const NOW = new Date('2024-05-01T12:00:00.000Z');
const DEFAULTS: TriggerSettings = {
  flow: 'echo', response_mode: 'acknowledge', event_filter: [], api_key_enabled: false, signature: null, allowed_source_ips: null, enabled: true, deduplicate: false, acknowledge_response: null,
};

/** A store in memory; `refuseWrites` makes the next replaces/deletes lose a race. */
class MemoryStore implements TriggerStore {
  readonly owners = new Map<string, TriggerRecord>();
  refuseWrites = 0;
  reads = 0;
  async create(record: TriggerRecord) {
    this.owners.set(record.id, structuredClone(record));
  }
  async get(accountId: string, id: string) {
    this.reads++;
    const record = this.owners.get(id);
    return record?.account_id === accountId ? structuredClone(record) : undefined;
  }
  async list() {
    return { items: [...this.owners.values()], nextCursor: null };
  }
  async replace(previous: TriggerRecord, next: TriggerRecord) {
    if (this.refuseWrites > 0 && this.refuseWrites--) return false;
    if (this.owners.get(previous.id)?.version !== previous.version) return false;
    this.owners.set(next.id, structuredClone(next));
    return true;
  }
  async delete(record: TriggerRecord) {
    if (this.refuseWrites > 0 && this.refuseWrites--) return false;
    return this.owners.delete(record.id);
  }
  async findByWebhookId(webhookId: string) {
    return [...this.owners.values()].find((r) => r.webhook_id === webhookId);
  }
}

/** Seals reversibly and records the context, so tests can see what binds a secret. */
const sealer: SecretBox & { contexts: Record<string, string>[]; opened: number } = {
  contexts: [],
  opened: 0,
  async seal(plaintext, context) {
    this.contexts.push(context);
    return `sealed:${Buffer.from(plaintext).toString('base64')}`;
  },
  async open(sealed) {
    this.opened++;
    return Buffer.from(sealed.slice('sealed:'.length), 'base64').toString();
  },
};

/** Deterministic "random" bytes: 0, 1, 2, ... so ids are predictable. */
function counterBytes() {
  let next = 0;
  return (size: number) => Uint8Array.from({ length: size }, () => next++ % 256);
}

function setup() {
  const store = new MemoryStore();
  const deps: TriggerDeps = { store, secretBox: sealer, randomBytes: counterBytes(), now: () => NOW.getTime() };
  return { store, deps };
}

async function refusal(run: () => Promise<unknown>): Promise<AppError> {
  try {
    await run();
  } catch (error) {
    if (error instanceof AppError) return error;
    throw error;
  }
  throw new Error('expected an AppError');
}

describe('createTrigger', () => {
  it('webhook_id is 24 random bytes (192 bits), base64url', async () => {
    const { deps } = setup();
    const { record } = await createTrigger(deps, ACCOUNT, DEFAULTS);
    const bytes = Buffer.from(record.webhook_id, 'base64url');
    expect(bytes.length).toBe(24);
    expect(record.webhook_id).toMatch(/^[A-Za-z0-9_-]{32}$/);
  });

  it('stores the signing secret sealed, bound to the account and trigger', async () => {
    const { deps, store } = setup();
    const { record } = await createTrigger(deps, ACCOUNT, { ...DEFAULTS, signature: { service: 'github', secret: 'plain-secret' } });
    expect(JSON.stringify(store.owners.get(record.id))).not.toContain('plain-secret');
    expect(sealer.contexts.at(-1)).toEqual({ account_id: ACCOUNT, trigger_id: record.id, purpose: 'webhook-signature' });
  });

  it('with api_key_enabled, returns the key and stores only its hash', async () => {
    const { deps, store } = setup();
    const { record, apiKey } = await createTrigger(deps, ACCOUNT, { ...DEFAULTS, api_key_enabled: true });
    expect(apiKey).toMatch(/^fgk_/);
    expect(store.owners.get(record.id)?.api_key_hash).toBe(hashApiKey(apiKey!));
    expect(JSON.stringify(store.owners.get(record.id))).not.toContain(apiKey);
  });

  it('without api_key_enabled, there is no key and no hash', async () => {
    const { deps } = setup();
    const change = await createTrigger(deps, ACCOUNT, DEFAULTS);
    expect(change.apiKey).toBeUndefined();
    expect(change.record.api_key_hash).toBeUndefined();
  });
});

describe('getTrigger', () => {
  it('answers not_found for an id that is not 32 hex digits, without a read', async () => {
    const { deps, store } = setup();
    expect((await refusal(() => getTrigger(deps, ACCOUNT, '../x'))).code).toBe('not_found');
    expect(store.reads).toBe(0);
  });

  it('answers not_found for another account\'s trigger', async () => {
    const { deps } = setup();
    const { record } = await createTrigger(deps, ACCOUNT, DEFAULTS);
    expect((await refusal(() => getTrigger(deps, 'acct-2', record.id))).code).toBe('not_found');
  });
});

describe('updateTrigger', () => {
  it('bumps the version and updated_at', async () => {
    const { deps } = setup();
    const { record } = await createTrigger(deps, ACCOUNT, DEFAULTS);
    const later = new Date(NOW.getTime() + 1000);
    const changed = await updateTrigger({ ...deps, now: () => later.getTime() }, ACCOUNT, record.id, { flow: 'other' });
    expect(changed.record).toMatchObject({ flow: 'other', version: 2, updated_at: later.toISOString(), created_at: NOW.toISOString() });
  });

  it('turning api_key_enabled on generates a key; turning it on again does not', async () => {
    const { deps } = setup();
    const { record } = await createTrigger(deps, ACCOUNT, DEFAULTS);
    const on = await updateTrigger(deps, ACCOUNT, record.id, { api_key_enabled: true });
    expect(on.apiKey).toMatch(/^fgk_/);
    const again = await updateTrigger(deps, ACCOUNT, record.id, { api_key_enabled: true });
    expect(again.apiKey).toBeUndefined();
    expect(again.record.api_key_hash).toBe(hashApiKey(on.apiKey!));
  });

  it('turning api_key_enabled off removes the hash', async () => {
    const { deps } = setup();
    const { record } = await createTrigger(deps, ACCOUNT, { ...DEFAULTS, api_key_enabled: true });
    const off = await updateTrigger(deps, ACCOUNT, record.id, { api_key_enabled: false });
    expect(off.record.api_key_enabled).toBe(false);
    expect(off.record).not.toHaveProperty('api_key_hash');
  });

  it('a new signature is sealed; null removes it', async () => {
    const { deps } = setup();
    const { record } = await createTrigger(deps, ACCOUNT, DEFAULTS);
    const signed = await updateTrigger(deps, ACCOUNT, record.id, { signature: { service: 'shopify', secret: 'new-secret' } });
    expect(signed.record.signature).toEqual({ service: 'shopify', secret_sealed: expect.stringMatching(/^sealed:/) });
    expect((await updateTrigger(deps, ACCOUNT, record.id, { signature: null })).record.signature).toBeNull();
  });

  it('reads again when a concurrent change got there first', async () => {
    const { deps, store } = setup();
    const { record } = await createTrigger(deps, ACCOUNT, DEFAULTS);
    store.refuseWrites = 2;
    expect((await updateTrigger(deps, ACCOUNT, record.id, { enabled: false })).record.enabled).toBe(false);
  });

  it('gives up with conflict after 3 lost races', async () => {
    const { deps, store } = setup();
    const { record } = await createTrigger(deps, ACCOUNT, DEFAULTS);
    store.refuseWrites = 3;
    expect((await refusal(() => updateTrigger(deps, ACCOUNT, record.id, { enabled: false }))).code).toBe('conflict');
  });
});

describe('regenerateUrl and regenerateApiKey', () => {
  it('regenerateUrl gives a new webhook id and keeps the rest', async () => {
    const { deps } = setup();
    const { record } = await createTrigger(deps, ACCOUNT, { ...DEFAULTS, api_key_enabled: true });
    const renewed = await regenerateUrl(deps, ACCOUNT, record.id);
    expect(renewed.record.webhook_id).not.toBe(record.webhook_id);
    expect(renewed.record.api_key_hash).toBe(record.api_key_hash);
    expect(renewed.apiKey).toBeUndefined();
  });

  it('regenerateApiKey replaces the hash and returns the new key once', async () => {
    const { deps } = setup();
    const { record, apiKey } = await createTrigger(deps, ACCOUNT, { ...DEFAULTS, api_key_enabled: true });
    const renewed = await regenerateApiKey(deps, ACCOUNT, record.id);
    expect(renewed.apiKey).not.toBe(apiKey);
    expect(renewed.record.api_key_hash).toBe(hashApiKey(renewed.apiKey!));
  });

  it('regenerateApiKey with protection off is validation_error and changes nothing', async () => {
    const { deps, store } = setup();
    const { record } = await createTrigger(deps, ACCOUNT, DEFAULTS);
    expect((await refusal(() => regenerateApiKey(deps, ACCOUNT, record.id))).code).toBe('validation_error');
    expect(store.owners.get(record.id)?.version).toBe(1);
  });
});

describe('deleteTrigger', () => {
  it('reads again when the trigger changed since it was read', async () => {
    const { deps, store } = setup();
    const { record } = await createTrigger(deps, ACCOUNT, DEFAULTS);
    store.refuseWrites = 1;
    await deleteTrigger(deps, ACCOUNT, record.id);
    expect(store.owners.has(record.id)).toBe(false);
  });

  it('gives up with conflict after 3 lost races', async () => {
    const { deps, store } = setup();
    const { record } = await createTrigger(deps, ACCOUNT, DEFAULTS);
    store.refuseWrites = 3;
    expect((await refusal(() => deleteTrigger(deps, ACCOUNT, record.id))).code).toBe('conflict');
  });
});

describe('CachedTriggerLookup', () => {
  async function lookupSetup(ttlMs: number, maxEntries = 1000) {
    const { deps, store } = setup();
    const { record } = await createTrigger(deps, ACCOUNT, { ...DEFAULTS, signature: { service: 'github', secret: 's1' } });
    let nowMs = 0;
    const finds = { count: 0 };
    const counting = { findByWebhookId: (id: string) => (finds.count++, store.findByWebhookId(id)) };
    const lookup = new CachedTriggerLookup(counting, sealer, ttlMs, () => nowMs, maxEntries);
    return { deps, store, record, lookup, finds, advance: (ms: number) => (nowMs += ms) };
  }

  it('serves a trigger from the cache within the TTL, marked as cached, with its secret opened', async () => {
    const { record, lookup, finds, advance } = await lookupSetup(300);
    expect((await lookup.find(record.webhook_id))?.cached).toBeFalsy();
    advance(299);
    const again = await lookup.find(record.webhook_id);
    expect(again).toMatchObject({ cached: true, signingSecret: 's1' });
    expect(finds.count).toBe(1);
  });

  it('reads the store again once the TTL has passed', async () => {
    const { record, lookup, finds, advance } = await lookupSetup(300);
    await lookup.find(record.webhook_id);
    advance(300);
    expect((await lookup.find(record.webhook_id))?.cached).toBeFalsy();
    expect(finds.count).toBe(2);
  });

  it('makes one read and opens no secret for a burst of refusals\' re-reads of an unchanged trigger (a flood of forged requests costs no KMS call)', async () => {
    const { record, lookup, finds } = await lookupSetup(300);
    await lookup.find(record.webhook_id);
    let opened = 0;
    const open = sealer.open.bind(sealer);
    sealer.open = async (...args: Parameters<typeof sealer.open>) => (opened++, open(...args));
    try {
      const fresh = await Promise.all(Array.from({ length: 20 }, () => lookup.findFresh(record.webhook_id)));
      expect(fresh.every((t) => t?.signingSecret === 's1')).toBe(true);
      expect(finds.count).toBe(2);
      expect(opened).toBe(0);
    } finally {
      sealer.open = open;
    }
  });

  it('with a TTL of 0, never caches', async () => {
    const { record, lookup, finds } = await lookupSetup(0);
    await lookup.find(record.webhook_id);
    await lookup.find(record.webhook_id);
    expect(finds.count).toBe(2);
  });

  it('does not cache unknown ids, so a new trigger works at once', async () => {
    const { lookup, finds } = await lookupSetup(300);
    await lookup.find('unknown');
    await lookup.find('unknown');
    expect(finds.count).toBe(2);
  });

  it('findFresh reads past the cache and reuses the opened secret of an unchanged trigger', async () => {
    const { record, lookup, finds } = await lookupSetup(300);
    await lookup.find(record.webhook_id);
    const opened = sealer.opened;
    expect((await lookup.findFresh(record.webhook_id))?.signingSecret).toBe('s1');
    expect(finds.count).toBe(2);
    expect(sealer.opened).toBe(opened);
  });

  it('findFresh opens the new secret of a changed trigger and caches it', async () => {
    const { deps, record, lookup } = await lookupSetup(300);
    await lookup.find(record.webhook_id);
    await updateTrigger(deps, ACCOUNT, record.id, { signature: { service: 'github', secret: 's2' } });
    expect((await lookup.find(record.webhook_id))?.signingSecret).toBe('s1'); // stale within the TTL
    expect((await lookup.findFresh(record.webhook_id))?.signingSecret).toBe('s2');
    expect((await lookup.find(record.webhook_id))?.signingSecret).toBe('s2');
  });

  it('holds at most maxEntries triggers, evicting the oldest', async () => {
    const { deps, record, lookup, finds } = await lookupSetup(10_000, 1);
    const other = (await createTrigger(deps, ACCOUNT, DEFAULTS)).record;
    await lookup.find(record.webhook_id);
    await lookup.find(other.webhook_id);
    await lookup.find(record.webhook_id);
    expect(finds.count).toBe(3);
  });
});

const later = (seconds: number) => new Date(NOW.getTime() + seconds * 1000);
const at = (deps: TriggerDeps, time: Date): TriggerDeps => ({ ...deps, now: () => time.getTime() });
const open = (sealed: string | undefined) => sealed && Buffer.from(sealed.slice('sealed:'.length), 'base64').toString();

describe('rotateSigningSecret', () => {
  async function signed(service: 'github' | 'standard_webhooks' = 'github', secret = 'old-secret') {
    const { deps, store } = setup();
    const { record } = await createTrigger(deps, ACCOUNT, { ...DEFAULTS, signature: { service, secret } });
    return { deps, store, record };
  }

  it('seals the new secret and keeps the old one, as sealed, until the overlap ends', async () => {
    const { deps, record } = await signed();
    const { record: rotated, apiKey } = await rotateSigningSecret(deps, ACCOUNT, record.id, { secret: 'new-secret', previous_secret_expires_in_seconds: 3600 });
    expect(open(rotated.signature!.secret_sealed)).toBe('new-secret');
    expect(rotated.signature!.previous_secret_sealed).toBe(record.signature!.secret_sealed); // moved, never opened
    expect(rotated.signature!.previous_secret_expires_at).toBe(later(3600).toISOString());
    expect(rotated.signature!.service).toBe('github');
    expect(sealer.contexts.at(-1)).toEqual({ account_id: ACCOUNT, trigger_id: record.id, purpose: 'webhook-signature' });
    expect(rotated.version).toBe(2);
    expect(apiKey).toBeUndefined();
  });

  it('with an overlap of 0 keeps no old secret', async () => {
    const { deps, record } = await signed();
    const { record: rotated } = await rotateSigningSecret(deps, ACCOUNT, record.id, { secret: 'new-secret', previous_secret_expires_in_seconds: 0 });
    expect(rotated.signature).not.toHaveProperty('previous_secret_sealed');
    expect(rotated.signature).not.toHaveProperty('previous_secret_expires_at');
  });

  it('rotating again during an overlap keeps only the secret just replaced: at most two are accepted', async () => {
    const { deps, record } = await signed();
    await rotateSigningSecret(deps, ACCOUNT, record.id, { secret: 'second', previous_secret_expires_in_seconds: 3600 });
    const { record: third } = await rotateSigningSecret(at(deps, later(60)), ACCOUNT, record.id, { secret: 'third', previous_secret_expires_in_seconds: 600 });
    expect(open(third.signature!.secret_sealed)).toBe('third');
    expect(open(third.signature!.previous_secret_sealed)).toBe('second');
    expect(third.signature!.previous_secret_expires_at).toBe(later(660).toISOString());
  });

  it('is validation_error on a trigger without a signature, and changes nothing', async () => {
    const { deps, store } = setup();
    const { record } = await createTrigger(deps, ACCOUNT, DEFAULTS);
    const error = await refusal(() => rotateSigningSecret(deps, ACCOUNT, record.id, { secret: 'x', previous_secret_expires_in_seconds: 60 }));
    expect(error.code).toBe('validation_error');
    expect(store.owners.get(record.id)?.version).toBe(1);
  });

  it('holds the new secret to the scheme\'s rules: standard_webhooks needs whsec_<base64>', async () => {
    const whsec = (fill: number) => `whsec_${Buffer.alloc(24, fill).toString('base64')}`;
    const { deps, store, record } = await signed('standard_webhooks', whsec(1));
    expect((await refusal(() => rotateSigningSecret(deps, ACCOUNT, record.id, { secret: 'plain', previous_secret_expires_in_seconds: 60 }))).code).toBe('validation_error');
    expect(store.owners.get(record.id)?.version).toBe(1);
    const { record: rotated } = await rotateSigningSecret(deps, ACCOUNT, record.id, { secret: whsec(2), previous_secret_expires_in_seconds: 60 });
    expect(open(rotated.signature!.secret_sealed)).toBe(whsec(2));
  });

  it('a signature set with PATCH replaces the secret with no overlap', async () => {
    const { deps, record } = await signed();
    await rotateSigningSecret(deps, ACCOUNT, record.id, { secret: 'second', previous_secret_expires_in_seconds: 3600 });
    const { record: patched } = await updateTrigger(deps, ACCOUNT, record.id, { signature: { service: 'github', secret: 'third' } });
    expect(patched.signature).toEqual({ service: 'github', secret_sealed: expect.any(String) });
  });

  it('other changes keep a running overlap, and tidy away one that ended', async () => {
    const { deps, record } = await signed();
    const { record: rotated } = await rotateSigningSecret(deps, ACCOUNT, record.id, { secret: 'second', previous_secret_expires_in_seconds: 60 });
    const during = await updateTrigger(at(deps, later(59)), ACCOUNT, record.id, { enabled: false });
    expect(during.record.signature).toEqual(rotated.signature);
    const after = await regenerateUrl(at(deps, later(60)), ACCOUNT, record.id);
    expect(after.record.signature).toEqual({ service: 'github', secret_sealed: rotated.signature!.secret_sealed });
  });

  it('the owner sees when the old secret stops while it works, and null after; never a secret', async () => {
    const { deps, record } = await signed();
    const { record: rotated } = await rotateSigningSecret(deps, ACCOUNT, record.id, { secret: 'second', previous_secret_expires_in_seconds: 60 });
    const shown = toPublicTrigger(rotated, 'https://x/webhooks', later(59));
    expect(shown.signature).toEqual({ service: 'github', previous_secret_expires_at: later(60).toISOString() });
    expect(JSON.stringify(shown)).not.toMatch(/sealed|second/);
    expect(toPublicTrigger(rotated, 'https://x/webhooks', later(60)).signature).toEqual({ service: 'github', previous_secret_expires_at: null });
  });
});

describe('regenerateApiKey with an overlap', () => {
  async function keyed() {
    const { deps, store } = setup();
    const { record, apiKey } = await createTrigger(deps, ACCOUNT, { ...DEFAULTS, api_key_enabled: true });
    return { deps, store, record, apiKey: apiKey! };
  }

  it('by default the old key stops at once: no previous hash', async () => {
    const { deps, record } = await keyed();
    const renewed = await regenerateApiKey(deps, ACCOUNT, record.id, {});
    expect(renewed.record).not.toHaveProperty('previous_api_key_hash');
    expect(renewed.record).not.toHaveProperty('previous_api_key_expires_at');
  });

  it('keeps the old key\'s hash, never the key, until the overlap ends', async () => {
    const { deps, store, record, apiKey } = await keyed();
    const renewed = await regenerateApiKey(deps, ACCOUNT, record.id, { previous_key_expires_in_seconds: 120 });
    expect(renewed.record.api_key_hash).toBe(hashApiKey(renewed.apiKey!));
    expect(renewed.record.previous_api_key_hash).toBe(hashApiKey(apiKey));
    expect(renewed.record.previous_api_key_expires_at).toBe(later(120).toISOString());
    expect(JSON.stringify(store.owners.get(record.id))).not.toContain(apiKey);
    expect(toPublicTrigger(renewed.record, 'https://x/webhooks', NOW).previous_api_key_expires_at).toBe(later(120).toISOString());
    expect(toPublicTrigger(renewed.record, 'https://x/webhooks', later(120)).previous_api_key_expires_at).toBeNull();
  });

  it('regenerating again keeps only the key just replaced; regenerating without an overlap ends it', async () => {
    const { deps, record } = await keyed();
    const second = await regenerateApiKey(deps, ACCOUNT, record.id, { previous_key_expires_in_seconds: 120 });
    const third = await regenerateApiKey(deps, ACCOUNT, record.id, { previous_key_expires_in_seconds: 120 });
    expect(third.record.previous_api_key_hash).toBe(hashApiKey(second.apiKey!));
    const fourth = await regenerateApiKey(deps, ACCOUNT, record.id);
    expect(fourth.record).not.toHaveProperty('previous_api_key_hash');
  });

  it('turning protection off discards both keys', async () => {
    const { deps, record } = await keyed();
    await regenerateApiKey(deps, ACCOUNT, record.id, { previous_key_expires_in_seconds: 120 });
    const off = await updateTrigger(deps, ACCOUNT, record.id, { api_key_enabled: false });
    expect(off.record).not.toHaveProperty('previous_api_key_hash');
    expect(off.record).not.toHaveProperty('previous_api_key_expires_at');
  });
});

describe('allowed_source_ips', () => {
  it('is stored as given, and shown to the owner; an older trigger without it shows null', async () => {
    const { deps } = setup();
    const { record } = await createTrigger(deps, ACCOUNT, { ...DEFAULTS, allowed_source_ips: ['10.0.0.0/8'] });
    expect(record.allowed_source_ips).toEqual(['10.0.0.0/8']);
    expect(toPublicTrigger(record, 'https://x/webhooks', NOW).allowed_source_ips).toEqual(['10.0.0.0/8']);
    const { allowed_source_ips: _, ...older } = record;
    expect(toPublicTrigger(older, 'https://x/webhooks', NOW).allowed_source_ips).toBeNull();
  });
});

describe('CachedTriggerLookup during a rotation', () => {
  async function rotated(overlapSeconds: number) {
    const { deps, store } = setup();
    const { record } = await createTrigger(deps, ACCOUNT, { ...DEFAULTS, signature: { service: 'github', secret: 'old' } });
    await rotateSigningSecret(deps, ACCOUNT, record.id, { secret: 'new', previous_secret_expires_in_seconds: overlapSeconds });
    return { store, record };
  }

  it('opens both secrets while the overlap lasts', async () => {
    const { store, record } = await rotated(60);
    const lookup = new CachedTriggerLookup(store, sealer, 300, () => NOW.getTime());
    expect(await lookup.find(record.webhook_id)).toMatchObject({ signingSecret: 'new', previousSigningSecret: 'old' });
  });

  it('does not open an old secret whose overlap has ended', async () => {
    const { store, record } = await rotated(60);
    const lookup = new CachedTriggerLookup(store, sealer, 300, () => later(60).getTime());
    const opened = sealer.opened;
    const trigger = await lookup.find(record.webhook_id);
    expect(trigger?.signingSecret).toBe('new');
    expect(trigger).not.toHaveProperty('previousSigningSecret');
    expect(sealer.opened).toBe(opened + 1);
  });

  it('a refresh of the unchanged trigger keeps both opened secrets', async () => {
    const { store, record } = await rotated(60);
    const lookup = new CachedTriggerLookup(store, sealer, 300, () => NOW.getTime());
    await lookup.find(record.webhook_id);
    const opened = sealer.opened;
    expect(await lookup.findFresh(record.webhook_id)).toMatchObject({ signingSecret: 'new', previousSigningSecret: 'old' });
    expect(sealer.opened).toBe(opened);
  });
});

describe('the handshake window (Asana, Notion)', () => {
  const asana = { ...DEFAULTS, signature: { service: 'asana', handshake_window_seconds: 60 } };
  const at = (deps: TriggerDeps, ms: number) => ({ ...deps, now: () => NOW.getTime() + ms });

  it('the window opens when the trigger is created, to the millisecond, however long sealing takes', async () => {
    const { deps } = setup();
    let ticks = 0;
    // A clock that moves on every reading, as a busy machine's does between two of them.
    const { record } = await createTrigger({ ...deps, now: () => NOW.getTime() + ticks++ }, ACCOUNT, asana);
    expect((record.signature as { handshake_armed_at?: string }).handshake_armed_at).toBe(record.created_at);
  });

  it('adoptHandshakeSecret takes a handover up to the window\'s last second, with when and from where, and refuses one after', async () => {
    const { deps, store } = setup();
    const { record } = await createTrigger(deps, ACCOUNT, asana);
    expect(record.signature).toMatchObject({ handshake_window_seconds: 60, handshake_armed_at: NOW.toISOString() });
    expect(await adoptHandshakeSecret(at(deps, 60_001), record, 'late', { revealOnce: false, sourceIp: '198.51.100.9' })).toBe('not_awaited');
    expect(store.owners.get(record.id)!.signature!.secret_sealed).toBeUndefined();
    expect(await adoptHandshakeSecret(at(deps, 60_000), record, 'on-time', { revealOnce: false, sourceIp: '203.0.113.5' })).toBe('adopted');
    expect(store.owners.get(record.id)!.signature).toMatchObject({ handed_over_at: new Date(NOW.getTime() + 60_000).toISOString(), handed_over_source_ip: '203.0.113.5' });
    expect(await adoptHandshakeSecret(at(deps, 1), record, 'second', { revealOnce: false })).toBe('has_secret');
  });

  it('awaitHandshake forgets the secret and its handover and counts the window from now', async () => {
    const { deps, store } = setup();
    const { record } = await createTrigger(deps, ACCOUNT, asana);
    await adoptHandshakeSecret(deps, record, 'handed', { revealOnce: false, sourceIp: '203.0.113.5' });
    const later = at(deps, 3_600_000);
    const { record: rearmed } = await awaitHandshake(later, ACCOUNT, record.id);
    expect(rearmed.signature).not.toHaveProperty('secret_sealed');
    expect(rearmed.signature).not.toHaveProperty('handed_over_at');
    expect(toPublicTrigger(rearmed, 'https://h/webhooks', new Date(later.now())).signature).toMatchObject({
      handshake_window_seconds: 60, handshake_awaited_until: new Date(NOW.getTime() + 3_660_000).toISOString(), handed_over_at: null, handed_over_source_ip: null,
    });
    expect(await adoptHandshakeSecret(at(deps, 3_659_000), rearmed, 'again', { revealOnce: false })).toBe('adopted');
    expect(store.owners.get(record.id)!.signature!.secret_sealed).toBeDefined();
  });

  it('awaitHandshake refuses a sender whose secret is pasted', async () => {
    const { deps } = setup();
    const { record } = await createTrigger(deps, ACCOUNT, { ...DEFAULTS, signature: { service: 'github', secret: 's' } });
    expect((await refusal(() => awaitHandshake(deps, ACCOUNT, record.id))).code).toBe('validation_error');
  });
});
