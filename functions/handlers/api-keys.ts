import { randomBytes } from 'node:crypto';
import { DynamoApiKeyStore } from '../adapters/aws/dynamo-api-key-store.js';
import type { AwsClients } from '../adapters/aws/clients.js';
import { dynamoClient } from '../adapters/aws/clients/dynamo.js';
import { generateApiKey, generateId, hashApiKey, ID_PATTERN, type ApiKeyStore } from '../domain/api-keys.js';
import type { Clock } from '../domain/clock.js';
import type { Authenticator } from '../domain/authenticator.js';
import type { Settings } from '../settings.js';
import { AppError } from '../shared/errors.js';
import { createHttpHandler } from '../shared/handler.js';
import { created, limitParam, noContent, ok, pathParam, queryParam } from '../shared/http.js';
import { createGatewayAuthenticator } from './gateway-auth.js';

/** The API-key routes over one key store. */
export const createApiKeysHandler = (store: ApiKeyStore, authenticator: Authenticator, now: Clock) => createHttpHandler('apiKeys', {
  async createApiKey({ principal }) {
    const apiKey = generateApiKey(randomBytes);
    const id = generateId(randomBytes);
    const createdAt = new Date(now()).toISOString();
    await store.create({ accountId: principal.accountId, id, keyHash: hashApiKey(apiKey), createdAt });
    return created({ id, api_key: apiKey, created_at: createdAt });
  },
  async listApiKeys({ event, principal }) {
    const page = await store.list(principal.accountId, { limit: limitParam(event, 50, 500), cursor: queryParam(event, 'cursor') });
    return ok({ api_keys: page.items, next_cursor: page.nextCursor });
  },
  async revokeApiKey({ event, principal }) {
    const id = pathParam(event, 'id');
    if (!ID_PATTERN.test(id) || !(await store.revoke(principal.accountId, id))) throw new AppError('not_found');
    return noContent();
  },
}, authenticator);

export const composeApiKeys = (settings: Settings, aws: AwsClients) =>
  createApiKeysHandler(new DynamoApiKeyStore(dynamoClient(aws), settings.authTable), createGatewayAuthenticator(settings, aws), Date.now);
