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
