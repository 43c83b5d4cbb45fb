/**
 * A `VerifyContext` for sender primitives under test: a request with a pinned clock, the pasted
 * secrets, and a key fetcher that fails unless a test gives one (so a primitive that should not
 * fetch cannot reach anything).
 */
import fc from 'fast-check';
import type { KeyFetcher, VerifyContext } from '../../functions/domain/webhooks/senders/context.js';

export const NOW = 1_700_000_000;
export const HOOK_URL = 'https://hooks.example.com/webhooks/wh_1';

/** A fetcher that refuses every URL and counts the attempts. */
export function refusingFetcher(): KeyFetcher & { attempts: string[] } {
  const attempts: string[] = [];
  return {
    attempts,
    async fetchText(url) {
      attempts.push(url);
      throw new Error(`no key fetch expected in this test (${url})`);
    },
    async fetchIssuer(url) {
      attempts.push(url);
      throw new Error(`no issuer fetch expected in this test (${url})`);
    },
  };
}

/**
 * Key material served from memory, with the URLs asked for (the primitive's view of a fetcher),
 * the roots it trusts (Node's when unset), and issuer certificates (DER or PEM) by URL.
 */
export function memoryFetcher(
  documents: Record<string, string>,
  trustedRoots?: readonly string[],
  issuers: Record<string, Uint8Array | string> = {},
): KeyFetcher & { fetched: string[] } {
  const fetched: string[] = [];
  return {
    fetched,
    ...(trustedRoots && { trustedRoots }),
    async fetchText(url) {
      fetched.push(url);
      const text = documents[url];
      if (text === undefined) throw new Error(`404 ${url}`);
      return text;
    },
    async fetchIssuer(url) {
      fetched.push(url);
      const issuer = issuers[url];
      if (issuer === undefined) throw new Error(`404 ${url}`);
      return typeof issuer === 'string' ? Buffer.from(issuer, 'utf8') : issuer;
    },
  };
}

export interface ContextInput {
  body: string | Uint8Array;
  headers?: Record<string, string>;
  secrets: readonly string[];
  nowSeconds?: number;
  url?: string;
  method?: string;
  keys?: KeyFetcher;
}

/** Headers are lower-cased here, as the receiver does before any verifier sees them. */
export function contextFor(input: ContextInput): VerifyContext {
  const headers = Object.fromEntries(Object.entries(input.headers ?? {}).map(([name, value]) => [name.toLowerCase(), value]));
  return {
    request: {
      rawBody: typeof input.body === 'string' ? Buffer.from(input.body, 'utf8') : input.body,
      headers,
      url: input.url ?? HOOK_URL,
      nowSeconds: input.nowSeconds ?? NOW,
    },
    secrets: input.secrets,
    keys: input.keys ?? refusingFetcher(),
    method: input.method ?? 'POST',
  };
}

/**
 * Arbitrary requests aimed at a primitive: the header names it reads (and a few others) with any
 * text, any body bytes, any secrets. Used to show that nothing a sender or an attacker sends makes
 * a verifier throw.
 */
export function arbitraryContext(headerNames: readonly string[], keys?: KeyFetcher) {
  const value = fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.base64String(), fc.stringMatching(/^[0-9a-f]{0,140}$/));
  return fc
    .record({
      headers: fc.dictionary(fc.constantFrom(...headerNames, 'content-type', '__proto__', 'constructor'), value),
      body: fc.oneof(fc.uint8Array({ maxLength: 512 }), fc.json().map((text) => Buffer.from(text))),
      secrets: fc.array(value, { minLength: 1, maxLength: 3 }),
      nowSeconds: fc.integer({ min: 0, max: 4_102_444_800 }),
    })
    .map((input) => contextFor({ ...input, keys }));
}
