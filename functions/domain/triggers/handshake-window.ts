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

/**
 * What of a trigger's stored signature (`StoredSignature` in `trigger.ts`) the window reads, named
 * here so the rule sits below the record that uses it (`toPublicTrigger` shows the window).
 */
interface WindowedSignature {
  secret_sealed?: string;
  handshake_window_seconds?: number;
  handshake_armed_at?: string;
}

/** What of a trigger (`TriggerRecord`) the window reads. */
interface WindowedTrigger {
  created_at: string;
  signature: WindowedSignature | null;
}

/** What a re-arming forgets: the secret, its overlap, and the last handover. */
type Forgotten = 'secret_sealed' | 'previous_secret_sealed' | 'previous_secret_expires_at' | 'verification_token_unseen' | 'handed_over_at' | 'handed_over_source_ip';

/** When the window opened: the last arming, or (for a trigger from before windows) its creation. */
const armedAt = (record: Pick<WindowedTrigger, 'created_at'>, signature: WindowedSignature): string => signature.handshake_armed_at ?? record.created_at;

/**
 * Until when a handover is taken (ISO 8601), or undefined when none is: the trigger has its secret,
 * or has no signature at all. The window's end is returned even once it has passed.
 */
export function handshakeAwaitedUntil(record: WindowedTrigger): string | undefined {
  const signature = record.signature;
  if (!signature || signature.secret_sealed !== undefined) return undefined;
  const seconds = signature.handshake_window_seconds ?? DEFAULT_HANDSHAKE_WINDOW_SECONDS;
  return new Date(Date.parse(armedAt(record, signature)) + seconds * 1000).toISOString();
}

/** True while the trigger takes a secret from its sender's handshake, at `nowMs`. */
export function isHandshakeAwaited(record: WindowedTrigger, nowMs: number): boolean {
  const until = handshakeAwaitedUntil(record);
  return until !== undefined && nowMs <= Date.parse(until);
}

/** The signature armed anew at `now`: no secret (a handed-over one is forgotten), nothing handed over yet. */
export function armedSignature<S extends WindowedSignature & Partial<Record<Forgotten, unknown>>>(signature: S, now: string): Omit<S, Forgotten> & { handshake_armed_at: string } {
  const {
    secret_sealed: _secret, previous_secret_sealed: _previous, previous_secret_expires_at: _expires, verification_token_unseen: _unseen,
    handed_over_at: _at, handed_over_source_ip: _ip, ...kept
  } = signature;
  return { ...kept, handshake_armed_at: now };
}
