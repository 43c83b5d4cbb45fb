import { dataBody, errorBody, type OperationDocs, type Schema } from './types.js';

const apiKeySummary: Schema = {
  type: 'object',
  required: ['id', 'created_at'],
  properties: { id: { type: 'string', pattern: '^[0-9a-f]{32}$' }, created_at: { type: 'string', format: 'date-time' } },
};
const pageParameters = [
  { name: 'limit', in: 'query' as const, description: '1 to 500, default 50', schema: { type: 'integer', minimum: 1, maximum: 500 } },
  { name: 'cursor', in: 'query' as const, description: '`next_cursor` of the previous page', schema: { type: 'string' } },
];

export const apiKeysDocs: OperationDocs = {
  createApiKey: {
    description: 'Issues a gateway API key for the caller\'s account, sent as `X-Api-Key`. The key (256 random bits, prefixed `fgk_`) is shown only in this response; only its SHA-256 hash is stored.',
    responses: {
      '201': dataBody('Created', { ...apiKeySummary, required: ['id', 'api_key', 'created_at'], properties: { ...(apiKeySummary.properties as object), api_key: { type: 'string', pattern: '^fgk_[A-Za-z0-9_-]{43}$' } } }),
    },
  },
  listApiKeys: {
    description: 'The account\'s keys, never the keys themselves or their hashes.',
    parameters: pageParameters,
    responses: {
      '200': dataBody('A page of keys', {
        type: 'object',
        required: ['api_keys', 'next_cursor'],
        properties: { api_keys: { type: 'array', items: apiKeySummary }, next_cursor: { type: ['string', 'null'] } },
      }),
      '400': errorBody('validation_error: bad limit or cursor'),
    },
  },
  revokeApiKey: {
    description: 'Revokes a key; it stops working at once. Another account\'s key is 404.',
    responses: { '204': { description: 'Revoked' }, '404': errorBody('not_found') },
  },
};
