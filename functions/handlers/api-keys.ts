import { randomBytes } from 'node:crypto';
import { DynamoApiKeyStore } from '../adapters/aws/dynamo-api-key-store.js';
import type { AwsClients } from '../adapters/aws/clients.js';
import { dynamoClient } from '../adapters/aws/clients/dynamo.js';
import { generateApiKey, generateId, hashApiKey, type ApiKeyStore } from '../domain/api-keys.js';
import type { Authenticator } from '../shared/auth.js';
import type { Settings } from '../settings.js';
import { AppError } from '../shared/errors.js';
import { createHttpHandler } from '../shared/handler.js';
import { created, limitParam, noContent, ok, pathParam, queryParam } from '../shared/http.js';
import { createGatewayAuthenticator } from './gateway-auth.js';

/** The API-key routes over one key store. */
export const createApiKeysHandler = (store: ApiKeyStore, authenticator: Authenticator, now: () => Date = () => new Date()) => createHttpHandler('apiKeys', {
  async createApiKey({ principal }) {
    const apiKey = generateApiKey(randomBytes);
    const id = generateId(randomBytes);
    const createdAt = now().toISOString();
    await store.create({ accountId: principal.accountId, id, keyHash: hashApiKey(apiKey), createdAt });
    return created({ id, api_key: apiKey, created_at: createdAt });
  },
  async listApiKeys({ event, principal }) {
    const page = await store.list(principal.accountId, { limit: limitParam(event, 50, 500), cursor: queryParam(event, 'cursor') });
    return ok({ api_keys: page.items, next_cursor: page.nextCursor });
  },
  async revokeApiKey({ event, principal }) {
    const id = pathParam(event, 'id');
    if (!/^[0-9a-f]{32}$/.test(id) || !(await store.revoke(principal.accountId, id))) throw new AppError('not_found');
    return noContent();
  },
}, authenticator);

export const composeApiKeys = (settings: Settings, aws: AwsClients) =>
  createApiKeysHandler(new DynamoApiKeyStore(dynamoClient(aws), settings.authTable), createGatewayAuthenticator(settings, aws));
