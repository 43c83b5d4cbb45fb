import type { PublicSigningKey, TokenSigner } from './ports.js';

/** Lifetime of a step-up proof, in seconds: also how long after it was issued it counts as fresh. */
export const MFA_TOKEN_TTL_SECONDS = 600;

/** RFC 8176 authentication method references: a one-time password, or a recovery code. */
export type AuthMethod = 'otp' | 'recovery_code';

/**
 * What a step-up proof is for. `sign_in` (the default) proves a second factor to relying services
 * and lets a further registration start; each other purpose is the one sensitive operation that
 * accepts it, once.
 */
export const PROOF_PURPOSES = ['sign_in', 'add_factor', 'remove_factor', 'regenerate_recovery_codes', 'mint_admin_key', 'admin_reset'] as const;
export type ProofPurpose = (typeof PROOF_PURPOSES)[number];
export const isProofPurpose = (value: unknown): value is ProofPurpose => typeof value === 'string' && (PROOF_PURPOSES as readonly string[]).includes(value);

/** The claims of a step-up proof. */
export interface MfaTokenClaims {
  iss: string;
  /** The app the proof was made for: the `client_id` (else `aud`) of the user's token, else the issuer itself. */
  aud: string;
  sub: string;
  account_id: string;
  amr: [AuthMethod];
  auth_time: number;
  iat: number;
  exp: number;
  /** Unique per proof: what spending it records. */
  jti: string;
  purpose: ProofPurpose;
}

const base64url = (bytes: Uint8Array | string) => Buffer.from(bytes).toString('base64url');

/**
 * Issues a step-up proof: a compact JWS (ES256) signed by the signer's current key, which other
 * services check offline against `/.well-known/jwks.json`.
 */
export async function issueMfaToken(
  signer: TokenSigner,
  input: { issuer: string; audience: string; subject: string; accountId: string; method: AuthMethod; purpose: ProofPurpose; jti: string; nowMs: number },
): Promise<{ token: string; claims: MfaTokenClaims }> {
  const [current] = await signer.publicKeys();
  if (!current) throw new Error('the token signer has no key');
  const now = Math.floor(input.nowMs / 1000);
  const claims: MfaTokenClaims = {
    iss: input.issuer, aud: input.audience, sub: input.subject, account_id: input.accountId, amr: [input.method],
    auth_time: now, iat: now, exp: now + MFA_TOKEN_TTL_SECONDS, jti: input.jti, purpose: input.purpose,
  };
  const signingInput = `${base64url(JSON.stringify({ alg: 'ES256', typ: 'JWT', kid: current.kid }))}.${base64url(JSON.stringify(claims))}`;
  const signature = await signer.sign(current.kid, Buffer.from(signingInput, 'ascii'));
  return { token: `${signingInput}.${base64url(signature)}`, claims };
}

/** What a proof that holds says of itself. */
export interface FreshProof {
  jti: string;
  exp: number;
  purpose: ProofPurpose;
}

/**
 * The proof's `jti`, `exp` and `purpose` when `token` is a fresh step-up proof of `subject` for
 * `audience`: signed by one of `keys`, issued by `issuer`, unexpired and authenticated no more than
 * {@link MFA_TOKEN_TTL_SECONDS} ago; undefined otherwise (a proof from before purposes existed too).
 */
export async function readFreshMfaToken(
  token: string,
  input: { keys: PublicSigningKey[]; issuer: string; audience: string; subject: string; nowMs: number },
): Promise<FreshProof | undefined> {
  // jose loads with the first proof checked, not at init.
  const { createLocalJWKSet, jwtVerify } = await import('jose');
  try {
    const { payload } = await jwtVerify(token, createLocalJWKSet({ keys: input.keys }), {
      algorithms: ['ES256'],
      issuer: input.issuer,
      audience: input.audience,
      subject: input.subject,
      currentDate: new Date(input.nowMs),
      maxTokenAge: MFA_TOKEN_TTL_SECONDS,
      requiredClaims: ['exp', 'iat', 'auth_time', 'jti'],
    });
    const { auth_time: authTime, jti, exp, purpose } = payload;
    if (typeof authTime !== 'number' || input.nowMs / 1000 - authTime > MFA_TOKEN_TTL_SECONDS) return undefined;
    if (typeof jti !== 'string' || jti.length === 0 || jti.length > 64 || typeof exp !== 'number' || !isProofPurpose(purpose)) return undefined;
    return { jti, exp, purpose };
  } catch {
    return undefined;
  }
}

/** Whether `token` is a fresh step-up proof of `subject` for `audience` (whatever its purpose). */
export const isFreshMfaToken = async (
  token: string,
  input: { keys: PublicSigningKey[]; issuer: string; audience: string; subject: string; nowMs: number },
): Promise<boolean> => (await readFreshMfaToken(token, input)) !== undefined;
