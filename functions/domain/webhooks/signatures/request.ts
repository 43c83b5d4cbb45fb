/** What a verifier sees of an incoming request. Everything in it is untrusted. */
export interface SignedRequest {
  /** The body exactly as received: signatures are over bytes, not over a re-serialisation. */
  rawBody: Uint8Array;
  /** Header names in lower case. */
  headers: Record<string, string>;
  /** Full public URL including the query string, as the sender called it (used by Twilio). */
  url: string;
  /** The current time in unix seconds, injected so tests can pin the clock. */
  nowSeconds: number;
}

/** Up to 12 decimal digits: any plausible unix time in seconds, nothing that overflows. */
const UNIX_SECONDS = /^\d{1,12}$/;

/**
 * True when `text` is a unix time in seconds within `toleranceSeconds` of now, either way.
 * Signs, decimals, exponents and trailing junk are refused, unlike `parseInt`.
 */
export function isFreshTimestamp(text: string, nowSeconds: number, toleranceSeconds: number): boolean {
  return UNIX_SECONDS.test(text) && Math.abs(nowSeconds - Number(text)) <= toleranceSeconds;
}

/**
 * True when `text` is a unix time in seconds at most `pastSeconds` before now and `futureSeconds`
 * after it: for a sender whose retries keep their first signature for a day (SendGrid), the
 * window is wide behind and narrow ahead.
 */
export function isTimestampWithin(text: string, nowSeconds: number, window: { pastSeconds: number; futureSeconds: number }): boolean {
  if (!UNIX_SECONDS.test(text)) return false;
  const age = nowSeconds - Number(text);
  return age <= window.pastSeconds && -age <= window.futureSeconds;
}
