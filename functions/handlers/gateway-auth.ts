import { DynamoApiKeyStore } from '../adapters/aws/dynamo-api-key-store.js';
import { dynamoDocumentClient } from '../adapters/aws/dynamo-client.js';
import type { Settings } from '../settings.js';
import { Authenticator, createTokenVerifier, jwtSettingsFrom } from '../shared/auth.js';

/** The gateway's credential check, built once per execution environment from its settings. */
export const createGatewayAuthenticator = (settings: Settings): Authenticator =>
  new Authenticator(createTokenVerifier(jwtSettingsFrom(settings)), new DynamoApiKeyStore(dynamoDocumentClient, settings.authTable));
