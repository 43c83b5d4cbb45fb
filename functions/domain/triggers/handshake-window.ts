import type { StoredSignature, TriggerRecord } from './trigger.js';

/*
 * Asana and Notion hand a trigger its signing secret in their handshake, unsigned: whoever sends
 * one first would otherwise plant the secret for good. So a handover is taken only while the
 * owner awaits one: for `handshake_window_seconds` after the trigger (or its signature) was set
 * up, or after the owner re-armed it with `POST /triggers/{id}/await-handshake`.
 */

/** Long enough to create the subscription in the sender's dashboard after the trigger. */
export const DEFAULT_HANDSHAKE_WINDOW_SECONDS = 600;
export const MIN_HANDSHAKE_WINDOW_SECONDS = 60;
export const MAX_HANDSHAKE_WINDOW_SECONDS = 3600;

/** When the window opened: the last arming, or (for a trigger from before windows) its creation. */
const armedAt = (record: Pick<TriggerRecord, 'created_at'>, signature: StoredSignature): string => signature.handshake_armed_at ?? record.created_at;

/**
 * Until when a handover is taken (ISO 8601), or undefined when none is: the trigger has its secret,
 * or has no signature at all. The window's end is returned even once it has passed.
 */
export function handshakeAwaitedUntil(record: Pick<TriggerRecord, 'created_at' | 'signature'>): string | undefined {
  const signature = record.signature;
  if (!signature || signature.secret_sealed !== undefined) return undefined;
  const seconds = signature.handshake_window_seconds ?? DEFAULT_HANDSHAKE_WINDOW_SECONDS;
  return new Date(Date.parse(armedAt(record, signature)) + seconds * 1000).toISOString();
}

/** True while the trigger takes a secret from its sender's handshake, at `nowMs`. */
export function isHandshakeAwaited(record: Pick<TriggerRecord, 'created_at' | 'signature'>, nowMs: number): boolean {
  const until = handshakeAwaitedUntil(record);
  return until !== undefined && nowMs <= Date.parse(until);
}

/** The signature armed anew at `now`: no secret (a handed-over one is forgotten), nothing handed over yet. */
export function armedSignature(signature: StoredSignature, now: string): StoredSignature {
  const {
    secret_sealed: _secret, previous_secret_sealed: _previous, previous_secret_expires_at: _expires, verification_token_unseen: _unseen,
    handed_over_at: _at, handed_over_source_ip: _ip, ...kept
  } = signature;
  return { ...kept, handshake_armed_at: now };
}
