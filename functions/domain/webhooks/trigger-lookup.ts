import type { SecretBox } from '../secret-box.js';
import type { TriggerRecord } from '../triggers/trigger.js';
import type { TriggerStore } from '../triggers/trigger-store.js';

/** A trigger as the receiver uses it: the signing secret opened once, not on every request. */
export interface ActiveTrigger {
  record: TriggerRecord;
  signingSecret?: string;
}

export const signingSecretContext = (record: Pick<TriggerRecord, 'account_id' | 'id'>) => ({
  account_id: record.account_id,
  trigger_id: record.id,
  purpose: 'webhook-signature',
});

/**
 * The receiver's view of triggers, cached per execution environment for `ttlMs` so a burst of
 * deliveries costs one read and one decryption. A change to a trigger (disable, delete, new URL,
 * new API key, new secret) reaches the receiver within `ttlMs`. Unknown ids are not cached, so a
 * new trigger works at once; the cache holds at most `maxEntries` triggers.
 */
export class CachedTriggerLookup {
  private readonly entries = new Map<string, { trigger: ActiveTrigger; expiresAt: number }>();

  constructor(
    private readonly store: Pick<TriggerStore, 'findByWebhookId'>,
    private readonly secretBox: SecretBox,
    private readonly ttlMs: number,
    private readonly nowMs: () => number = Date.now,
    private readonly maxEntries = 1000,
  ) {}

  async find(webhookId: string): Promise<ActiveTrigger | undefined> {
    const now = this.nowMs();
    const cached = this.entries.get(webhookId);
    if (cached && cached.expiresAt > now) return cached.trigger;
    this.entries.delete(webhookId);
    const record = await this.store.findByWebhookId(webhookId);
    if (!record) return undefined;
    const trigger: ActiveTrigger = {
      record,
      signingSecret: record.signature ? await this.secretBox.open(record.signature.secret_sealed, signingSecretContext(record)) : undefined,
    };
    if (this.ttlMs > 0) {
      if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
      this.entries.set(webhookId, { trigger, expiresAt: now + this.ttlMs });
    }
    return trigger;
  }
}
