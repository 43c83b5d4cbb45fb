import { API_KEY_PATTERN, ID_PATTERN } from '../domain/api-keys.js';
import { dataBody, errorBody, pageBody, pageParameters, type OperationDocs, type Schema } from './types.js';

const apiKeySummary: Schema = {
  type: 'object',
  required: ['id', 'created_at'],
  properties: { id: { type: 'string', pattern: ID_PATTERN.source }, created_at: { type: 'string', format: 'date-time' } },
};

export const apiKeysDocs: OperationDocs = {
  createApiKey: {
    description: 'Issues a gateway API key for the caller\'s account, sent as `X-Api-Key`. The key (256 random bits, prefixed `fgk_`) is shown only in this response; only its SHA-256 hash is stored.',
    responses: {
      '201': dataBody('Created', { ...apiKeySummary, required: ['id', 'api_key', 'created_at'], properties: { ...(apiKeySummary.properties as object), api_key: { type: 'string', pattern: API_KEY_PATTERN.source } } }),
    },
  },
  listApiKeys: {
    description: 'The account\'s keys, never the keys themselves or their hashes.',
    parameters: pageParameters('API keys'),
    responses: {
      '200': pageBody('A page of keys', 'api_keys', apiKeySummary),
      '400': errorBody('validation_error: bad limit or cursor'),
    },
  },
  revokeApiKey: {
    description: 'Revokes a key; it stops working at once. Another account\'s key is 404.',
    responses: { '204': { description: 'Revoked' }, '404': errorBody('not_found') },
  },
};
