import type { Clock } from '../clock.js';
import type { SecretBox } from '../secret-box.js';
import { SECRET_PURPOSES, SECRET_PURPOSE_KEY } from '../secret-purposes.js';
import type { TriggerRecord } from '../triggers/trigger.js';
import type { TriggerStore } from '../triggers/trigger-store.js';

/** A trigger as the receiver uses it: the signing secret opened once, not on every request. */
export interface ActiveTrigger {
  record: TriggerRecord;
  signingSecret?: string;
  /** True when this copy came from the cache and may be up to the TTL old. */
  cached?: boolean;
}

/** The receiver's read of triggers by webhook id. */
export interface TriggerLookup {
  /** The trigger, possibly from a cache. */
  find(webhookId: string): Promise<ActiveTrigger | undefined>;
  /** The trigger as stored now, past any cache (and refreshing it). */
  findFresh(webhookId: string): Promise<ActiveTrigger | undefined>;
}

export const signingSecretContext = (record: Pick<TriggerRecord, 'account_id' | 'id'>) => ({
  account_id: record.account_id,
  trigger_id: record.id,
  [SECRET_PURPOSE_KEY]: SECRET_PURPOSES.webhookSignature,
});

/**
 * The receiver's view of triggers, cached per execution environment for `ttlMs` so a burst of
 * deliveries costs one read and one decryption. A change to a trigger (disable, delete, new URL,
 * new API key, new secret) reaches the receiver within `ttlMs`. Unknown ids are not cached, so a
 * new trigger works at once; the cache holds at most `maxEntries` triggers.
 */
export class CachedTriggerLookup implements TriggerLookup {
  private readonly entries = new Map<string, { trigger: ActiveTrigger; expiresAt: number }>();

  constructor(
    private readonly store: Pick<TriggerStore, 'findByWebhookId'>,
    private readonly secretBox: SecretBox,
    private readonly ttlMs: number,
    private readonly now: Clock,
    private readonly maxEntries = 1000,
  ) {}

  async find(webhookId: string): Promise<ActiveTrigger | undefined> {
    const cached = this.entries.get(webhookId);
    if (cached && cached.expiresAt > this.now()) return { ...cached.trigger, cached: true };
    return this.findFresh(webhookId);
  }

  async findFresh(webhookId: string): Promise<ActiveTrigger | undefined> {
    const now = this.now();
    const previous = this.entries.get(webhookId)?.trigger;
    this.entries.delete(webhookId);
    const record = await this.store.findByWebhookId(webhookId);
    if (!record) return undefined;
    // An unchanged trigger keeps its opened secret: a refresh costs a read, not a decryption.
    const signingSecret = previous?.record.version === record.version
      ? previous.signingSecret
      : record.signature ? await this.secretBox.open(record.signature.secret_sealed, signingSecretContext(record)) : undefined;
    const trigger: ActiveTrigger = { record, signingSecret };
    if (this.ttlMs > 0) {
      if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
      this.entries.set(webhookId, { trigger, expiresAt: now + this.ttlMs });
    }
    return trigger;
  }
}
