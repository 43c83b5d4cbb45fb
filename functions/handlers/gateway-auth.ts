import type { AwsClients } from '../adapters/aws/clients.js';
import { dynamoClient } from '../adapters/aws/clients/dynamo.js';
import { DynamoApiKeyStore } from '../adapters/aws/dynamo-api-key-store.js';
import type { JwtSettings } from '../adapters/jwt-token-verifier.js';
import { onFirstUse } from '../adapters/lazy.js';
import { Authenticator, type TokenVerifier } from '../domain/authenticator.js';
import type { Settings } from '../settings.js';
import { canVerifyTokens, jwtSettingsFrom, refuseEveryToken } from './token-settings.js';

/**
 * The bearer-token check of gateway routes. jose, and the verifier made with it, load with the
 * first bearer token rather than at init: a request with an `X-Api-Key`, or with no credentials,
 * never needs them. The verifier is made once, so a JWKS fetched for one token is cached for the
 * next, as before.
 */
function tokenVerifierOnFirstUse(settings: JwtSettings): TokenVerifier {
  if (!canVerifyTokens(settings)) return refuseEveryToken;
  const verifier = onFirstUse(async () => (await import('../adapters/jwt-token-verifier.js')).createTokenVerifier(settings));
  return async (token) => (await verifier())(token);
}

/** The gateway's credential check, built once per execution environment from its settings. */
export const createGatewayAuthenticator = (settings: Settings, aws: AwsClients): Authenticator =>
  new Authenticator(tokenVerifierOnFirstUse(jwtSettingsFrom(settings)), new DynamoApiKeyStore(dynamoClient(aws), settings.authTable), { adminGroup: settings.adminGroup });
