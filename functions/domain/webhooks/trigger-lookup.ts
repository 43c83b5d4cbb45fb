import type { Clock } from '../clock.js';
import type { SecretBox } from '../secret-box.js';
import { SECRET_PURPOSES, SECRET_PURPOSE_KEY } from '../secret-purposes.js';
import { isLive } from '../triggers/overlap.js';
import type { TriggerRecord } from '../triggers/trigger.js';
import type { TriggerStore } from '../triggers/trigger-store.js';

/** A trigger as the receiver uses it: the signing secrets opened once, not on every request. */
export interface ActiveTrigger {
  record: TriggerRecord;
  signingSecret?: string;
  /**
   * The secret replaced by a rotation, opened while its overlap had not ended when the trigger was
   * read. The receiver still checks `previous_secret_expires_at` against its clock on every request.
   */
  previousSigningSecret?: string;
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
 * deliveries costs one read and one decryption (two during a secret's rotation). A change to a
 * trigger (disable, delete, new URL, new API key, new secret) reaches the receiver within `ttlMs`;
 * the end of a rotation's overlap does not wait for it, as the receiver checks that time itself.
 * Unknown ids are not cached, so a new trigger works at once; the cache holds at most `maxEntries`
 * triggers. Concurrent reads of one trigger are one read; a re-read keeps the opened secrets of an
 * unchanged trigger, so a flood of forged requests (each re-read, as a refusal asks) costs reads
 * but no decryption.
 */
export class CachedTriggerLookup implements TriggerLookup {
  private readonly entries = new Map<string, { trigger: ActiveTrigger; expiresAt: number }>();
  /** Reads under way, by webhook id: concurrent requests for one trigger share one read. */
  private readonly reading = new Map<string, Promise<ActiveTrigger | undefined>>();

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

  findFresh(webhookId: string): Promise<ActiveTrigger | undefined> {
    let read = this.reading.get(webhookId);
    if (!read) {
      read = this.read(webhookId).finally(() => this.reading.delete(webhookId));
      this.reading.set(webhookId, read);
    }
    return read;
  }

  private async read(webhookId: string): Promise<ActiveTrigger | undefined> {
    const now = this.now();
    const previous = this.entries.get(webhookId)?.trigger;
    const record = await this.store.findByWebhookId(webhookId);
    this.entries.delete(webhookId);
    if (!record) return undefined;
    // An unchanged trigger keeps its opened secrets: a refresh costs a read, not a decryption.
    const trigger: ActiveTrigger = previous?.record.version === record.version
      ? { record, signingSecret: previous.signingSecret, previousSigningSecret: previous.previousSigningSecret }
      : { record, ...(await this.openSecrets(record, now)) };
    if (this.ttlMs > 0) {
      if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
      this.entries.set(webhookId, { trigger, expiresAt: now + this.ttlMs });
    }
    return trigger;
  }

  /** The signing secret, and the one it replaced while that one's overlap lasts (an ended one is not worth a decryption). */
  private async openSecrets(record: TriggerRecord, nowMs: number): Promise<Pick<ActiveTrigger, 'signingSecret' | 'previousSigningSecret'>> {
    const { signature } = record;
    // No signature, or one whose secret its sender's handshake has not handed over yet (Asana, Notion).
    if (!signature?.secret_sealed) return {};
    const context = signingSecretContext(record);
    const previousLive = signature.previous_secret_sealed !== undefined && isLive(signature.previous_secret_expires_at, new Date(nowMs));
    const [signingSecret, previousSigningSecret] = await Promise.all([
      this.secretBox.open(signature.secret_sealed, context),
      previousLive ? this.secretBox.open(signature.previous_secret_sealed!, context) : undefined,
    ]);
    return { signingSecret, ...(previousSigningSecret !== undefined && { previousSigningSecret }) };
  }
}
