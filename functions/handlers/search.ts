import type { AwsClients } from '../adapters/aws/clients.js';
import { sqsSearchMaintenanceOnFirstUse } from '../adapters/aws/sqs-on-first-use.js';
import { SEARCH_MAINTENANCE_WINDOW_SECONDS } from '../manifest.js';
import { searchEngineFor } from '../adapters/lance/search-engine-on-first-use.js';
import type { Authenticator } from '../domain/authenticator.js';
import { DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT } from '../domain/search/limits.js';
import { SearchService, type IndexInfo } from '../domain/search/service.js';
import type { Filter, IndexRef, IndexSettings } from '../domain/search/types.js';
import {
  invalid, parseDeleteBody, parseFilter, parseDocumentAt, parseDocumentBatch, parseIndexSettings, parseQuery, validateDocumentId, validateIndexName,
} from '../domain/search/validation.js';
import type { Settings } from '../settings.js';
import { AppError, notFound } from '../shared/errors.js';
import { createHttpHandler, type RouteRequest } from '../shared/handler.js';
import { created, json, jsonObjectBody, limitParam, noContent, ok, pathParam, queryParam, type HttpEvent } from '../shared/http.js';
import { createGatewayAuthenticator } from './gateway-auth.js';

/** A key's fixed filter, checked against the index's settings now: one that no longer fits them refuses the key's queries, never drops the filter. */
function fixedFilterOf(filter: Record<string, unknown>, settings: IndexSettings): Filter {
  try {
    return parseFilter(filter, settings);
  } catch {
    throw new AppError('forbidden', 'fixed filter does not fit the index', undefined, "this key's fixed filter names fields or values the index's settings no longer allow; mint a new key");
  }
}

const indexOf = ({ event, principal }: RouteRequest): IndexRef =>
  ({ accountId: principal.accountId, name: validateIndexName(pathParam(event, 'index')) });
const idOf = ({ event }: RouteRequest) => validateDocumentId(pathParam(event, 'id'));

/** `?wait=true`: answer once the full-text index covers the write too. */
function waitParam(event: HttpEvent): boolean {
  const raw = queryParam(event, 'wait');
  if (raw === undefined || raw === 'false') return false;
  if (raw === 'true') return true;
  throw invalid('wait must be true or false');
}

export const indexResource = ({ record, stats }: IndexInfo) => ({
  name: record.name,
  id_field: record.settings.idField,
  searchable_fields: record.settings.searchable,
  filterable_fields: record.settings.filterable,
  sortable_fields: record.settings.sortable,
  stored_fields: record.settings.stored,
  max_documents: record.settings.maxDocuments,
  created_at: record.createdAt,
  updated_at: record.updatedAt,
  documents: stats.documents,
  bytes: stats.bytes,
  pending_documents: stats.pendingDocuments,
});

/** The search function's routes over its use cases; exported so tests can build it over another engine. */
export const createSearchHandler = (search: SearchService, authenticator: Authenticator) => createHttpHandler('search', {
  async listSearchIndexes({ event, principal }) {
    const page = { limit: limitParam(event, DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT), cursor: queryParam(event, 'cursor') };
    const { indexes, nextCursor } = await search.listIndexes(principal.accountId, page);
    return ok({ indexes: indexes.map(indexResource), next_cursor: nextCursor });
  },
  async putSearchIndex(request) {
    const { info, created: isNew } = await search.putIndex(indexOf(request), parseIndexSettings(jsonObjectBody(request.event)));
    return isNew ? created(indexResource(info)) : ok(indexResource(info));
  },
  getSearchIndex: async (request) => ok(indexResource(await search.describeIndex(indexOf(request)))),
  async deleteSearchIndex(request) {
    await search.deleteIndex(indexOf(request));
    return noContent();
  },
  async purgeSearchIndex(request) {
    const record = await search.purgeIndex(indexOf(request));
    return json(200, { message: `Index '${record.name}' purged; its settings are unchanged.` });
  },
  async upsertSearchDocuments(request) {
    const body = jsonObjectBody(request.event);
    const { ids, indexed } = await search.upsert(indexOf(request), (settings) => parseDocumentBatch(body, settings), { wait: waitParam(request.event) });
    return ok({ ids, indexed });
  },
  async deleteSearchDocuments(request) {
    const body = jsonObjectBody(request.event);
    const { deleted, indexed } = await search.deleteDocuments(indexOf(request), (settings) => parseDeleteBody(body, settings), { wait: waitParam(request.event) });
    return ok({ deleted, indexed });
  },
  async putSearchDocument(request) {
    const id = idOf(request);
    const body = jsonObjectBody(request.event);
    const { indexed } = await search.upsert(indexOf(request), (settings) => [parseDocumentAt(id, body, settings)], { wait: waitParam(request.event) });
    return ok({ id, indexed });
  },
  async getSearchDocument(request) {
    const { id, doc } = await search.getDocument(indexOf(request), idOf(request));
    return ok({ id, document: doc });
  },
  async deleteSearchDocument(request) {
    await search.deleteDocument(indexOf(request), idOf(request), { wait: waitParam(request.event) });
    return noContent();
  },
  async querySearchIndex(request) {
    const body = jsonObjectBody(request.event, { optional: true });
    const ref = indexOf(request);
    // A search-only key: its one index (another answers 404, as an index of another account), its filter ANDed with the caller's.
    const restriction = request.principal.search;
    if (restriction && restriction.index !== ref.name) throw notFound('index', 'search-only key of another index');
    const answer = await search.query(ref, (settings) => parseQuery(body, settings), {
      ...(restriction?.filter && { fixedFilter: (settings: IndexSettings) => fixedFilterOf(restriction.filter!, settings) }),
    });
    return ok({
      hits: answer.hits,
      total: answer.total,
      total_relation: answer.totalExact ? 'eq' : 'gte',
      ...(answer.facets && { facets: answer.facets }),
      next_cursor: answer.nextCursor,
      took_ms: answer.tookMs,
    });
  },
}, authenticator);

/**
 * The search routes over the engine, loaded with the first request that needs it: the native module
 * (about 150 MB) stays off the init path, and requests refused before (bad credentials) never load it.
 */
export function composeSearch(settings: Settings, aws: AwsClients) {
  const maintenance = sqsSearchMaintenanceOnFirstUse(settings.searchMaintenanceQueueUrl, aws, { windowSeconds: SEARCH_MAINTENANCE_WINDOW_SECONDS, now: Date.now });
  const search = new SearchService({ engine: searchEngineFor(settings), maintenance, now: Date.now });
  return createSearchHandler(search, createGatewayAuthenticator(settings, aws));
}
