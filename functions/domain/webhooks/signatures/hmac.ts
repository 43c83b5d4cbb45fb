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

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * Strictly decodes a signature as sent; `undefined` when it is not well-formed.
 * `Buffer.from` alone would skip invalid base64 characters and accept near-misses. Hex needs no
 * pattern: Node stops decoding at the first character that is not a hex pair, so a decoded
 * length of exactly half the text proves every character was valid (and is cheaper on the hot path).
 */
export function decodeSignature(text: string, encoding: SignatureEncoding): Buffer | undefined {
  if (text.length === 0) return undefined;
  if (encoding === 'hex') {
    const bytes = Buffer.from(text, 'hex');
    return bytes.length * 2 === text.length ? bytes : undefined;
  }
  return BASE64.test(text) ? Buffer.from(text, 'base64') : undefined;
}

/**
 * True when any secret's digest equals any of the candidate signatures: several secrets
 * allow rotation, several candidates allow senders that send more than one signature.
 */
export function anySignatureMatches(
  secrets: readonly string[],
  candidates: readonly Buffer[],
  digest: (secret: string) => Buffer,
): boolean {
  if (candidates.length === 0) return false;
  return secrets.some((secret) => {
    const expected = digest(secret);
    return candidates.some((candidate) => constantTimeEqual(candidate, expected));
  });
}
