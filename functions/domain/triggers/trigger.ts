import { DEFAULT_HANDSHAKE_WINDOW_SECONDS, handshakeAwaitedUntil } from './handshake-window.js';
import { isLive } from './overlap.js';
import { webhookUrl } from './webhook-url.js';
import type { HmacParams } from '../webhooks/senders/catalog-types.js';
import type { CustomSignatureConfig } from '../webhooks/signatures/custom.js';

/** A `custom` trigger's signing: the first kind (header, prefix, timestamp header) or the assembled-content HMAC. */
export type CustomSignature = CustomSignatureConfig | HmacParams;

/*
 * What a trigger is. What a request to change one may say (the zod schemas, the parsers, and their
 * types such as `TriggerSettings`) is in `trigger-requests.ts`, which reads this file and which the
 * triggers function loads with the first request that has a body.
 */

export type ResponseMode = 'acknowledge' | 'wait';

/** A trigger's fixed answer to the deliveries the receiver answers itself with a 2xx (see `trigger-requests.ts`). */
export interface AcknowledgeResponse {
  status_code: number;
  /** Absent only for 204 and 205, which carry no body. */
  content_type?: string;
  body: string;
}

/** A trigger as stored: secrets only sealed, the API key only as a hash. */
export interface TriggerRecord {
  id: string;
  account_id: string;
  webhook_id: string;
  /** The owner's name for it; absent or null (triggers from before names too): shown as its flow's name. */
  name?: string | null;
  description?: string | null;
  flow: string;
  response_mode: ResponseMode;
  event_filter: string[];
  api_key_enabled: boolean;
  api_key_hash?: string;
  /** After `regenerate-api-key` with an overlap: the replaced key's hash, accepted until the time given (ISO 8601). */
  previous_api_key_hash?: string;
  previous_api_key_expires_at?: string;
  signature: StoredSignature | null;
  /** Addresses and CIDR ranges deliveries may come from; null (or absent, on older triggers) for any. */
  allowed_source_ips?: string[] | null;
  enabled: boolean;
  deduplicate: boolean;
  /** False: a batching sender's POST reaches the flow whole; absent (records older than the setting) or true: split into its events. */
  split_batches?: boolean;
  /** Absent or null: the default JSON answer. */
  acknowledge_response?: AcknowledgeResponse | null;
  /**
   * Wait mode only: a sender gets the answer of a connected listener (`flowgate listen`) instead of
   * the flow's, which stays the answer when no listener is connected or none answers in time.
   * Absent: false.
   */
  answer_from_listener?: boolean;
  created_at: string;
  updated_at: string;
  /** Bumped on every change so the receiver's copy never goes back to an older one. */
  version: number;
}

export interface StoredSignature {
  /** A sender catalog id (`senders/catalog.ts`). */
  service: string;
  /** Absent until the handshake of a sender that hands its secret over there (Asana, Notion). */
  secret_sealed?: string;
  /**
   * Notion: its handshake's `verification_token` (the secret) has not been shown to the owner yet;
   * the next read of the trigger shows it, once, for the owner to paste back into Notion.
   */
  verification_token_unseen?: true;
  /**
   * Asana, Notion: how long a handshake may hand the secret over after the signature was set up or
   * re-armed (`handshake-window.ts`); absent on triggers from before windows (the default then).
   */
  handshake_window_seconds?: number;
  /** When the handshake window last opened (ISO 8601): the signature set without a secret, or `await-handshake`. */
  handshake_armed_at?: string;
  /** When a handshake handed the secret over (ISO 8601), and the address it came from: for the owner to check it was the sender. */
  handed_over_at?: string;
  handed_over_source_ip?: string;
  /** Meta: SHA-256 (hex) of the verify token its subscription handshake must carry; only the hash is kept, as for API keys. */
  verify_token_hash?: string;
  custom?: CustomSignature;
  /**
   * After `rotate-signing-secret` with an overlap: the replaced secret, sealed under the same
   * context as `secret_sealed` (moved, never opened), accepted until the time given (ISO 8601).
   */
  previous_secret_sealed?: string;
  previous_secret_expires_at?: string;
}

/** A trigger as its owner sees it: no secret, no key, no hash. */
export interface PublicTrigger {
  id: string;
  webhook_id: string;
  url: string;
  /** Its own name, or its flow's when it has none (`name_is_default`). */
  name: string;
  name_is_default: boolean;
  description: string | null;
  flow: string;
  response_mode: ResponseMode;
  event_filter: string[];
  api_key_enabled: boolean;
  /** When the key replaced with an overlap stops working; null when no old key works. */
  previous_api_key_expires_at: string | null;
  signature: ({ service: string; custom?: CustomSignature; previous_secret_expires_at: string | null; verification_token?: string } & Partial<PublicHandover>) | null;
  allowed_source_ips: string[] | null;
  enabled: boolean;
  deduplicate: boolean;
  split_batches: boolean;
  acknowledge_response: AcknowledgeResponse | null;
  answer_from_listener: boolean;
  created_at: string;
  updated_at: string;
}

/** A handshake sender's handover, as its owner sees it: never the secret. */
export interface PublicHandover {
  handshake_window_seconds: number;
  /** Until when a handshake may hand the secret over; null once it has (or a secret was pasted). */
  handshake_awaited_until: string | null;
  handed_over_at: string | null;
  handed_over_source_ip: string | null;
}

/** The handover fields, for a signature whose secret comes (or came) from its sender's handshake. */
function publicHandover(record: TriggerRecord): PublicHandover | undefined {
  const signature = record.signature;
  const fromHandshake = signature && (signature.secret_sealed === undefined || signature.handshake_window_seconds !== undefined || signature.handed_over_at !== undefined);
  if (!fromHandshake) return undefined;
  return {
    handshake_window_seconds: signature.handshake_window_seconds ?? DEFAULT_HANDSHAKE_WINDOW_SECONDS,
    handshake_awaited_until: handshakeAwaitedUntil(record) ?? null,
    handed_over_at: signature.handed_over_at ?? null,
    handed_over_source_ip: signature.handed_over_source_ip ?? null,
  };
}

/** `expiresAt` while that overlap lasts, else null: an overlap that ended is not shown. */
const liveUntil = (expiresAt: string | undefined, now: Date): string | null => (isLive(expiresAt, now) ? expiresAt! : null);

export const toPublicTrigger = (record: TriggerRecord, webhookBaseUrl: string, now: Date): PublicTrigger => ({
  id: record.id,
  webhook_id: record.webhook_id,
  url: webhookUrl(webhookBaseUrl, record.webhook_id),
  name: record.name ?? record.flow,
  name_is_default: record.name === undefined || record.name === null,
  description: record.description ?? null,
  flow: record.flow,
  response_mode: record.response_mode,
  event_filter: record.event_filter,
  api_key_enabled: record.api_key_enabled,
  previous_api_key_expires_at: record.api_key_enabled ? liveUntil(record.previous_api_key_expires_at, now) : null,
  signature: record.signature && {
    service: record.signature.service,
    ...(record.signature.custom && { custom: record.signature.custom }),
    previous_secret_expires_at: liveUntil(record.signature.previous_secret_expires_at, now),
    ...publicHandover(record),
  },
  allowed_source_ips: record.allowed_source_ips ?? null,
  enabled: record.enabled,
  deduplicate: record.deduplicate,
  split_batches: record.split_batches !== false,
  acknowledge_response: record.acknowledge_response ?? null,
  answer_from_listener: record.answer_from_listener === true,
  created_at: record.created_at,
  updated_at: record.updated_at,
});
