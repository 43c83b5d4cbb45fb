import { randomBytes } from 'node:crypto';
import { DynamoApiKeyEventLog } from '../adapters/aws/dynamo-api-key-event-log.js';
import { DynamoApiKeyStore } from '../adapters/aws/dynamo-api-key-store.js';
import type { AwsClients } from '../adapters/aws/clients.js';
import { dynamoClient } from '../adapters/aws/clients/dynamo.js';
import {
  clientFields, ID_PATTERN, mintApiKey, requestedSearchRestriction, userRequestedScopes, type ApiKeyEvent, type ApiKeyEventLog, type ApiKeyStore,
} from '../domain/api-keys.js';
import type { Clock } from '../domain/clock.js';
import type { Authenticator } from '../domain/authenticator.js';
import type { Settings } from '../settings.js';
import { notFound } from '../shared/errors.js';
import { createHttpHandler, type HandlerOptions } from '../shared/handler.js';
import { idempotencyOnFirstUse } from '../adapters/aws/idempotency-on-first-use.js';
import { created, header, jsonObjectBody, limitParam, noContent, ok, pathParam, queryParam, type HttpEvent } from '../shared/http.js';
import { createGatewayAuthenticator } from './gateway-auth.js';

/** Where the request came from, for the audit log. */
export const requestClient = (event: HttpEvent) => ({ sourceIp: event.requestContext?.http?.sourceIp, userAgent: header(event, 'user-agent') });

export const apiKeyEventBody = (event: ApiKeyEvent) => ({
  type: event.type, at: event.at, key_id: event.keyId, scopes: event.scopes ?? null, actor: event.actor,
  source_ip: event.sourceIp ?? null, user_agent: event.userAgent ?? null,
});

const EVENTS_PAGE = { default: 20, max: 100 };

/**
 * The API-key routes over one key store. Every route takes a user's token only (the route table
 * says so): a key can neither mint, list nor revoke keys, so a leaked key cannot outlive its own
 * revocation. Minting and revoking are recorded with the user who did it.
 */
export const createApiKeysHandler = (deps: { store: ApiKeyStore; events: ApiKeyEventLog; now: Clock }, authenticator: Authenticator, options: HandlerOptions = {}) => createHttpHandler('apiKeys', {
  async createApiKey({ event, principal }) {
    const body = jsonObjectBody(event, { optional: true });
    const scopes = userRequestedScopes(body.scopes);
    const search = requestedSearchRestriction(body.search, scopes);
    const minted = await mintApiKey({ ...deps, randomBytes }, { accountId: principal.accountId, actor: principal.subject, scopes, ...(search && { search }), client: requestClient(event) });
    return created({ id: minted.id, api_key: minted.apiKey, created_at: minted.createdAt, scopes: minted.scopes, ...(minted.search && { search: minted.search }) });
  },
  async listApiKeys({ event, principal }) {
    const page = await deps.store.list(principal.accountId, { limit: limitParam(event, 50, 500), cursor: queryParam(event, 'cursor') });
    return ok({ api_keys: page.items, next_cursor: page.nextCursor });
  },
  async revokeApiKey({ event, principal }) {
    const id = pathParam(event, 'id');
    if (!ID_PATTERN.test(id) || !(await deps.store.revoke(principal.accountId, id))) throw notFound('apiKey');
    await deps.events.record(principal.accountId, {
      type: 'api_key_revoked', at: new Date(deps.now()).toISOString(), keyId: id, actor: principal.subject, ...clientFields(requestClient(event)),
    });
    return noContent();
  },
  async listApiKeyEvents({ event, principal }) {
    const page = await deps.events.list(principal.accountId, { limit: limitParam(event, EVENTS_PAGE.default, EVENTS_PAGE.max), cursor: queryParam(event, 'cursor') });
    return ok({ events: page.events.map(apiKeyEventBody), next_cursor: page.nextCursor });
  },
}, authenticator, {}, options);

export const composeApiKeys = (settings: Settings, aws: AwsClients) =>
  createApiKeysHandler({
    store: new DynamoApiKeyStore(dynamoClient(aws), settings.authTable),
    events: new DynamoApiKeyEventLog(dynamoClient(aws), settings.authTable, randomBytes),
    now: Date.now,
  }, createGatewayAuthenticator(settings, aws), { idempotency: idempotencyOnFirstUse(settings.authTable, aws) });
