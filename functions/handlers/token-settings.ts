import type { JwtSettings } from '../adapters/jwt-token-verifier.js';
import type { TokenVerifier } from '../domain/authenticator.js';
import { AppError } from '../shared/errors.js';
import type { Settings } from '../settings.js';

/*
 * What both credential checks (`gateway-auth.ts`, `bearer-auth.ts`) build their token verifier
 * from. A module of its own, importing neither jose nor the verifier: one of them loads jose at
 * init and the other on first use, and whatever they shared would otherwise drag one's choice
 * into the other's bundle.
 */

/** The token settings of `functions/settings.ts` (`AUTH_JWT_SECRET`, `AUTH_JWKS_URL`, …). */
export function jwtSettingsFrom(settings: Pick<Settings, 'authJwtSecret' | 'authJwksUrl' | 'authJwtAlgorithms' | 'authIssuer' | 'authAudience'>): JwtSettings {
  const secret = settings.authJwtSecret;
  const algorithms = settings.authJwtAlgorithms?.split(',').map((a) => a.trim()).filter(Boolean) ?? [secret ? 'HS256' : 'RS256'];
  return { secret, jwksUrl: settings.authJwksUrl, algorithms, issuer: settings.authIssuer, audience: settings.authAudience };
}

/** Without a secret or a JWKS URL every token is refused; that needs no jose. */
export const canVerifyTokens = (settings: JwtSettings) => Boolean(settings.jwksUrl || settings.secret);
export const refuseEveryToken: TokenVerifier = async () => {
  throw new AppError('unauthorized', 'no token verification configured');
};
