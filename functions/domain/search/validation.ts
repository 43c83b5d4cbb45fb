/**
 * Validation of everything a caller sends to a search index: names, settings, documents, queries
 * and filters. Each refusal is a 400 `validation_error` whose message names the field at fault.
 */
import { AppError } from '../../shared/errors.js';
import { isPlainObject } from '../../shared/json.js';
import {
  DEFAULT_MAX_DOCUMENTS, DEFAULT_QUERY_LIMIT, FIELD_NAME_PATTERN, INDEX_NAME_PATTERN, MAX_BATCH_DOCUMENTS, MAX_DOCUMENT_BYTES, MAX_FACETS,
  MAX_FIELD_WEIGHT, MAX_FILTER_DEPTH, MAX_FILTER_NODES, MAX_FILTER_STRING_BYTES, MAX_FILTERABLE_FIELDS, MAX_ID_BYTES, MAX_IN_VALUES,
  MAX_MAX_DOCUMENTS, MAX_QUERY_BYTES, MAX_QUERY_LIMIT, MAX_QUERY_TERMS, MAX_SEARCHABLE_FIELDS, MAX_SORT_KEYS, MIN_FIELD_WEIGHT,
} from './limits.js';
import { tokenize, valueAt } from './text.js';
import type { FieldType, Filter, IndexSettings, Scalar, SearchPlan, SortKey, StoredDocument } from './types.js';

export const invalid = (message: string) => new AppError('validation_error', message, undefined, message);

const FIELD_TYPES: readonly FieldType[] = ['string', 'number', 'boolean'];
const bytes = (text: string) => Buffer.byteLength(text, 'utf8');

function onlyFields(body: Record<string, unknown>, fields: readonly string[], where = ''): void {
  const unknown = Object.keys(body).filter((field) => !fields.includes(field));
  if (unknown.length > 0) throw invalid(`unknown field${unknown.length > 1 ? 's' : ''} ${unknown.map((f) => where + f).join(', ')}; known: ${fields.join(', ')}`);
}

export function validateIndexName(name: string): string {
  if (!INDEX_NAME_PATTERN.test(name)) throw invalid('index names are 1-64 letters, digits, _ or -');
  return name;
}

/** A document id in a path: 1 to MAX_ID_BYTES bytes without control characters. */
export function validateDocumentId(id: string, where = 'id'): string {
  // eslint-disable-next-line no-control-regex
  if (id.length === 0 || bytes(id) > MAX_ID_BYTES || /[\u0000-\u001f\u007f]/.test(id)) {
    throw invalid(`${where} must be 1 to ${MAX_ID_BYTES} bytes of text without control characters`);
  }
  return id;
}

function fieldName(value: unknown, where: string): string {
  if (typeof value !== 'string' || !FIELD_NAME_PATTERN.test(value)) {
    throw invalid(`${where} must be a field name (letters, digits and _, not starting with a digit; up to 4 parts joined by dots)`);
  }
  return value;
}

function typedFields(value: unknown, where: string, max: number): { field: string; type: FieldType }[] {
  if (value === undefined) return [];
  if (!Array.isArray(value) || value.length > max) throw invalid(`${where} must be a list of at most ${max} {"field", "type"} objects`);
  const fields = value.map((item, i) => {
    const at = `${where}[${i}]`;
    if (!isPlainObject(item)) throw invalid(`${at} must be an object {"field", "type"}`);
    onlyFields(item, ['field', 'type'], `${at}.`);
    const type = item.type;
    if (typeof type !== 'string' || !FIELD_TYPES.includes(type as FieldType)) throw invalid(`${at}.type must be one of ${FIELD_TYPES.join(', ')}`);
    return { field: fieldName(item.field, `${at}.field`), type: type as FieldType };
  });
  unique(fields.map((f) => f.field), where);
  return fields;
}

function unique(names: string[], where: string): void {
  const seen = new Set<string>();
  for (const name of names) {
    if (seen.has(name)) throw invalid(`${where} names ${name} twice`);
    seen.add(name);
  }
}

const SETTINGS_FIELDS = ['id_field', 'searchable_fields', 'filterable_fields', 'sortable_fields', 'stored_fields', 'max_documents'];

/** An index's settings from `PUT /storage/search/{index}`'s body. */
export function parseIndexSettings(body: Record<string, unknown>): IndexSettings {
  onlyFields(body, SETTINGS_FIELDS);
  const idField = body.id_field === undefined ? 'id' : fieldName(body.id_field, 'id_field');
  const rawSearchable = body.searchable_fields;
  if (!Array.isArray(rawSearchable) || rawSearchable.length === 0 || rawSearchable.length > MAX_SEARCHABLE_FIELDS) {
    throw invalid(`searchable_fields must be a list of 1 to ${MAX_SEARCHABLE_FIELDS} field names or {"field", "weight"} objects`);
  }
  const searchable = rawSearchable.map((item, i) => {
    const at = `searchable_fields[${i}]`;
    if (typeof item === 'string') return { field: fieldName(item, at), weight: 1 };
    if (!isPlainObject(item)) throw invalid(`${at} must be a field name or {"field", "weight"}`);
    onlyFields(item, ['field', 'weight'], `${at}.`);
    const weight = item.weight === undefined ? 1 : item.weight;
    if (typeof weight !== 'number' || !Number.isFinite(weight) || weight < MIN_FIELD_WEIGHT || weight > MAX_FIELD_WEIGHT) {
      throw invalid(`${at}.weight must be a number from ${MIN_FIELD_WEIGHT} to ${MAX_FIELD_WEIGHT}`);
    }
    return { field: fieldName(item.field, `${at}.field`), weight };
  });
  unique(searchable.map((s) => s.field), 'searchable_fields');
  const filterable = typedFields(body.filterable_fields, 'filterable_fields', MAX_FILTERABLE_FIELDS);
  const sortable = typedFields(body.sortable_fields, 'sortable_fields', MAX_FILTERABLE_FIELDS);
  for (const [i, s] of sortable.entries()) {
    const same = filterable.find((f) => f.field === s.field);
    if (same && same.type !== s.type) throw invalid(`sortable_fields[${i}].type must be ${same.type}, as filterable_fields has ${s.field}`);
  }
  let stored: string[] | null = null;
  if (body.stored_fields !== undefined && body.stored_fields !== null) {
    if (!Array.isArray(body.stored_fields) || body.stored_fields.length > 64) throw invalid('stored_fields must be null (the whole document) or a list of at most 64 field names');
    stored = body.stored_fields.map((f, i) => fieldName(f, `stored_fields[${i}]`));
    unique(stored, 'stored_fields');
  }
  const maxDocuments = body.max_documents === undefined ? DEFAULT_MAX_DOCUMENTS : body.max_documents;
  if (!Number.isSafeInteger(maxDocuments) || (maxDocuments as number) < 1 || (maxDocuments as number) > MAX_MAX_DOCUMENTS) {
    throw invalid(`max_documents must be a whole number from 1 to ${MAX_MAX_DOCUMENTS}`);
  }
  return { idField, searchable, filterable, sortable, stored, maxDocuments: maxDocuments as number };
}

/**
 * What changes between two settings: `rebuild` lists the settings whose change would need every
 * document indexed again (the fields that make up the engine's columns); the rest (weights, stored
 * fields, max_documents) apply at once.
 */
export function settingsChanges(from: IndexSettings, to: IndexSettings): { rebuild: string[] } {
  const rebuild: string[] = [];
  if (from.idField !== to.idField) rebuild.push('id_field');
  const names = (list: { field: string }[]) => JSON.stringify(list.map((f) => f.field));
  const typed = (list: { field: string; type: FieldType }[]) => JSON.stringify(list);
  if (names(from.searchable) !== names(to.searchable)) rebuild.push('searchable_fields');
  if (typed(from.filterable) !== typed(to.filterable)) rebuild.push('filterable_fields');
  if (typed(from.sortable) !== typed(to.sortable)) rebuild.push('sortable_fields');
  return { rebuild };
}

/** A document's id from its id field: a string, or an integer taken as its decimal text. */
export function documentIdOf(doc: Record<string, unknown>, settings: IndexSettings, where: string): string {
  const value = valueAt(doc, settings.idField);
  if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value);
  if (typeof value !== 'string') throw invalid(`${where}.${settings.idField} (the id field) must be a string or an integer`);
  return validateDocumentId(value, `${where}.${settings.idField}`);
}

function checkDocument(doc: unknown, settings: IndexSettings, where: string): StoredDocument {
  if (!isPlainObject(doc)) throw invalid(`${where} must be a JSON object`);
  if (bytes(JSON.stringify(doc)) > MAX_DOCUMENT_BYTES) throw new AppError('payload_too_large', `${where} too large`, undefined, `${where} is over ${MAX_DOCUMENT_BYTES} bytes as JSON`);
  for (const { field, type } of [...settings.filterable, ...settings.sortable]) {
    const value = valueAt(doc, field);
    if (value !== undefined && value !== null && !isOfType(value, type)) throw invalid(`${where}.${field} must be a ${type} (or null), as the index's settings declare it`);
  }
  return { id: documentIdOf(doc, settings, where), doc };
}

const isOfType = (value: unknown, type: FieldType) =>
  type === 'number' ? typeof value === 'number' && Number.isFinite(value) : typeof value === type;

/** `PUT …/documents/{id}`: the document must carry the id of its path (or none, which is filled in). */
export function parseDocumentAt(id: string, body: Record<string, unknown>, settings: IndexSettings): StoredDocument {
  validateDocumentId(id);
  const current = valueAt(body, settings.idField);
  if (current === undefined && !settings.idField.includes('.')) return checkDocument({ ...body, [settings.idField]: id }, settings, 'body');
  const doc = checkDocument(body, settings, 'body');
  if (doc.id !== id) throw invalid(`body.${settings.idField} must be the id in the path (${JSON.stringify(id)}) or absent`);
  return doc;
}

/** `POST …/documents`: `{"documents": [...]}`, 1 to MAX_BATCH_DOCUMENTS; a repeated id keeps the last. */
export function parseDocumentBatch(body: Record<string, unknown>, settings: IndexSettings): StoredDocument[] {
  onlyFields(body, ['documents']);
  const docs = body.documents;
  if (!Array.isArray(docs) || docs.length === 0 || docs.length > MAX_BATCH_DOCUMENTS) throw invalid(`documents must be a list of 1 to ${MAX_BATCH_DOCUMENTS} objects`);
  const byId = new Map<string, StoredDocument>();
  docs.forEach((doc, i) => {
    const checked = checkDocument(doc, settings, `documents[${i}]`);
    byId.delete(checked.id);
    byId.set(checked.id, checked);
  });
  return [...byId.values()];
}

/** `POST …/documents/delete`: `{"ids": [...]}` or `{"filter": {...}}`. */
export function parseDeleteBody(body: Record<string, unknown>, settings: IndexSettings): { ids: string[] } | { filter: Filter } {
  onlyFields(body, ['ids', 'filter']);
  if ((body.ids === undefined) === (body.filter === undefined)) throw invalid('give exactly one of ids and filter');
  if (body.filter !== undefined) return { filter: parseFilter(body.filter, settings) };
  if (!Array.isArray(body.ids) || body.ids.length === 0 || body.ids.length > MAX_BATCH_DOCUMENTS) throw invalid(`ids must be a list of 1 to ${MAX_BATCH_DOCUMENTS} document ids`);
  return { ids: body.ids.map((id, i) => (typeof id === 'number' && Number.isSafeInteger(id) ? String(id) : validateDocumentId(typeof id === 'string' ? id : '', `ids[${i}]`))) };
}

const COMPARISONS = ['eq', 'ne', 'gt', 'gte', 'lt', 'lte'] as const;
const OPERATORS = [...COMPARISONS, 'in', 'exists'];

/**
 * A filter: `{"field": value}` (equals), `{"field": {"gte": 1, "lt": 5}}`, `{"field": {"in": [...]}}`,
 * `{"field": {"exists": true}}`, `{"and": [...]}`, `{"or": [...]}`, `{"not": {...}}`; several keys
 * in one object all hold. Fields must be filterable, values of their declared type.
 */
export function parseFilter(value: unknown, settings: IndexSettings): Filter {
  let nodes = 0;
  const fieldType = new Map(settings.filterable.map((f) => [f.field, f.type]));
  const scalar = (v: unknown, type: FieldType, where: string): Scalar => {
    if (!isOfType(v, type)) throw invalid(`${where} must be a ${type}, as the field is declared`);
    if (typeof v === 'string' && bytes(v) > MAX_FILTER_STRING_BYTES) throw invalid(`${where} is over ${MAX_FILTER_STRING_BYTES} bytes`);
    return v as Scalar;
  };
  const walk = (node: unknown, where: string, depth: number): Filter => {
    if (++nodes > MAX_FILTER_NODES) throw invalid(`filter has over ${MAX_FILTER_NODES} conditions`);
    if (depth > MAX_FILTER_DEPTH) throw invalid(`${where} nests deeper than ${MAX_FILTER_DEPTH}`);
    if (!isPlainObject(node) || Object.keys(node).length === 0) throw invalid(`${where} must be a non-empty object`);
    const parts: Filter[] = [];
    for (const [key, v] of Object.entries(node)) {
      const at = `${where}.${key}`;
      if (key === 'and' || key === 'or') {
        if (!Array.isArray(v) || v.length === 0) throw invalid(`${at} must be a non-empty list of filters`);
        parts.push({ kind: key, of: v.map((item, i) => walk(item, `${at}[${i}]`, depth + 1)) });
        continue;
      }
      if (key === 'not') {
        parts.push({ kind: 'not', of: walk(v, at, depth + 1) });
        continue;
      }
      const type = fieldType.get(key);
      if (!type) throw invalid(`${at}: ${key} is not a filterable field of this index (filterable: ${[...fieldType.keys()].join(', ') || 'none'})`);
      if (!isPlainObject(v)) {
        parts.push({ kind: 'compare', field: key, op: 'eq', value: scalar(v, type, at) });
        continue;
      }
      if (Object.keys(v).length === 0) throw invalid(`${at} must name an operator: ${OPERATORS.join(', ')}`);
      for (const [op, operand] of Object.entries(v)) {
        const opAt = `${at}.${op}`;
        if (op === 'in') {
          if (!Array.isArray(operand) || operand.length === 0 || operand.length > MAX_IN_VALUES) throw invalid(`${opAt} must be a list of 1 to ${MAX_IN_VALUES} values`);
          parts.push({ kind: 'in', field: key, values: operand.map((item, i) => scalar(item, type, `${opAt}[${i}]`)) });
        } else if (op === 'exists') {
          if (typeof operand !== 'boolean') throw invalid(`${opAt} must be true or false`);
          parts.push({ kind: 'exists', field: key, exists: operand });
        } else if ((COMPARISONS as readonly string[]).includes(op)) {
          if (type === 'boolean' && op !== 'eq' && op !== 'ne') throw invalid(`${opAt}: a boolean field takes only eq, ne, in and exists`);
          parts.push({ kind: 'compare', field: key, op: op as (typeof COMPARISONS)[number], value: scalar(operand, type, opAt) });
        } else {
          throw invalid(`${opAt}: unknown operator; known: ${OPERATORS.join(', ')}`);
        }
      }
    }
    return parts.length === 1 ? parts[0]! : { kind: 'and', of: parts };
  };
  return walk(value, 'filter', 1);
}

/** A query as `POST …/query` takes it, validated against the index's settings. */
export interface QueryInput extends Omit<SearchPlan, 'candidates'> {
  q: string;
  facets: string[];
  highlight?: { fields: string[]; pre: string; post: string };
  limit: number;
  cursor?: string;
}

const QUERY_FIELDS = ['q', 'match', 'prefix', 'typo_tolerance', 'filter', 'sort', 'facets', 'highlight', 'limit', 'cursor'];

export function parseQuery(body: Record<string, unknown>, settings: IndexSettings): QueryInput {
  onlyFields(body, QUERY_FIELDS);
  const q = body.q === undefined ? '' : body.q;
  if (typeof q !== 'string' || bytes(q) > MAX_QUERY_BYTES) throw invalid(`q must be text of at most ${MAX_QUERY_BYTES} bytes`);
  const words = tokenize(q);
  if (words.length > MAX_QUERY_TERMS) throw invalid(`q has ${words.length} words; at most ${MAX_QUERY_TERMS}`);
  const match = body.match === undefined ? 'all' : body.match;
  if (match !== 'all' && match !== 'any') throw invalid('match must be all or any');
  const flag = (name: string, fallback: boolean): boolean => {
    const v = body[name];
    if (v === undefined) return fallback;
    if (typeof v !== 'boolean') throw invalid(`${name} must be true or false`);
    return v;
  };
  // Search as you type: the last word is a prefix unless the text ends with a separator (the word is complete).
  const prefix = flag('prefix', true) && !/[^\p{L}\p{M}\p{N}]$/u.test(q);
  const typos = flag('typo_tolerance', true);
  const filter = body.filter === undefined ? undefined : parseFilter(body.filter, settings);
  let sort: SortKey[] | undefined;
  if (body.sort !== undefined) {
    if (!Array.isArray(body.sort) || body.sort.length === 0 || body.sort.length > MAX_SORT_KEYS) throw invalid(`sort must be a list of 1 to ${MAX_SORT_KEYS} keys`);
    const sortable = new Set(settings.sortable.map((s) => s.field));
    sort = body.sort.map((key, i) => {
      const at = `sort[${i}]`;
      const [field, order = 'asc'] = typeof key === 'string' ? key.split(':') : isPlainObject(key) ? [key.field, key.order ?? 'asc'] : [];
      if (typeof field !== 'string' || !sortable.has(field)) throw invalid(`${at}: ${String(field)} is not a sortable field of this index (sortable: ${[...sortable].join(', ') || 'none'})`);
      if (order !== 'asc' && order !== 'desc') throw invalid(`${at}: order must be asc or desc`);
      return { field, order };
    });
  }
  let facets: string[] = [];
  if (body.facets !== undefined) {
    const filterable = new Set(settings.filterable.map((f) => f.field));
    if (!Array.isArray(body.facets) || body.facets.length > MAX_FACETS) throw invalid(`facets must be a list of at most ${MAX_FACETS} filterable fields`);
    facets = body.facets.map((f, i) => {
      if (typeof f !== 'string' || !filterable.has(f)) throw invalid(`facets[${i}]: ${String(f)} is not a filterable field of this index`);
      return f;
    });
  }
  let highlight: QueryInput['highlight'];
  const searchable = settings.searchable.map((s) => s.field);
  if (body.highlight === true) highlight = { fields: searchable, pre: '<mark>', post: '</mark>' };
  else if (isPlainObject(body.highlight)) {
    const h = body.highlight;
    onlyFields(h, ['fields', 'pre_tag', 'post_tag'], 'highlight.');
    const fields = h.fields === undefined ? searchable : h.fields;
    if (!Array.isArray(fields) || fields.some((f) => typeof f !== 'string' || !searchable.includes(f))) throw invalid('highlight.fields must list searchable fields');
    const tag = (v: unknown, fallback: string, name: string) => {
      if (v === undefined) return fallback;
      if (typeof v !== 'string' || v.length > 64) throw invalid(`highlight.${name} must be text of at most 64 characters`);
      return v;
    };
    highlight = { fields: fields as string[], pre: tag(h.pre_tag, '<mark>', 'pre_tag'), post: tag(h.post_tag, '</mark>', 'post_tag') };
  } else if (body.highlight !== undefined && body.highlight !== false) throw invalid('highlight must be true, false or {"fields", "pre_tag", "post_tag"}');
  const limit = body.limit === undefined ? DEFAULT_QUERY_LIMIT : body.limit;
  if (!Number.isSafeInteger(limit) || (limit as number) < 1 || (limit as number) > MAX_QUERY_LIMIT) throw invalid(`limit must be a whole number from 1 to ${MAX_QUERY_LIMIT}`);
  if (body.cursor !== undefined && (typeof body.cursor !== 'string' || body.cursor.length > 4096)) throw invalid('cursor must be the next_cursor of a previous answer');
  return {
    q, words, match, prefix, typos, facets, limit: limit as number,
    ...(filter && { filter }), ...(sort && { sort }), ...(highlight && { highlight }), ...(body.cursor !== undefined && { cursor: body.cursor as string }),
  };
}
