/**
 * Sizes and bounds of search indexes, each named with its unit. Index names follow the KV buckets'
 * rules (`../kv/limits.ts`), so an index, a bucket and a stream are named alike.
 */
export { BUCKET_NAME_PATTERN as INDEX_NAME_PATTERN } from '../kv/limits.js';

/** A field name: a top-level key, or a dotted path to a nested one (`author.name`). */
export const FIELD_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]{0,63}(?:\.[A-Za-z_][A-Za-z0-9_]{0,63}){0,3}$/;
/** Fields of each kind in one index's settings. */
export const MAX_SEARCHABLE_FIELDS = 16;
export const MAX_FILTERABLE_FIELDS = 32;
/** A searchable field's weight: multiplies its BM25 score. */
export const MIN_FIELD_WEIGHT = 0.1;
export const MAX_FIELD_WEIGHT = 100;

/** A document id: 1 to 256 UTF-8 bytes of printable text. */
export const MAX_ID_BYTES = 256;
/** One document as JSON text. */
export const MAX_DOCUMENT_BYTES = 64 * 1024;
/** One batch upsert: documents and bytes of body (within Lambda's 6 MB invocation payload). */
export const MAX_BATCH_DOCUMENTS = 1000;
export const MAX_BATCH_BYTES = 5 * 1024 * 1024;
/** `max_documents`: the default and the ceiling of one index. */
export const DEFAULT_MAX_DOCUMENTS = 1_000_000;
export const MAX_MAX_DOCUMENTS = 10_000_000;
/** Indexes per account. */
export const MAX_INDEXES_PER_ACCOUNT = 100;

/** Query text: bytes and terms. */
export const MAX_QUERY_BYTES = 512;
export const MAX_QUERY_TERMS = 16;
/**
 * Ranked candidates a query reads at most: hits beyond them are not reachable by cursor, and
 * `sort` with a `q` orders only these (as Meilisearch's `maxTotalHits` and Algolia's
 * `paginationLimitedTo`, both 1,000 by default).
 */
export const MAX_CANDIDATES = 1000;
/** Facet counts are taken over at most this many matching documents (the first by rank or sort). */
export const MAX_FACET_DOCUMENTS = 1000;
/** Values answered per facet, most frequent first. */
export const MAX_FACET_VALUES = 100;
export const MAX_FACETS = 10;
/** Hits per page. */
export const DEFAULT_QUERY_LIMIT = 20;
export const MAX_QUERY_LIMIT = 100;
/** Sort keys in one query. */
export const MAX_SORT_KEYS = 3;
/** Filter nodes (comparisons and `and`/`or`/`not`) and nesting depth; values in one `in`. */
export const MAX_FILTER_NODES = 64;
export const MAX_FILTER_DEPTH = 8;
export const MAX_IN_VALUES = 100;
/** A filter's string value. */
export const MAX_FILTER_STRING_BYTES = 1024;

/**
 * Typo tolerance: a query word of at least this many characters also matches words one edit away
 * (insert, delete, substitute; a swap of two letters is two edits), and two edits from the second
 * length on. Shorter words must match exactly: a one-letter change of a short word is usually another word.
 */
export const ONE_TYPO_MIN_CHARS = 5;
export const TWO_TYPOS_MIN_CHARS = 9;
/** Prefix search: the last query word matches words starting with it, from this many characters. */
export const MIN_PREFIX_CHARS = 1;
/** Edge n-grams are indexed up to this length; a longer last word is looked up by its first this-many characters, then checked in full. */
export const MAX_PREFIX_CHARS = 15;

/** Index listing. */
export const DEFAULT_LIST_LIMIT = 100;
export const MAX_LIST_LIMIT = 100;

/**
 * Writes are found by queries as soon as they are answered (a query reads the committed version,
 * rows not yet in the full-text index searched flat); typo matches and ranking statistics cover a
 * write once maintenance has taken it in: at most one job per index per window of this many
 * seconds, run after the window ends (the maintenance queue's delay), so within this bound plus
 * the job's run.
 */
export const MAINTENANCE_WINDOW_SECONDS = 10;

/**
 * Deployed, how long a function may serve a table version (and an index's catalog record) before
 * checking for newer commits: a write made in another function environment is seen within this
 * bound. A check costs two commit-table queries (docs/search.md); the local stack, one process, checks on every read (0).
 */
export const DEPLOYED_READ_CONSISTENCY_SECONDS = 1;
/** `?wait=true` on a write waits at most this long for the indexer. */
export const MAX_WAIT_INDEXED_MS = 20_000;
