// What a delivery claims before its flow runs, so that a retry or a replay runs it at most once.
// Keys come from signed material only: an attacker who replays a captured delivery can change
// everything the signature does not cover, so nothing it does not cover may tell two deliveries
// apart, or make two different ones look the same.
import { createHash } from 'node:crypto';
import { valueAt } from '../../shared/json.js';
import type { WebhookBody } from './body.js';
import { headerValue } from './headers.js';
import type { RequestValue, SenderRow, Verification } from './senders/catalog-types.js';
import { signedContent, signedTimestampMs } from './senders/primitives/hmac.js';

/** Deliveries of one event id run a deduplicating trigger's flow at most once in this window. */
export const DEDUP_WINDOW_SECONDS = 24 * 3600;

const MAX_ID_LENGTH = 256;

/** What the receiver saw: the request as the verifier read it, and its body as parsed. */
export interface ReceivedRequest {
  rawBody: Uint8Array;
  /** Lower-case names. */
  headers: Record<string, string>;
  /** The URL as the sender called it (Twilio, Square and HubSpot sign it). */
  url: string;
  method: string;
  body: WebhookBody;
}

/** A claim on a key for a while: a second claim of the key within `ttlSeconds` fails. */
export interface ReplayClaim {
  key: string;
  ttlSeconds: number;
}

/**
 * The one claim a delivery makes, or none: with `deduplicate`, on its deduplication key for
 * {@link DEDUP_WINDOW_SECONDS}; else, when its row says a key may be used once, on that key for
 * twice the row's tolerance (a timestamp verifies that far either side of the clock). One claim
 * covers both rules: a deduplication key is signed material, so a replay of the signed content or
 * of the single-use id has the same one.
 *
 * `row` undefined: the trigger is unsigned, anyone can send it anything, and it deduplicates on
 * the event id it was given, as it always did.
 */
export function replayClaim(row: SenderRow | undefined, deduplicate: boolean, request: ReceivedRequest, eventId: string): ReplayClaim | undefined {
  if (!row) return deduplicate ? { key: eventId, ttlSeconds: DEDUP_WINDOW_SECONDS } : undefined;
  const window = singleUseWindowSeconds(row);
  if (deduplicate) return { key: deduplicationKey(row, request), ttlSeconds: Math.max(DEDUP_WINDOW_SECONDS, window ?? 0) };
  if (window === undefined) return undefined;
  return { key: singleUseKey(row, request), ttlSeconds: window };
}

/**
 * The signed timestamp (epoch ms) of a claim whose key is the exact signed content with that
 * timestamp (a single-use claim of an HMAC row that signs one); `undefined` for any other claim.
 * Every replay of the delivery has the same key and the same time, so its record can be keyed on
 * both and its first write be the claim (`receiver/claim-record.ts`), no claim item of its own. A
 * sender's retry, signed anew, has another timestamp and another key.
 */
export function signedTimeOfClaim(row: SenderRow | undefined, deduplicate: boolean, claim: ReplayClaim | undefined, request: ReceivedRequest): number | undefined {
  if (!row || deduplicate || !claim?.key.startsWith('sha256:') || row.verification.primitive !== 'hmac') return undefined;
  return signedTimestampMs(row.verification, { request: { ...request, nowSeconds: 0 }, secrets: [], method: request.method });
}

/**
 * The key a deduplicating trigger of `row` collapses deliveries on: the signed id the row names
 * (`replay_key`, or a `delivery_id` it signs), else the SHA-256 of the signed content without its
 * timestamp, which a replayed capture and a retry signed anew share.
 */
export function deduplicationKey(row: SenderRow, request: ReceivedRequest): string {
  const id = signedIdOf(row, request);
  return id !== undefined ? `id:${id}` : `sha256:${digest(signedBytes(row.verification, request, false))}`;
}

/**
 * The key a second use of is refused within the row's window, whatever `deduplicate` says: the
 * signed id for a `single_use: 'replay_key'` row, else the SHA-256 of the signed content with its
 * timestamp (an exact replay).
 */
export function singleUseKey(row: SenderRow, request: ReceivedRequest): string {
  const id = row.single_use === 'replay_key' ? signedIdOf(row, request) : undefined;
  return id !== undefined ? `id:${id}` : `sha256:${digest(signedBytes(row.verification, request, true))}`;
}

/**
 * How long a single-use key is kept: twice the row's timestamp tolerance, for a row that says a
 * key may be used once or that signs a timestamp; `undefined` for a row that signs none, whose
 * captures verify for ever (only `deduplicate` collapses those, for its window).
 */
export function singleUseWindowSeconds(row: SenderRow): number | undefined {
  const tolerance = toleranceOf(row.verification);
  return tolerance === undefined ? undefined : 2 * tolerance;
}

/** The tolerance of the row's signed timestamp, in seconds, when it has one. */
export function toleranceOf(verification: Verification): number | undefined {
  switch (verification.primitive) {
    case 'hmac':
      return verification.timestamp?.tolerance_seconds;
    case 'ed25519':
    case 'ecdsa_p256':
      return verification.toleranceSeconds;
    case 'x509_rsa':
      return 'toleranceSeconds' in verification ? verification.toleranceSeconds : undefined;
    default:
      return undefined;
  }
}

/** The signed id of the delivery, when the row names one and the request carries it. */
function signedIdOf(row: SenderRow, request: ReceivedRequest): string | undefined {
  const source = row.replay_key ?? (row.delivery_id?.signed ? row.delivery_id : undefined);
  return source && requestValue(source, request.headers, request.body);
}

/**
 * The content the row's primitive signs: HMAC's assembled parts; the timestamp and body of
 * Ed25519 and ECDSA; the body for the rest (certificates, tokens, JWTs), whose signed fields are
 * in it or which sign nothing of it at all (then nothing better exists).
 */
function signedBytes(verification: Verification, request: ReceivedRequest, withTimestamp: boolean): (string | Uint8Array)[] {
  switch (verification.primitive) {
    case 'hmac':
      return signedContent(verification, { request: { ...request, nowSeconds: 0 }, secrets: [], method: request.method }, { withoutTimestamp: !withTimestamp })
        ?? [request.rawBody];
    case 'ed25519':
    case 'ecdsa_p256':
      return [withTimestamp ? headerValue(request.headers, verification.timestampHeader) ?? '' : '', request.rawBody];
    default:
      return [request.rawBody];
  }
}

function digest(parts: readonly (string | Uint8Array)[]): string {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part);
  return hash.digest('base64url');
}

/**
 * A header's value or a body member's (of a JSON object, or a form's field for a one-name path),
 * as an id: a string of 1–256 characters; `undefined` otherwise.
 */
export function requestValue(source: RequestValue, headers: Record<string, string>, body: WebhookBody): string | undefined {
  const value = source.from === 'header' ? headerValue(headers, source.name) : valueAt(body.value, source.path);
  return typeof value === 'string' && value.length >= 1 && value.length <= MAX_ID_LENGTH ? value : undefined;
}

