import { createHmac, timingSafeEqual } from 'node:crypto';

export type HmacAlgorithm = 'sha1' | 'sha256' | 'sha512';
export type SignatureEncoding = 'hex' | 'base64';

/** HMAC over the concatenation of `parts`; strings are UTF-8, bytes are taken as they are. */
export function hmac(algorithm: HmacAlgorithm, key: string | Uint8Array, ...parts: (string | Uint8Array)[]): Buffer {
  const mac = createHmac(algorithm, key);
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

const HEX = /^(?:[0-9a-f]{2})+$/i;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * Strictly decodes a signature as sent; `undefined` when it is not well-formed.
 * `Buffer.from` alone would skip invalid characters and accept near-misses.
 */
export function decodeSignature(text: string, encoding: SignatureEncoding): Buffer | undefined {
  const pattern = encoding === 'hex' ? HEX : BASE64;
  if (text.length === 0 || !pattern.test(text)) return undefined;
  return Buffer.from(text, encoding);
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
