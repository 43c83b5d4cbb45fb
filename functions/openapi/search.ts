import {
  DEFAULT_LIST_LIMIT, DEFAULT_MAX_DOCUMENTS, DEFAULT_QUERY_LIMIT, FIELD_NAME_PATTERN, INDEX_NAME_PATTERN, MAINTENANCE_WINDOW_SECONDS,
  MAX_BATCH_BYTES, MAX_BATCH_DOCUMENTS, MAX_CANDIDATES, MAX_DOCUMENT_BYTES, MAX_FACET_DOCUMENTS, MAX_FACET_VALUES, MAX_FACETS, MAX_FIELD_WEIGHT,
  MAX_FILTER_DEPTH, MAX_FILTER_NODES, MAX_FILTERABLE_FIELDS, MAX_ID_BYTES, MAX_IN_VALUES, MAX_INDEXES_PER_ACCOUNT, MAX_LIST_LIMIT, MAX_MAX_DOCUMENTS,
  MAX_QUERY_BYTES, MAX_QUERY_LIMIT, MAX_QUERY_TERMS, MAX_SEARCHABLE_FIELDS, MAX_SORT_KEYS, MAX_WAIT_INDEXED_MS, MIN_FIELD_WEIGHT, ONE_TYPO_MIN_CHARS,
  TWO_TYPOS_MIN_CHARS,
} from '../domain/search/limits.js';
import { dataBody, errorBody, named, pageBody, pageParameters, type OperationDocs, type Schema } from './types.js';

const SCOPE = 'Indexes belong to the caller\'s account; an index of another account answers 404 like a missing one.';
const VISIBILITY =
  'A write answers once it is committed (durable) and is visible to the next query at once: exact and prefix matches read ' +
  'documents not yet in the full-text index too. Typo matches and ranking statistics cover a write once background maintenance ' +
  `has taken it in, within ${MAINTENANCE_WINDOW_SECONDS} s of the write plus the maintenance job's own run ` +
  '(`pending_documents` on the index counts what it has yet to take in); `?wait=true` answers only then (read-your-writes for ' +
  `every kind of match, waiting at most ${MAX_WAIT_INDEXED_MS / 1000} s; \`indexed\` says whether it did). Writes to one index commit one at a time, so writers at once lose nothing.`;

const fieldName: Schema = { type: 'string', pattern: FIELD_NAME_PATTERN.source, description: 'A top-level field, or a dotted path to a nested one.' };
const typedField = (what: string): Schema => ({
  type: 'object', additionalProperties: false, required: ['field', 'type'],
  properties: { field: fieldName, type: { enum: ['string', 'number', 'boolean'], description: `The type of the field's values; a document whose value has another type is refused (null or absent is allowed). ${what}` } },
});
const searchableField: Schema = { type: 'object', additionalProperties: false, required: ['field'], properties: { field: fieldName, weight: { type: 'number', minimum: MIN_FIELD_WEIGHT, maximum: MAX_FIELD_WEIGHT, default: 1, description: 'Multiplies the field\'s BM25 score.' } } };

const settingsProperties: Record<string, Schema> = {
  id_field: { ...fieldName, default: 'id', description: `The field holding each document's id: a string of 1 to ${MAX_ID_BYTES} bytes without control characters, or an integer (taken as its decimal text).` },
  searchable_fields: {
    type: 'array', minItems: 1, maxItems: MAX_SEARCHABLE_FIELDS, items: { oneOf: [fieldName, searchableField] },
    description: 'Fields whose text is searched (strings, numbers, and arrays of them), each a name (weight 1) or `{"field", "weight"}`.',
  },
  filterable_fields: { type: 'array', maxItems: MAX_FILTERABLE_FIELDS, items: typedField('Named by `filter` and `facets`.') },
  sortable_fields: { type: 'array', maxItems: MAX_FILTERABLE_FIELDS, items: typedField('Named by `sort`.') },
  stored_fields: { type: ['array', 'null'], items: fieldName, maxItems: 64, description: 'The fields a hit carries; null (the default): the whole document. `GET …/documents/{id}` always answers the whole document.' },
  max_documents: { type: 'integer', minimum: 1, maximum: MAX_MAX_DOCUMENTS, default: DEFAULT_MAX_DOCUMENTS, description: 'A write that would pass it is refused (409 `conflict`).' },
};

const indexSchema = named('SearchIndex', {
  type: 'object',
  required: ['name', 'id_field', 'searchable_fields', 'filterable_fields', 'sortable_fields', 'stored_fields', 'max_documents', 'created_at', 'updated_at', 'documents', 'bytes', 'pending_documents'],
  properties: {
    name: { type: 'string', pattern: INDEX_NAME_PATTERN.source },
    id_field: fieldName,
    searchable_fields: { type: 'array', items: { ...searchableField, required: ['field', 'weight'] } },
    filterable_fields: { type: 'array', items: typedField('') },
    sortable_fields: { type: 'array', items: typedField('') },
    stored_fields: settingsProperties.stored_fields!,
    max_documents: { type: 'integer' },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
    documents: { type: 'integer', minimum: 0 },
    bytes: { type: 'integer', minimum: 0, description: 'What the engine stores for the index: documents, their indexed columns and full-text indexes.' },
    pending_documents: { type: 'integer', minimum: 0, description: 'Documents written but not yet in the full-text index (searchable already; typo matches and ranking statistics follow): how far indexing has caught up.' },
  },
});

const FILTER_DESCRIPTION =
  'A filter over filterable fields: `{"field": value}` (equals), `{"field": {"eq"|"ne"|"gt"|"gte"|"lt"|"lte": value}}`, ' +
  `\`{"field": {"in": [values]}}\` (1 to ${MAX_IN_VALUES}), \`{"field": {"exists": true|false}}\`, \`{"and": [filters]}\`, \`{"or": [filters]}\`, ` +
  '`{"not": filter}`; several keys in one object must all hold. Values must have the field\'s declared type; booleans take only eq, ne, in ' +
  `and exists; \`ne\` and \`not\` match documents without the field. At most ${MAX_FILTER_NODES} conditions, nested ${MAX_FILTER_DEPTH} deep.`;
const filterSchema = named('SearchFilter', { type: 'object', minProperties: 1, description: FILTER_DESCRIPTION, additionalProperties: true });

const documentSchema: Schema = { type: 'object', description: `A JSON object of at most ${MAX_DOCUMENT_BYTES / 1024} KiB, with its id in the index's \`id_field\`.` };
const writeAnswer = (extra: Record<string, Schema>) => ({
  type: 'object', required: [...Object.keys(extra), 'indexed'],
  properties: { ...extra, indexed: { type: 'boolean', description: 'With `?wait=true`: the full-text index covers the write. Otherwise false.' } },
});

const hitSchema = named('SearchHit', {
  type: 'object', required: ['id', 'score', 'document'],
  properties: {
    id: { type: 'string' },
    score: { type: 'number', description: 'BM25 summed over the searchable fields by weight (typo and prefix matches weigh 0.2 of an exact match); 0 without `q`.' },
    document: { type: 'object', description: 'The stored fields (`stored_fields`), or the whole document.' },
    highlights: { type: 'object', additionalProperties: { type: 'string' }, description: 'With `highlight`: each field\'s text, HTML-escaped, with the words that matched between the tags.' },
  },
});

const queryInput = named('SearchQuery', {
  type: 'object', additionalProperties: false,
  properties: {
    q: { type: 'string', maxLength: MAX_QUERY_BYTES, default: '', description: `The words to find (at most ${MAX_QUERY_TERMS}), split on anything but letters and digits and lower-cased; empty: every document (filtered), by \`sort\` or id.` },
    match: { enum: ['all', 'any'], default: 'all', description: '`all`: a hit holds every word (checked on each hit, however the engine ranked it); `any`: at least one.' },
    prefix: { type: 'boolean', default: true, description: 'Search as you type: the last word also matches words it begins (unless `q` ends with a space or punctuation).' },
    typo_tolerance: { type: 'boolean', default: true, description: `A word of ${ONE_TYPO_MIN_CHARS}+ characters also matches words one edit away (insert, delete, substitute), ${TWO_TYPOS_MIN_CHARS}+ two; shorter words match exactly.` },
    filter: filterSchema,
    sort: {
      type: 'array', minItems: 1, maxItems: MAX_SORT_KEYS,
      items: { oneOf: [{ type: 'string', description: '`field`, `field:asc` or `field:desc`' }, { type: 'object', required: ['field'], properties: { field: { type: 'string' }, order: { enum: ['asc', 'desc'] } } }] },
      description: `Sortable fields; documents without the field come last; ties by id. Without \`q\` over every matching document; with \`q\` over the first ${MAX_CANDIDATES} by rank.`,
    },
    facets: { type: 'array', maxItems: MAX_FACETS, items: { type: 'string' }, description: `Filterable fields to count values of, over at most the first ${MAX_FACET_DOCUMENTS} matching documents (\`exhaustive\` says whether that was all), ${MAX_FACET_VALUES} values each, most frequent first.` },
    highlight: {
      oneOf: [{ type: 'boolean' }, { type: 'object', additionalProperties: false, properties: { fields: { type: 'array', items: { type: 'string' } }, pre_tag: { type: 'string', maxLength: 64, default: '<mark>' }, post_tag: { type: 'string', maxLength: 64, default: '</mark>' } } }],
      description: 'true: every searchable field with `<mark>` tags; or which fields and tags.',
    },
    limit: { type: 'integer', minimum: 1, maximum: MAX_QUERY_LIMIT, default: DEFAULT_QUERY_LIMIT },
    cursor: { type: 'string', description: `\`next_cursor\` of the previous page of the same query. Pages reach the first ${MAX_CANDIDATES} hits of a query with \`q\`.` },
  },
});

const missing = errorBody('not_found: no such index in the caller\'s account.');
const badName = errorBody(`validation_error: the index name does not match \`${INDEX_NAME_PATTERN.source}\`.`);
const notJson = errorBody('unsupported_media_type: the body must be `application/json`.');
const jsonBody = (schema: Schema, required = true) => ({ required, content: { 'application/json': schema } });
const waitParameter = { name: 'wait', in: 'query' as const, description: 'true: answer once the full-text index covers the write too.', schema: { type: 'string', enum: ['true', 'false'], default: 'false' } };
const docId = { name: 'id', in: 'path' as const, description: `The document's id (1 to ${MAX_ID_BYTES} bytes, percent-encoded; an id with \`/\` is written with \`POST …/documents\`).`, schema: { type: 'string' } };

export const searchDocs: OperationDocs = {
  listSearchIndexes: {
    description: 'The caller\'s search indexes in name order, each with its settings and counts.',
    parameters: pageParameters('Indexes', { max: MAX_LIST_LIMIT, default: DEFAULT_LIST_LIMIT }),
    responses: { '200': pageBody('A page of indexes', 'indexes', indexSchema), '400': errorBody('validation_error: bad `limit` or cursor.') },
  },
  putSearchIndex: {
    description:
      `Creates an index (201; at most ${MAX_INDEXES_PER_ACCOUNT} an account), or updates its settings (200). Weights, \`stored_fields\` and ` +
      '`max_documents` change at once. Changing `id_field` or which fields are searchable, filterable or sortable needs every document ' +
      'indexed again: it is refused (409 `conflict`, the message naming the settings) unless the index is empty, so purge it and write ' +
      `the documents again, or make a new index. ${SCOPE}`,
    requestBody: jsonBody(named('SearchIndexInput', { type: 'object', additionalProperties: false, required: ['searchable_fields'], properties: settingsProperties })),
    responses: {
      '200': dataBody('The index, with its new settings', indexSchema),
      '201': dataBody('The new index', indexSchema),
      '400': errorBody('validation_error: bad name, unknown setting, or a setting out of range; `message` names it. Nothing changes.'),
      '409': errorBody('conflict: the change needs a rebuild and the index holds documents, or the account has its most indexes.'),
      '415': notJson,
    },
  },
  getSearchIndex: {
    description: `The index's settings, documents, bytes and \`pending_documents\` (how far indexing has caught up). ${SCOPE}`,
    responses: { '200': dataBody('The index', indexSchema), '400': badName, '404': missing },
  },
  deleteSearchIndex: {
    description: `Deletes the index; its documents are gone at once and their storage is swept. ${SCOPE}`,
    responses: { '204': { description: 'Deleted' }, '400': badName, '404': missing },
  },
  purgeSearchIndex: {
    description:
      'Removes every document and keeps the settings, at a cost that does not grow with the index: the index moves to a new, empty ' +
      'generation and the old one is swept in the background. A write in flight during the purge is purged with the rest; ' +
      `writes answered after it are kept. ${SCOPE}`,
    responses: {
      '200': { description: 'Purged', content: { 'application/json': { type: 'object', properties: { message: { type: 'string' } } } } },
      '400': badName, '404': missing,
    },
  },
  upsertSearchDocuments: {
    description:
      `Adds or replaces 1 to ${MAX_BATCH_DOCUMENTS} documents by id (a body of at most ${MAX_BATCH_BYTES / 1024 / 1024} MiB; each document at most ` +
      `${MAX_DOCUMENT_BYTES / 1024} KiB). A repeated id keeps its last document. All or nothing: a bad document stores none. ${VISIBILITY} ${SCOPE}`,
    parameters: [waitParameter],
    requestBody: jsonBody({ type: 'object', additionalProperties: false, required: ['documents'], properties: { documents: { type: 'array', minItems: 1, maxItems: MAX_BATCH_DOCUMENTS, items: documentSchema } } }),
    responses: {
      '200': dataBody('Committed', writeAnswer({ ids: { type: 'array', items: { type: 'string' }, description: 'The ids written, in order (a repeated id once).' } })),
      '400': errorBody('validation_error: not 1 to 1,000 documents, a document without a usable id, or a filterable or sortable field of another type; `message` names it (`documents[3].year`).'),
      '404': missing,
      '409': errorBody('conflict: the write would pass `max_documents`; nothing is stored.'),
      '413': errorBody('payload_too_large: a document over 64 KiB, or a body over the gateway\'s limit.'),
      '415': notJson,
    },
  },
  deleteSearchDocuments: {
    description: `Deletes documents by id (\`{"ids": [...]}\`, up to ${MAX_BATCH_DOCUMENTS}) or by filter (\`{"filter": {...}}\`, as queries take it); answers how many were deleted. ${VISIBILITY}`,
    parameters: [waitParameter],
    requestBody: jsonBody({ type: 'object', additionalProperties: false, properties: { ids: { type: 'array', minItems: 1, maxItems: MAX_BATCH_DOCUMENTS, items: { oneOf: [{ type: 'string' }, { type: 'integer' }] } }, filter: filterSchema } }),
    responses: {
      '200': dataBody('Deleted', writeAnswer({ deleted: { type: 'integer', minimum: 0 } })),
      '400': errorBody('validation_error: neither or both of `ids` and `filter`, or a bad filter; `message` names the field.'),
      '404': missing, '415': notJson,
    },
  },
  putSearchDocument: {
    description: `Adds or replaces one document; its id field is filled in from the path when absent, and must equal it when present. ${VISIBILITY} ${SCOPE}`,
    parameters: [docId, waitParameter],
    requestBody: jsonBody(documentSchema),
    responses: {
      '200': dataBody('Committed', writeAnswer({ id: { type: 'string' } })),
      '400': errorBody('validation_error: a bad id, or a field of another type than declared; `message` names it.'),
      '404': missing, '409': errorBody('conflict: the write would pass `max_documents`.'), '413': errorBody('payload_too_large: the document is over 64 KiB.'), '415': notJson,
    },
  },
  getSearchDocument: {
    description: `One document, whole, as last written. ${SCOPE}`,
    parameters: [docId],
    responses: {
      '200': dataBody('The document', { type: 'object', required: ['id', 'document'], properties: { id: { type: 'string' }, document: { type: 'object' } } }),
      '400': errorBody('validation_error: bad index name or id.'),
      '404': errorBody('not_found: no such index, or no such document.'),
    },
  },
  deleteSearchDocument: {
    description: `Deletes one document. ${VISIBILITY}`,
    parameters: [docId, waitParameter],
    responses: { '204': { description: 'Deleted' }, '400': errorBody('validation_error: bad index name or id.'), '404': errorBody('not_found: no such index, or no such document.') },
  },
  querySearchIndex: {
    description:
      'Ranked full-text search: BM25 (k1 1.2, b 0.75) per searchable field, summed by weight; words are split on anything but letters ' +
      'and digits and lower-cased, without stemming or stop words. The last word matches as a prefix and longer words within a typo ' +
      '(weighted below exact matches), `filter` narrows, `sort` orders, `facets` count and `highlight` marks the words found. ' +
      `\`total\` is exact (\`total_relation: eq\`) when fewer than ${MAX_CANDIDATES} documents match a \`q\` (always without one), else a lower bound ` +
      `(\`gte\`). \`took_ms\` is the time the function spent. Needs only the \`storage:read\` scope. ${SCOPE}`,
    requestBody: jsonBody(queryInput, false),
    responses: {
      '200': dataBody('Hits', {
        type: 'object', required: ['hits', 'total', 'total_relation', 'next_cursor', 'took_ms'],
        properties: {
          hits: { type: 'array', items: hitSchema },
          total: { type: 'integer', minimum: 0 },
          total_relation: { enum: ['eq', 'gte'] },
          facets: { type: 'object', additionalProperties: { type: 'object', required: ['values', 'exhaustive'], properties: { values: { type: 'array', items: { type: 'object', required: ['value', 'count'], properties: { value: { oneOf: [{ type: 'string' }, { type: 'number' }, { type: 'boolean' }] }, count: { type: 'integer' } } } }, exhaustive: { type: 'boolean' } } } },
          next_cursor: { type: ['string', 'null'] },
          took_ms: { type: 'integer', minimum: 0 },
        },
      }),
      '400': errorBody('validation_error: an unknown field, a field that is not searchable, filterable or sortable as used, a value of another type, or a cursor of another query; `message` names it (`filter.year.gte`).'),
      '404': missing,
      '415': notJson,
    },
  },
};
