import { createHmac, createSecretKey, timingSafeEqual, type KeyObject } from 'node:crypto';

export type HmacAlgorithm = 'sha1' | 'sha256' | 'sha512';
export type SignatureEncoding = 'hex' | 'base64';

/**
 * Secrets seen recently, prepared once as key objects: a receiver checks the same few secrets
 * over and over, and preparing the key is a measurable part of verifying a small body. The
 * process already holds these secrets (the receiver's trigger cache); the map is bounded.
 */
const preparedKeys = new Map<string, KeyObject>();
const MAX_PREPARED_KEYS = 256;

function prepared(key: string): KeyObject {
  let keyObject = preparedKeys.get(key);
  if (!keyObject) {
    if (preparedKeys.size >= MAX_PREPARED_KEYS) preparedKeys.clear();
    keyObject = createSecretKey(Buffer.from(key, 'utf8'));
    preparedKeys.set(key, keyObject);
  }
  return keyObject;
}

/** HMAC over the concatenation of `parts`; strings are UTF-8, bytes are taken as they are. */
export function hmac(algorithm: HmacAlgorithm, key: string | Uint8Array, ...parts: (string | Uint8Array)[]): Buffer {
  const mac = createHmac(algorithm, typeof key === 'string' ? prepared(key) : key);
  for (const part of parts) mac.update(part);
  return mac.digest();
}

/**
 * Constant-time comparison, so response timing does not reveal how much of a guess was right.
 * The length check may return early: the expected length is fixed by the algorithm, not secret.
 */
export function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  return a.byteLength === b.byteLength && timingSafeEqual(a, b);
}

/**
 * Strictly decodes a signature as sent; `undefined` when it is not well-formed. `Buffer.from`
 * skips characters it cannot decode, so strictness comes from the decoded length: for hex, half
 * the text; for padded base64, three bytes per four characters less the padding. Any skipped
 * character makes the result shorter. (Checking the length is cheaper than a pattern on the hot
 * path; base64url letters decode to the same bytes and are accepted.)
 */
export function decodeSignature(text: string, encoding: SignatureEncoding): Buffer | undefined {
  if (text.length === 0) return undefined;
  if (encoding === 'hex') {
    const bytes = Buffer.from(text, 'hex');
    return bytes.length * 2 === text.length ? bytes : undefined;
  }
  if (text.length % 4 !== 0) return undefined;
  const padding = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0;
  const bytes = Buffer.from(text, 'base64');
  return bytes.length === (text.length / 4) * 3 - padding ? bytes : undefined;
}
