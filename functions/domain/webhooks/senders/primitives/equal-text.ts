import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * Constant-time equality of two texts of any length. Both sides are hashed to 32 bytes first,
 * so neither the position of the first difference nor the length of the expected value shows in
 * the response time (`timingSafeEqual` alone needs equal lengths, and an early length check would
 * reveal the secret's length). See https://codahale.com/a-lesson-in-timing-attacks/.
 */
export function equalText(received: string | Uint8Array, expected: string | Uint8Array): boolean {
  return timingSafeEqual(sha256(received), sha256(expected));
}

/** True when `received` equals any of `expected`; every candidate is compared, so timing does not tell which one matched. */
export function equalsAny(received: string | Uint8Array, expected: readonly string[]): boolean {
  const digest = sha256(received);
  let matched = false;
  for (const candidate of expected) matched = timingSafeEqual(digest, sha256(candidate)) || matched;
  return matched;
}

function sha256(value: string | Uint8Array): Buffer {
  return createHash('sha256').update(value).digest();
}
