import { createTokenVerifier } from '../adapters/jwt-token-verifier.js';
import { Authenticator } from '../domain/authenticator.js';
import type { Settings } from '../settings.js';
import { canVerifyTokens, jwtSettingsFrom, refuseEveryToken } from './token-settings.js';

/**
 * The check of a function whose routes all take only a user's bearer token (`auth: 'bearer'`):
 * it never looks up an `X-Api-Key`, so it needs neither the auth table nor a grant on it. Every
 * request it accepts carries a token, so jose loads at init (unlike `gateway-auth.ts`, whose
 * functions load it with the first token).
 */
export function createBearerAuthenticator(settings: Settings): Authenticator {
  const jwt = jwtSettingsFrom(settings);
  return new Authenticator(canVerifyTokens(jwt) ? createTokenVerifier(jwt) : refuseEveryToken, {
    findByHash: () => Promise.reject(new Error('this function has no API-key store: its routes must be bearer-only')),
  }, { adminGroup: settings.adminGroup });
}
