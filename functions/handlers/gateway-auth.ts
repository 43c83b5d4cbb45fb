import { DynamoApiKeyStore } from '../adapters/aws/dynamo-api-key-store.js';
import { dynamoDocumentClient } from '../adapters/aws/dynamo-client.js';
import { Authenticator, createTokenVerifier, jwtSettingsFromEnv } from '../shared/auth.js';
import { tableName } from '../shared/env.js';

/** The gateway's credential check, built once per execution environment from its settings. */
export const createGatewayAuthenticator = (): Authenticator =>
  new Authenticator(createTokenVerifier(jwtSettingsFromEnv()), new DynamoApiKeyStore(dynamoDocumentClient, tableName('auth')));
