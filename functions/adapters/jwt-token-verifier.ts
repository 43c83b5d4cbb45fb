import { createRemoteJWKSet, jwtVerify, type JWTVerifyGetKey } from 'jose';
import type { TokenVerifier } from '../domain/authenticator.js';

/** How bearer tokens are verified: a shared secret or an issuer's JWKS, and the claims required. */
export interface JwtSettings {
  /** HS256 secret (used as its UTF-8 bytes); for the local stack and tests. */
  secret?: string;
  /** JWKS URL for deployed issuers (Cognito or external). */
  jwksUrl?: string;
  /** Algorithms accepted; fixed by configuration, never read from the token. */
  algorithms: string[];
  issuer?: string;
  audience?: string;
}

/**
 * The bearer-token check with jose, built once per execution environment (jose caches the JWKS).
 * It needs a secret or a JWKS URL; without either, the gateway refuses every token before loading
 * this module (`handlers/gateway-auth.ts`), which therefore imports nothing of the service's own.
 */
export function createTokenVerifier(settings: JwtSettings): TokenVerifier {
  let key: Uint8Array | JWTVerifyGetKey;
  if (settings.jwksUrl) key = createRemoteJWKSet(new URL(settings.jwksUrl));
  else if (settings.secret) key = new TextEncoder().encode(settings.secret);
  else throw new Error('a token verifier needs AUTH_JWT_SECRET or AUTH_JWKS_URL');
  return async (token) => {
    const options = { algorithms: settings.algorithms, issuer: settings.issuer, audience: settings.audience, requiredClaims: ['exp'] };
    const { payload } = typeof key === 'function' ? await jwtVerify(token, key, options) : await jwtVerify(token, key, options);
    return payload;
  };
}
