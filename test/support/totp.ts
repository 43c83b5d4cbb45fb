import { generateSync } from 'otplib';

/**
 * The 6-digit SHA-1 30-second code an authenticator app shows for `secretBase32` at `epochMs`.
 * Computed by otplib on its own base32 decoding, independently of the domain code under test.
 */
export function totpCodeAt(secretBase32: string, epochMs: number): string {
  return generateSync({
    secret: secretBase32,
    epoch: Math.floor(epochMs / 1000),
    algorithm: 'sha1',
    digits: 6,
    period: 30,
  });
}

/** RFC 6238 Appendix B's SHA-1 key ("12345678901234567890") in base32. */
export const RFC6238_SECRET = 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ';

/** RFC 6238 Appendix B's published SHA-1 codes (8 digits) at their times. */
export const RFC6238_SHA1_VECTORS: ReadonlyArray<[epochSeconds: number, code8: string]> = [
  [59, '94287082'],
  [1111111109, '07081804'],
  [1111111111, '14050471'],
  [1234567890, '89005924'],
  [2000000000, '69279037'],
  [20000000000, '65353130'],
];
