import type { AwsClients } from '../adapters/aws/clients.js';
import { dynamoClient } from '../adapters/aws/clients/dynamo.js';
import { DynamoApiKeyStore } from '../adapters/aws/dynamo-api-key-store.js';
import type { Settings } from '../settings.js';
import { Authenticator, createTokenVerifier, jwtSettingsFrom } from '../shared/auth.js';

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
