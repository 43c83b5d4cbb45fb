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
  delete(record: TriggerRecord): Promise<void>;
  /** The receiver's lookup: one read by the URL's id. */
  findByWebhookId(webhookId: string): Promise<TriggerRecord | undefined>;
}
