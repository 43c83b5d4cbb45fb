import { randomBytes } from 'node:crypto';
import { DynamoApiKeyStore } from '../adapters/aws/dynamo-api-key-store.js';
import { dynamoDocumentClient } from '../adapters/aws/dynamo-client.js';
import { generateApiKey, generateId, hashApiKey } from '../domain/api-keys.js';
import { readSettings } from '../settings.js';
import { AppError } from '../shared/errors.js';
import { createHttpHandler } from '../shared/handler.js';
import { created, limitParam, noContent, ok, pathParam, queryParam } from '../shared/http.js';
import { createGatewayAuthenticator } from './gateway-auth.js';

const settings = readSettings('apiKeys', process.env);
const store = new DynamoApiKeyStore(dynamoDocumentClient, settings.authTable);

export const handler = createHttpHandler('apiKeys', {
  async createApiKey({ principal }) {
    const apiKey = generateApiKey(randomBytes);
    const id = generateId(randomBytes);
    const createdAt = new Date().toISOString();
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
}, createGatewayAuthenticator(settings));
