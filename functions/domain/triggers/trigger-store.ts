import type { TriggerRecord } from './trigger.js';

/** Storage of trigger configuration. */
export interface TriggerStore {
  create(record: TriggerRecord): Promise<void>;
  get(accountId: string, id: string): Promise<TriggerRecord | undefined>;
  list(accountId: string, page: { limit: number; cursor?: string }): Promise<{ items: TriggerRecord[]; nextCursor: string | null }>;
  /**
   * Replaces `previous` with `next` (whose version is one higher). Returns false when the trigger
   * changed or disappeared since `previous` was read, so the caller can read again.
   */
  replace(previous: TriggerRecord, next: TriggerRecord): Promise<boolean>;
  /**
   * Removes the trigger read as `record`; its URL stops working first. Returns false when the
   * trigger changed since it was read (its URL may have changed too), so the caller reads again.
   */
  delete(record: TriggerRecord): Promise<boolean>;
  /** The receiver's lookup: one read by the URL's id; undefined for unknown and retired ids. */
  findByWebhookId(webhookId: string): Promise<TriggerRecord | undefined>;
}
