/**
 * The proof of one HMAC row of the sender catalog: a genuine request, made the way the sender
 * makes it (by its official library where one exists), passes `verifySender` with the catalog's
 * own row; the same request with its signed content changed, signed with another key, without
 * its signature, or (where the sender signs a timestamp) stale, fails. Where the sender's library
 * has a check of its own, it must accept the same genuine request, so the request is the
 * sender's and not merely ours.
 *
 * The proof count (test/domain/senders/catalog.test.ts) finds each proof by the row id this is
 * called with.
 */
import { Buffer } from 'node:buffer';
import { describe, expect, it, vi } from 'vitest';
import type { SenderRow } from '../../functions/domain/webhooks/senders/catalog-types.js';
import { senderRow } from '../../functions/domain/webhooks/senders/catalog.js';
import type { KeyFetcher, VerifyContext } from '../../functions/domain/webhooks/senders/context.js';
import { checkSenderSecret } from '../../functions/domain/webhooks/senders/secrets.js';
import { verifySender } from '../../functions/domain/webhooks/senders/verify.js';

/** The receiver's clock in every proof, in unix seconds. */
export const NOW = 1_700_000_000;
export const WEBHOOK_URL = 'https://hooks.example.com/webhooks/wh_1';
export const JSON_BODY = '{"id":"evt_1","type":"customer.created","data":{"object":{"id":"cus_1","name":"Zoë"}}}';

/** HMAC senders publish no keys: a proof that reaches for one fails loudly. */
export const NO_KEYS: KeyFetcher = { fetchText: (url) => Promise.reject(new Error(`no key fetch expected (${url})`)) };

/** A request as sent: the body's exact bytes, headers (any case), the URL called and the method. */
export interface SentRequest {
  body: string | Buffer;
  headers: Record<string, string>;
  url?: string;
  method?: string;
}

export interface HmacProof {
  /** The row proven, when not the catalog's own: `custom` with a configuration. */
  row?: SenderRow;
  secret: string;
  /** Another key of the same form, for "signed with a wrong key". */
  otherSecret: string;
  /** A genuine request signed with `secret` at `now` (unix seconds). */
  sign(secret: string, now: number): SentRequest | Promise<SentRequest>;
  /** The request with its signed content changed; by default the body with a space appended. */
  tamper?(genuine: SentRequest): SentRequest;
  /** The request without its signature; by default without the header(s) the row reads it from. */
  withoutSignature?(genuine: SentRequest): SentRequest;
  /** The sender's own check, where its library has one: it must accept the genuine request. */
  official?(genuine: SentRequest, secret: string, now: number): boolean | Promise<boolean>;
}

/** The catalog's row for `id`; a proof of an id the catalog lacks fails at once. */
export function rowOf(id: string): SenderRow {
  const row = senderRow(id);
  if (!row) throw new Error(`no catalog row "${id}"`);
  return row;
}

/** `verifySender` as the receiver will call it: lower-case headers, the raw bytes, the pinned clock. */
export function verifySent(row: SenderRow, sent: SentRequest, secrets: readonly string[], nowSeconds = NOW): Promise<boolean> {
  return verifySender(row, contextOf(sent, secrets, nowSeconds));
}

export function contextOf(sent: SentRequest, secrets: readonly string[], nowSeconds = NOW): VerifyContext {
  const headers = Object.fromEntries(Object.entries(sent.headers).map(([name, value]) => [name.toLowerCase(), value]));
  return {
    request: { rawBody: Buffer.from(sent.body), headers, url: sent.url ?? WEBHOOK_URL, nowSeconds },
    secrets,
    keys: NO_KEYS,
    method: (sent.method ?? 'POST').toUpperCase(),
  };
}

/** Defines the proof of the HMAC row `id`. */
export function proveHmacSender(id: string, proof: HmacProof): void {
  const row = proof.row ?? rowOf(id);
  const { verification } = row;
  if (verification.primitive !== 'hmac') throw new Error(`${id} is not an HMAC row`);
  const { signature } = verification;
  const isSignatureHeader = (name: string) =>
    signature.from === 'header' ? name.toLowerCase() === signature.name : signature.from === 'numbered_headers' && name.toLowerCase().startsWith(signature.name_prefix);
  const tamper = proof.tamper ?? ((sent: SentRequest) => ({ ...sent, body: `${sent.body.toString()} ` }));
  const withoutSignature =
    proof.withoutSignature ??
    ((sent: SentRequest) => {
      if (signature.from !== 'header' && signature.from !== 'numbered_headers') throw new Error(`${id}: say how to remove a signature that is not in a header`);
      return { ...sent, headers: Object.fromEntries(Object.entries(sent.headers).filter(([name]) => !isSignatureHeader(name))) };
    });

  describe(`${id} (${row.name})${proof.row ? ' configured' : ''}`, () => {
    it(`verifySender(${id}) returns true for a genuine request`, async () => {
      const genuine = await proof.sign(proof.secret, NOW);
      expect(await verifySent(row, genuine, [proof.secret])).toBe(true);
      if (proof.official) expect(await proof.official(genuine, proof.secret, NOW)).toBe(true);
    });

    it(`verifySender(${id}) returns false for changed signed content`, async () => {
      const genuine = await proof.sign(proof.secret, NOW);
      expect(await verifySent(row, tamper(genuine), [proof.secret])).toBe(false);
    });

    it(`verifySender(${id}) returns false for a request signed with another key`, async () => {
      expect(await verifySent(row, await proof.sign(proof.otherSecret, NOW), [proof.secret])).toBe(false);
    });

    it(`verifySender(${id}) returns false without the signature`, async () => {
      const genuine = await proof.sign(proof.secret, NOW);
      expect(await verifySent(row, withoutSignature(genuine), [proof.secret])).toBe(false);
    });

    it(`verifySender(${id}) returns true when the previous key of a rotation signed`, async () => {
      expect(await verifySent(row, await proof.sign(proof.otherSecret, NOW), [proof.secret, proof.otherSecret])).toBe(true);
    });

    it(`checkSenderSecret(${id}) accepts both keys the proof signs with`, () => {
      expect(checkSenderSecret(row, proof.secret)).toBeUndefined();
      expect(checkSenderSecret(row, proof.otherSecret)).toBeUndefined();
    });

    const timestamp = verification.timestamp;
    if (timestamp) {
      const tolerance = timestamp.tolerance_seconds;
      it(`verifySender(${id}) returns false for a timestamp ${tolerance + 1} s old`, async () => {
        expect(await verifySent(row, await proof.sign(proof.secret, NOW - tolerance - 1), [proof.secret])).toBe(false);
      });

      it(`verifySender(${id}) returns false for a timestamp ${tolerance + 1} s ahead`, async () => {
        expect(await verifySent(row, await proof.sign(proof.secret, NOW + tolerance + 1), [proof.secret])).toBe(false);
      });

      it(`verifySender(${id}) returns true for a timestamp exactly ${tolerance} s old`, async () => {
        expect(await verifySent(row, await proof.sign(proof.secret, NOW - tolerance), [proof.secret])).toBe(true);
      });
    }
  });
}

/**
 * Runs a sender library's check with `Date` pinned to `now` (unix seconds): libraries that check a
 * timestamp read the real clock, and the proofs sign at the pinned one.
 */
export async function atClock<T>(now: number, check: () => T | Promise<T>): Promise<T> {
  vi.useFakeTimers({ toFake: ['Date'], now: now * 1000 });
  try {
    return await check();
  } finally {
    vi.useRealTimers();
  }
}

/** True when `check` neither throws nor rejects: the libraries that throw on a bad signature. */
export async function accepts(check: () => unknown): Promise<boolean> {
  try {
    await check();
    return true;
  } catch {
    return false;
  }
}
