import { createRemoteJWKSet, jwtVerify, type JWTPayload } from 'jose';

/** What a step-up proof says once it verified. */
export interface ProofClaims extends JWTPayload {
  sub: string;
  account_id?: string;
  /** `["otp"]` or `["recovery_code"]`. */
  amr?: string[];
  auth_time?: number;
  purpose?: string;
}

export interface VerifyProofOptions {
  /** The gateway's `/.well-known/jwks.json`; its keys are fetched once and cached (jose's remote key set). */
  jwksUrl: string | URL;
  /** Your app: the proof's `aud` must be it (a proof minted for another app is refused). */
  audience: string | string[];
  /** The gateway's base URL, when you want `iss` checked too. */
  issuer?: string;
  /** When the proof must be for one purpose (`sign_in`, `mint_admin_key`, …). */
  purpose?: string;
  /** Seconds of clock difference tolerated (default 5). */
  clockToleranceSeconds?: number;
}

const keySets = new Map<string, ReturnType<typeof createRemoteJWKSet>>();

/**
 * Checks a step-up proof (`accounts.verify(code)`'s `mfa_token`) offline, for a service that relies
 * on it: ES256 signature against the gateway's published keys, `exp`, `aud` (and `iss`, `purpose`
 * when given). Throws jose's error (`ERR_JWT_CLAIM_VALIDATION_FAILED`, …) when it does not hold.
 */
export async function verifyProof(token: string, options: VerifyProofOptions): Promise<ProofClaims> {
  const url = String(options.jwksUrl);
  let keys = keySets.get(url);
  if (!keys) keySets.set(url, (keys = createRemoteJWKSet(new URL(url))));
  const { payload } = await jwtVerify(token, keys, {
    algorithms: ['ES256'],
    audience: options.audience,
    issuer: options.issuer,
    clockTolerance: options.clockToleranceSeconds ?? 5,
    requiredClaims: ['sub', 'exp', 'aud'],
  });
  if (options.purpose !== undefined && payload.purpose !== options.purpose) {
    throw new TypeError(`verifyProof: the proof is for purpose "${String(payload.purpose)}", not "${options.purpose}"`);
  }
  return payload as ProofClaims;
}
