import { DynamoApiKeyStore } from '../adapters/aws/dynamo-api-key-store.js';
import { dynamoDocumentClient } from '../adapters/aws/dynamo-client.js';
import { Authenticator, createTokenVerifier, jwtSettingsFromEnv } from '../shared/auth.js';
import { tableName } from '../shared/env.js';

/** The gateway's credential check, built once per execution environment from its settings. */
export const createGatewayAuthenticator = (): Authenticator =>
  new Authenticator(createTokenVerifier(jwtSettingsFromEnv()), new DynamoApiKeyStore(dynamoDocumentClient, tableName('auth')));

/**
 * The check of a function whose routes all take only a user's bearer token (`auth: 'bearer'`):
 * it never looks up an `X-Api-Key`, so it needs neither the auth table nor a grant on it.
 */
export const createBearerAuthenticator = (): Authenticator =>
  new Authenticator(createTokenVerifier(jwtSettingsFromEnv()), {
    findByHash: () => Promise.reject(new Error('this function has no API-key store: its routes must be bearer-only')),
  });
