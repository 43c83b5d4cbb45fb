/** What a search index is made of, and the port its engine implements. */

/** The type of a filterable or sortable field's values. */
export type FieldType = 'string' | 'number' | 'boolean';

/** An index's settings as the caller gives them (`PUT /storage/search/{index}`). */
export interface IndexSettings {
  /** The document field holding its id (string or integer). */
  idField: string;
  /** Fields whose text is searched, each with its weight (multiplies its BM25 score). */
  searchable: { field: string; weight: number }[];
  /** Fields `filter` and `facets` may name, with their types. */
  filterable: { field: string; type: FieldType }[];
  /** Fields `sort` may name, with their types. */
  sortable: { field: string; type: FieldType }[];
  /** Fields hits carry; null: the whole document. */
  stored: string[] | null;
  maxDocuments: number;
}

export interface IndexRef {
  accountId: string;
  name: string;
}

/** An index as the catalog keeps it. `generation` changes on each purge; the old one's data is swept. */
export interface IndexRecord extends IndexRef {
  settings: IndexSettings;
  generation: number;
  createdAt: string;
  updatedAt: string;
}

/** Counts of an index's current generation. */
export interface IndexStats {
  documents: number;
  bytes: number;
  /** Documents written but not yet in the full-text index (searchable already; typo matches and ranking statistics follow). */
  pendingDocuments: number;
}

/** A stored document with its id (as text). */
export interface StoredDocument {
  id: string;
  doc: Record<string, unknown>;
}

export type Scalar = string | number | boolean;

/** A filter over filterable fields, validated against the index's settings. */
export type Filter =
  | { kind: 'and'; of: Filter[] }
  | { kind: 'or'; of: Filter[] }
  | { kind: 'not'; of: Filter }
  | { kind: 'compare'; field: string; op: 'eq' | 'ne' | 'gt' | 'gte' | 'lt' | 'lte'; value: Scalar }
  | { kind: 'in'; field: string; values: Scalar[] }
  | { kind: 'exists'; field: string; exists: boolean };

/** A document's place in a browse's order: its sort fields' values (null when absent), then its id. */
export type OrderKey = (string | number | boolean | null)[];

export interface SortKey {
  field: string;
  order: 'asc' | 'desc';
}

/** What a query asks the engine for: candidates in rank (or sort) order, at most `candidates`. */
export interface SearchPlan {
  /** Query words, lower-cased; empty: every document (filtered), in sort or id order. */
  words: string[];
  /** `all`: a hit holds every word; `any`: at least one. */
  match: 'all' | 'any';
  prefix: boolean;
  typos: boolean;
  filter?: Filter;
  /** Given only with no words: the engine orders every matching document by these, then by id. */
  sort?: SortKey[];
  /**
   * Given only with no words: the order key (the sort fields' values, then the id) of the last hit
   * of the previous page; the engine answers the documents after it (keyset paging).
   */
  after?: OrderKey;
  candidates: number;
}

export interface Candidate extends StoredDocument {
  /** BM25 (summed over fields by weight); 0 without words. */
  score: number;
}

export interface SearchResult {
  candidates: Candidate[];
  /** Matching documents: exact when `exact`, else at least this many. */
  total: number;
  exact: boolean;
}

/**
 * Where indexes and their documents live: the catalog of each account's indexes and one table
 * per index generation. One adapter per engine (`functions/adapters/lance/`).
 */
export interface SearchEngine {
  listIndexes(accountId: string, page: { limit: number; after?: string }): Promise<IndexRecord[]>;
  countIndexes(accountId: string): Promise<number>;
  getIndex(ref: IndexRef): Promise<IndexRecord | undefined>;
  /** Writes the record (new, or settings changed) and makes its generation's table when new. */
  saveIndex(record: IndexRecord, options: { isNew: boolean }): Promise<void>;
  /** Removes the record; its data is swept. false when there was none. */
  deleteIndex(ref: IndexRef): Promise<boolean>;
  /** Moves the index to `record.generation + 1` with an empty table; the old one is swept. */
  purgeIndex(record: IndexRecord, now: string): Promise<IndexRecord>;
  stats(record: IndexRecord): Promise<IndexStats>;
  /** Adds or replaces documents by id; answers once committed. Throws `conflict` past `maxDocuments`. */
  upsert(record: IndexRecord, docs: StoredDocument[]): Promise<void>;
  getDocument(record: IndexRecord, id: string): Promise<StoredDocument | undefined>;
  /** Deletes by id; answers how many existed. */
  deleteDocuments(record: IndexRecord, ids: string[]): Promise<number>;
  /** Deletes what `filter` matches; answers how many. */
  deleteWhere(record: IndexRecord, filter: Filter): Promise<number>;
  search(record: IndexRecord, plan: SearchPlan): Promise<SearchResult>;
  /** Waits until the full-text index covers every committed document; false past `timeoutMs`. */
  waitIndexed(record: IndexRecord, timeoutMs: number): Promise<boolean>;
  /** Brings the full-text index up to date with the generation's table (build, or add what was written since, and compact). */
  indexNow(record: IndexRecord): Promise<void>;
  /** Drops the index's tables of generations its catalog record no longer names (all of them once it is deleted); answers those dropped. */
  sweep(ref: IndexRef): Promise<string[]>;
}

/**
 * Background work on one index: `index` brings its full-text index up to date with a generation's
 * writes; `sweep` drops its generations no longer current (after a purge, or its deletion).
 */
export interface MaintenanceJob extends IndexRef {
  generation: number;
  kind: 'index' | 'sweep';
}

/**
 * The port to the maintenance queue (`SqsSearchMaintenance`): a job is debounced there (at most one
 * per index, kind and generation in a window) and runs after every write of its window.
 */
export interface SearchMaintenance {
  schedule(job: MaintenanceJob): Promise<void>;
}
