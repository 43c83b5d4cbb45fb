import type { AwsClients } from '../adapters/aws/clients.js';
import { dynamoClient } from '../adapters/aws/clients/dynamo.js';
import { DynamoApiKeyStore } from '../adapters/aws/dynamo-api-key-store.js';
import { createTokenVerifier, type JwtSettings } from '../adapters/jwt-token-verifier.js';
import { Authenticator } from '../domain/authenticator.js';
import type { Settings } from '../settings.js';

/** The token settings of `functions/settings.ts` (`AUTH_JWT_SECRET`, `AUTH_JWKS_URL`, …). */
function jwtSettingsFrom(settings: Pick<Settings, 'authJwtSecret' | 'authJwksUrl' | 'authJwtAlgorithms' | 'authIssuer' | 'authAudience'>): JwtSettings {
  const secret = settings.authJwtSecret;
  const algorithms = settings.authJwtAlgorithms?.split(',').map((a) => a.trim()).filter(Boolean) ?? [secret ? 'HS256' : 'RS256'];
  return { secret, jwksUrl: settings.authJwksUrl, algorithms, issuer: settings.authIssuer, audience: settings.authAudience };
}

/** The gateway's credential check, built once per execution environment from its settings. */
export const createGatewayAuthenticator = (settings: Settings, aws: AwsClients): Authenticator =>
  new Authenticator(createTokenVerifier(jwtSettingsFrom(settings)), new DynamoApiKeyStore(dynamoClient(aws), settings.authTable));

/**
 * The check of a function whose routes all take only a user's bearer token (`auth: 'bearer'`):
 * it never looks up an `X-Api-Key`, so it needs neither the auth table nor a grant on it.
 */
export const createBearerAuthenticator = (settings: Settings): Authenticator =>
  new Authenticator(createTokenVerifier(jwtSettingsFrom(settings)), {
    findByHash: () => Promise.reject(new Error('this function has no API-key store: its routes must be bearer-only')),
  });
