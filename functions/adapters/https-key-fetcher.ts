import { Agent as HttpAgent, get as httpGet, type IncomingMessage } from 'node:http';
import { Agent, get } from 'node:https';
import type { KeyFetcher } from '../domain/webhooks/senders/context.js';

/** A sender's key endpoints answer in well under a second; a slow one must not hold a delivery. */
export const KEY_FETCH_TIMEOUT_MS = 3_000;
/** Certificates and JWKS documents are a few KB; anything far larger is not key material. */
export const KEY_FETCH_MAX_BYTES = 64 * 1024;
/**
 * How long fetched key material is reused. Senders publish a new key well before signing with it
 * (Google keeps two in its JWKS; SNS and PayPal name a new certificate URL), so an hour costs no
 * deliveries and keeps a busy receiver to one fetch per URL per hour.
 */
export const KEY_CACHE_TTL_MS = 60 * 60 * 1000;
/**
 * How long a failed fetch is remembered and answered from memory. The URL comes from an
 * unauthenticated request (within the row's host rule), so without this every forged request
 * would cost a fetch from the sender's host; a few minutes still lets a genuine certificate that
 * failed once (a sender's brief outage) be fetched again soon.
 */
export const KEY_FAILURE_CACHE_TTL_MS = 5 * 60 * 1000;
/** URLs kept: a few per sender; the bound stops a stream of distinct allowed URLs from growing memory. */
export const KEY_CACHE_MAX_ENTRIES = 100;

export interface HttpsKeyFetcherOptions {
  timeoutMs?: number;
  maxBytes?: number;
  ttlMs?: number;
  /** How long a failure is answered from memory; `KEY_FAILURE_CACHE_TTL_MS` by default. */
  failureTtlMs?: number;
  maxEntries?: number;
  /** The clock for cache expiry, in ms; injected so tests need not wait an hour. */
  nowMs?: () => number;
  /**
   * Extra trusted CA certificates (PEM), for tests that serve keys from a local HTTPS server. Set
   * only where the fetcher is built, never from a request or a trigger.
   */
  ca?: string;
  /** Roots a signing certificate must chain to (`KeyFetcher.trustedRoots`); Node's bundled roots when unset. Tests only. */
  trustedRoots?: readonly string[];
}

/**
 * Fetches key material over https only (an issuer certificate over http too), with a deadline, no redirects (a 3xx is a failure: the
 * primitives check the host before asking, and a redirect would take the fetch elsewhere) and a
 * size cap, caching the text by URL for a while in a bounded map. Concurrent requests for one URL
 * share one fetch. Failures are cached too, for a shorter while: a forged request naming a URL
 * that fails costs no fetch after the first.
 */
export class HttpsKeyFetcher implements KeyFetcher {
  readonly #timeoutMs: number;
  readonly #maxBytes: number;
  readonly #ttlMs: number;
  readonly #failureTtlMs: number;
  readonly #maxEntries: number;
  readonly #nowMs: () => number;
  readonly #agent: Agent;
  readonly #httpAgent = new HttpAgent({ keepAlive: true, maxSockets: 4 });
  /**
   * Keyed by kind and URL (`text https://…`, `issuer http://…`), so bytes fetched over http as an
   * issuer are never answered to `fetchText`. Insertion order is recency order: a hit is moved to
   * the end, the oldest is evicted first.
   */
  readonly #cache = new Map<string, { outcome: { bytes: Buffer } | { error: Error }; expiresAtMs: number }>();
  readonly #inFlight = new Map<string, Promise<Buffer>>();
  readonly trustedRoots?: readonly string[];

  constructor(options: HttpsKeyFetcherOptions = {}) {
    this.#timeoutMs = options.timeoutMs ?? KEY_FETCH_TIMEOUT_MS;
    this.#maxBytes = options.maxBytes ?? KEY_FETCH_MAX_BYTES;
    this.#ttlMs = options.ttlMs ?? KEY_CACHE_TTL_MS;
    this.#failureTtlMs = options.failureTtlMs ?? KEY_FAILURE_CACHE_TTL_MS;
    this.#maxEntries = options.maxEntries ?? KEY_CACHE_MAX_ENTRIES;
    this.#nowMs = options.nowMs ?? Date.now;
    if (options.trustedRoots) this.trustedRoots = options.trustedRoots;
    // Keep-alive: the next miss to the same host (a new SNS certificate, a JWKS refresh) skips the TLS handshake.
    this.#agent = new Agent({ keepAlive: true, maxSockets: 4, ...(options.ca ? { ca: options.ca } : {}) });
  }

  /** The text at `url`; rejects on anything but a 200 over https within the time and size limits. */
  async fetchText(url: string): Promise<string> {
    return (await this.#fetch('text', url)).toString('utf8');
  }

  /**
   * The bytes of an issuer certificate at `url` (an AIA "CA Issuers" URI): as `fetchText`, but
   * plain http is allowed too, since CAs publish issuers there and the caller believes the
   * certificate only once it chains to a trusted root.
   */
  async fetchIssuer(url: string): Promise<Uint8Array> {
    return this.#fetch('issuer', url);
  }

  #fetch(kind: 'text' | 'issuer', url: string): Promise<Buffer> {
    const key = `${kind} ${url}`;
    const cached = this.#cache.get(key);
    if (cached && cached.expiresAtMs > this.#nowMs()) {
      this.#cache.delete(key);
      this.#cache.set(key, cached);
      if ('error' in cached.outcome) return Promise.reject(cached.outcome.error);
      return Promise.resolve(cached.outcome.bytes);
    }
    let pending = this.#inFlight.get(key);
    if (!pending) {
      pending = this.#download(url, kind === 'issuer')
        .then(
          (bytes) => {
            this.#remember(key, { bytes }, this.#ttlMs);
            return bytes;
          },
          (error: Error) => {
            this.#remember(key, { error }, this.#failureTtlMs);
            throw error;
          },
        )
        .finally(() => this.#inFlight.delete(key));
      this.#inFlight.set(key, pending);
    }
    return pending;
  }

  #remember(key: string, outcome: { bytes: Buffer } | { error: Error }, ttlMs: number): void {
    this.#cache.delete(key);
    this.#cache.set(key, { outcome, expiresAtMs: this.#nowMs() + ttlMs });
    while (this.#cache.size > this.#maxEntries) this.#cache.delete(this.#cache.keys().next().value!);
  }

  #download(url: string, allowHttp: boolean): Promise<Buffer> {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return Promise.reject(new Error('key fetch: not a URL'));
    }
    const overHttp = allowHttp && parsed.protocol === 'http:';
    if (parsed.protocol !== 'https:' && !overHttp) return Promise.reject(new Error(`key fetch: only https${allowHttp ? ' and http are' : ' is'} fetched, not ${parsed.protocol}`));
    return new Promise<Buffer>((resolve, reject) => {
      const onResponse = (response: IncomingMessage) => {
        const status = response.statusCode ?? 0;
        if (status !== 200) {
          response.resume();
          fail(new Error(status >= 300 && status < 400 ? `key fetch: redirects are not followed (${status})` : `key fetch: status ${status}`));
          return;
        }
        const declared = Number(response.headers['content-length']);
        if (declared > this.#maxBytes) {
          fail(new Error(`key fetch: ${declared} bytes is over the ${this.#maxBytes}-byte cap`));
          return;
        }
        const chunks: Buffer[] = [];
        let received = 0;
        response.on('data', (chunk: Buffer) => {
          received += chunk.length;
          if (received > this.#maxBytes) fail(new Error(`key fetch: over the ${this.#maxBytes}-byte cap`));
          else chunks.push(chunk);
        });
        response.on('end', () => {
          clearTimeout(deadline);
          resolve(Buffer.concat(chunks));
        });
        response.on('error', fail);
      };
      const request = overHttp
        ? httpGet(parsed, { agent: this.#httpAgent, headers: { accept: '*/*' } }, onResponse)
        : get(parsed, { agent: this.#agent, headers: { accept: '*/*' } }, onResponse);
      // One deadline for the whole exchange (DNS, TLS, headers and body), not just socket idleness.
      const deadline = setTimeout(() => fail(new Error(`key fetch: no answer within ${this.#timeoutMs} ms`)), this.#timeoutMs);
      request.on('error', fail);
      function fail(error: Error) {
        clearTimeout(deadline);
        request.destroy();
        reject(error);
      }
    });
  }
}
