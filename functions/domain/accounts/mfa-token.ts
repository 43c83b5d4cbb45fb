import type { PublicSigningKey, TokenSigner } from './ports.js';

/** Lifetime of a step-up proof, in seconds: also how long after it was issued it counts as fresh. */
export const MFA_TOKEN_TTL_SECONDS = 600;

/** RFC 8176 authentication method references: a one-time password, or a recovery code. */
export type AuthMethod = 'otp' | 'recovery_code';

/** The claims of a step-up proof. */
export interface MfaTokenClaims {
  iss: string;
  sub: string;
  account_id: string;
  amr: [AuthMethod];
  auth_time: number;
  iat: number;
  exp: number;
}

const base64url = (bytes: Uint8Array | string) => Buffer.from(bytes).toString('base64url');

/**
 * Issues a step-up proof: a compact JWS (ES256) signed by the signer's current key, which other
 * services check offline against `/.well-known/jwks.json`.
 */
export async function issueMfaToken(
  signer: TokenSigner,
  input: { issuer: string; subject: string; accountId: string; method: AuthMethod; nowMs: number },
): Promise<{ token: string; claims: MfaTokenClaims }> {
  const [current] = await signer.publicKeys();
  if (!current) throw new Error('the token signer has no key');
  const now = Math.floor(input.nowMs / 1000);
  const claims: MfaTokenClaims = {
    iss: input.issuer, sub: input.subject, account_id: input.accountId, amr: [input.method],
    auth_time: now, iat: now, exp: now + MFA_TOKEN_TTL_SECONDS,
  };
  const signingInput = `${base64url(JSON.stringify({ alg: 'ES256', typ: 'JWT', kid: current.kid }))}.${base64url(JSON.stringify(claims))}`;
  const signature = await signer.sign(current.kid, Buffer.from(signingInput, 'ascii'));
  return { token: `${signingInput}.${base64url(signature)}`, claims };
}

/**
 * Whether `token` is a fresh step-up proof of `subject`: signed by one of `keys`, issued by
 * `issuer`, unexpired and authenticated no more than {@link MFA_TOKEN_TTL_SECONDS} ago.
 */
export async function isFreshMfaToken(
  token: string,
  input: { keys: PublicSigningKey[]; issuer: string; subject: string; nowMs: number },
): Promise<boolean> {
  // jose loads with the first proof checked, not at init.
  const { createLocalJWKSet, jwtVerify } = await import('jose');
  try {
    const { payload } = await jwtVerify(token, createLocalJWKSet({ keys: input.keys }), {
      algorithms: ['ES256'],
      issuer: input.issuer,
      subject: input.subject,
      currentDate: new Date(input.nowMs),
      maxTokenAge: MFA_TOKEN_TTL_SECONDS,
      requiredClaims: ['exp', 'iat', 'auth_time'],
    });
    const authTime = payload.auth_time;
    return typeof authTime === 'number' && input.nowMs / 1000 - authTime <= MFA_TOKEN_TTL_SECONDS;
  } catch {
    return false;
  }
}
