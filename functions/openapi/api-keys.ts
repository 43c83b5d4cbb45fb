import { API_KEY_PATTERN, DEFAULT_KEY_SCOPES, ID_PATTERN, MAX_SEARCH_FILTER_BYTES, SCOPES, USER_MINTABLE_SCOPES } from '../domain/api-keys.js';
import { dataBody, errorBody, named, pageBody, pageParameters, type OperationDocs, type Schema } from './types.js';

const SCOPE_LIST: Schema = { type: 'array', items: { type: 'string', enum: [...SCOPES] }, uniqueItems: true };
const API_KEY: Schema = {
  type: 'object',
  required: ['id', 'created_at', 'scopes'],
  properties: { id: { type: 'string', pattern: ID_PATTERN.source }, created_at: { type: 'string', format: 'date-time' }, scopes: SCOPE_LIST },
};
const apiKeySummary = named('ApiKey', API_KEY);
const USERS_ONLY = 'A user\'s bearer token only: an `X-Api-Key` is refused with 401, so a key can neither mint, list nor revoke keys.';
const KEY_EVENT: Schema = named('ApiKeyEvent', {
  type: 'object',
  required: ['type', 'at', 'key_id', 'scopes', 'actor', 'source_ip', 'user_agent'],
  properties: {
    type: { type: 'string', enum: ['api_key_created', 'api_key_revoked'] },
    at: { type: 'string', format: 'date-time' },
    key_id: { type: 'string' },
    scopes: { ...SCOPE_LIST, type: ['array', 'null'] },
    actor: { type: 'string', description: 'The `sub` of the user who did it.' },
    source_ip: { type: ['string', 'null'] },
    user_agent: { type: ['string', 'null'], maxLength: 256 },
  },
});

/** What a `search:query` key is limited to. */
const SEARCH_RESTRICTION: Schema = named('SearchKeyRestriction', {
  type: 'object', additionalProperties: false, required: ['index'],
  properties: {
    index: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$', description: 'The one search index the key may query; any other answers 404.' },
    filter: { type: 'object', description: `A filter (as \`querySearchIndex\` takes it, at most ${MAX_SEARCH_FILTER_BYTES} bytes) ANDed with every query the key sends; checked against the index's settings on each query (403 \`forbidden\` once it no longer fits them).` },
  },
});

export const apiKeysDocs: OperationDocs = {
  createApiKey: {
    description: 'Issues a gateway API key for the caller\'s account, sent as `X-Api-Key`, with the scopes asked for: ' +
      `any of ${USER_MINTABLE_SCOPES.map((s) => `\`${s}\``).join(', ')} (default ${DEFAULT_KEY_SCOPES.map((s) => `\`${s}\``).join(' + ')}). ` +
      '`storage` reaches the KV buckets, object stores, streams and search indexes, `triggers` the webhook triggers, their deliveries and the flows; `:read` only their reading routes. ' +
      '`search:query` (alone, with `search`) makes a key a web page may hold: it only queries the one index named, and its `search.filter` is ANDed with every query, so a caller can narrow what it reaches, never widen it (one tenant\'s documents). ' +
      'An `admin` key is minted at `createAdminApiKey`. The key (256 random bits, prefixed `fgk_`) is shown only in this response; only its SHA-256 hash is stored. ' +
      'Recorded in `listApiKeyEvents`. ' + USERS_ONLY,
    requestBody: { required: false, content: { 'application/json': named('ApiKeyInput', { type: 'object', properties: { scopes: { ...SCOPE_LIST, minItems: 1 }, search: SEARCH_RESTRICTION } }) } },
    responses: {
      '201': dataBody('Created', named('NewApiKey', { ...API_KEY, description: 'An API key as minted: with the key itself, shown only here.', required: ['id', 'api_key', 'created_at', 'scopes'], properties: { ...(API_KEY.properties as object), api_key: { type: 'string', pattern: API_KEY_PATTERN.source }, search: SEARCH_RESTRICTION } })),
      '400': errorBody('validation_error: `scopes` not a non-empty list of distinct scope names, or `search` missing, malformed, or given without the `search:query` scope alone.'),
      '403': errorBody('forbidden: `admin` asked for here (see `createAdminApiKey`).'),
    },
  },
  listApiKeys: {
    description: 'The account\'s keys with their scopes, never the keys themselves or their hashes. A key from before scopes existed is listed with `storage` + `triggers`, what it keeps reaching. ' + USERS_ONLY,
    parameters: pageParameters('API keys'),
    responses: {
      '200': pageBody('A page of keys', 'api_keys', apiKeySummary),
      '400': errorBody('validation_error: bad limit or cursor'),
    },
  },
  revokeApiKey: {
    description: 'Revokes a key; it stops working at once. Another account\'s key is 404. Recorded in `listApiKeyEvents`. ' + USERS_ONLY,
    responses: { '204': { description: 'Revoked' }, '404': errorBody('not_found') },
  },
  listApiKeyEvents: {
    description: 'Who minted and revoked the account\'s keys, newest first, with when and from where; never a key. ' + USERS_ONLY,
    parameters: pageParameters('Events', { max: 100, default: 20 }),
    responses: {
      '200': pageBody('A page of events', 'events', KEY_EVENT),
      '400': errorBody('validation_error: `limit` out of range or a malformed `cursor`.'),
    },
  },
};
