/**
 * Search indexes on LanceDB (https://lancedb.com), embedded in the process: locally its tables are
 * files in the data directory; deployed, objects on S3 with commits serialized through a DynamoDB
 * table (`s3+ddb://bucket/prefix?ddbTableName=…`). One table holds the catalog of every account's
 * indexes; each index generation is a table of its own, so a purge is a new, empty table and the
 * old one is dropped by the sweep.
 *
 * The engine's defects handled here, each shown by `test/handlers/search-engine.test.ts`:
 * - lancedb#3568: the full-text index build hangs on ≤ 2 CPUs unless LANCE_CPU_THREADS is set
 *   (`engine-environment.ts` sets it before the module loads).
 * - All terms: the engine's AND operator (`MatchQuery` with `operator: AND`) holds rows without one
 *   of the words after writes. Rows not yet in the full-text index are searched flat without the
 *   operator (lance's FlatMatchQueryExec, the flat search of lance-format/lance#3014; no issue of its
 *   own yet), and an index partition lacking a word answers with the others, which also drops a word
 *   the index has never seen (lance-format/lance#7385, fixed after the lance 8.0.0 of LanceDB 0.31.0).
 *   That operator is not used here: a query is one MUST clause per word, which holds on indexed and
 *   unindexed rows alike.
 * - Its tokenizer ends a word at a combining mark (tantivy's SimpleTokenizer, `char::is_alphanumeric`:
 *   a decomposed "café" is its "cafe"), where the gateway keeps the mark in the word, so its hits for
 *   "café" include "cafe". Every candidate is checked here against its own words (`holdsEveryWord`),
 *   so a hit always holds every query word, whatever the engine matched.
 * - No per-word prefix search: each document's words are also indexed as edge n-grams (column `p`),
 *   so the query's last word is looked up there.
 * - lance#5290: ordering by a column the query does not select fails; a browse selects its order's
 *   columns (and reads the documents by id after the engine's top-k).
 * - Fuzzy (typo) matching sees only rows already in the full-text index: exact and prefix matches
 *   see every committed row at once (rows not yet indexed are searched flat); typo matches follow
 *   once maintenance (`indexNow`, run by the search maintenance queue) has caught up.
 * - Until a table's first full-text index is built, the engine searches rows flat with a tokenizer
 *   that does not lower-case (no upstream issue names it; downstream, ModernRelay/omnigraph#747);
 *   its index drops words of 64 bytes or more, in documents and queries alike; and a typo match of a
 *   long word fails the query (BurntSushi/fst#83). The searchable columns hold the document's words
 *   as the gateway tokenizes them (lower-cased), each cut to its first 32 bytes (`engineWord`), and
 *   each query word is cut the same way, so a word is found alike with or without the index, at any
 *   length; the full words are compared by the check of every hit
 *   (`test/handlers/search-engine-words.test.ts`).
 */
import { createHash } from 'node:crypto';
import type { Connection, FullTextQuery, Table } from '@lancedb/lancedb';
import { AppError } from '../../shared/errors.js';
import { MAX_PREFIX_CHARS } from '../../domain/search/limits.js';
import { edgeGrams, fieldText, holdsEveryWord, tokenize, typosAllowed, valueAt, wordMatches } from '../../domain/search/text.js';
import type {
  Candidate, FieldType, Filter, IndexRecord, IndexRef, IndexSettings, IndexStats, OrderKey, Scalar, SearchEngine, SearchPlan, SearchResult, StoredDocument,
} from '../../domain/search/types.js';
import { loadLance } from './engine-environment.js';

type Lance = Awaited<ReturnType<typeof loadLance>>;
type Arrow = typeof import('apache-arrow');

const CATALOG = 'flowgate_catalog';
const TABLE_PREFIX = 'ix_';
/** Weight of a typo match and of a prefix match beside an exact one: found, but ranked below. */
const TYPO_BOOST = 0.2;
const PREFIX_BOOST = 0.2;
/** Runs of maintenance preempted by concurrent writes before the job fails (and the queue retries it). */
const MAINTENANCE_ATTEMPTS = 8;
/** The engine's refusal of a commit that a concurrent one preempted, which it says may be tried again. */
export const isRetryableConflict = (error: unknown) => error instanceof Error && /Retryable commit conflict/i.test(error.message);
/** Terms a fuzzy word expands to at most (the engine's default is 50). */
const FUZZY_EXPANSIONS = 20;
/**
 * The full-text index's `maxTokenLength`: it keeps words shorter than this many UTF-8 bytes and
 * drops the others, in documents and in queries (tantivy's RemoveLongFilter keeps `length < limit`).
 */
const MAX_TOKEN_BYTES = 64;
/**
 * Bytes of a word the engine is given at most (`engineWord`): below `MAX_TOKEN_BYTES`, and short
 * enough that the automaton of a typo match (the fst crate's Levenshtein DFA, which refuses more
 * than 10,000 states, BurntSushi/fst#83, so the query fails) always builds at two edits: a 48-byte
 * word of a repeated pattern (`abcabc…`) already exceeds it, none of 44 bytes or fewer did in
 * trials (2026-11-28), and the test tries such words (`test/handlers/search-engine-words.test.ts`).
 */
const ENGINE_WORD_BYTES = 32;

/**
 * A word as the engine is given it, in a document's searchable column and in a query: its first
 * characters within `ENGINE_WORD_BYTES` bytes (32 ASCII letters, 10 CJK characters). Words alike in
 * those bytes are one to the engine; the check of each hit against its full words tells them apart.
 * The n-gram column's prefixes (at most 15 characters, 60 bytes, never fuzzy) need no cut.
 */
export function engineWord(word: string): string {
  // At most 3 bytes per UTF-16 unit.
  if (word.length * 3 <= ENGINE_WORD_BYTES || Buffer.byteLength(word) <= ENGINE_WORD_BYTES) return word;
  let bytes = 0;
  let end = 0;
  for (const char of word) {
    const code = char.codePointAt(0)!;
    bytes += code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
    if (bytes > ENGINE_WORD_BYTES) break;
    end += char.length;
  }
  return word.slice(0, end);
}

export interface LanceSearchEngineOptions {
  /** A directory, or `s3+ddb://bucket/prefix?ddbTableName=…`. */
  uri: string;
  /** Passed to the engine's object store (S3 endpoint, credentials, region) for an `s3+ddb://` uri. */
  storageOptions?: Record<string, string>;
  /**
   * Seconds a reader may serve a table version before checking for a newer one: 0 (every read
   * checks) in one process; deployed, other functions' writes are seen within this bound.
   */
  readConsistencySeconds?: number;
}

/**
 * Indexes of at most this many documents are loaded into memory whole on their first query: at this
 * bound (documents of ~650 bytes, two searchable fields and the n-grams) the process held 138 MB
 * more after it, of the function's 2,048 MB (local files, 2026-11-28; docs/search.md).
 */
const PREWARM_MAX_DOCUMENTS = 100_000;
/** Catalog records a warm engine keeps at most (a few hundred bytes each). */
const MAX_REMEMBERED_RECORDS = 1000;
const recordKey = (ref: IndexRef) => `${ref.accountId}\n${ref.name}`;

const sqlString = (value: string) => `'${value.replaceAll("'", "''")}'`;
/** Booleans are kept as the text `true` / `false`: apache-arrow (JS) writes a column of only nulls of Arrow's Boolean type without its bitmap, which the engine refuses. */
const sqlLiteral = (value: Scalar) =>
  typeof value === 'string' ? sqlString(value) : typeof value === 'boolean' ? sqlString(String(value)) : Number.isInteger(value) ? String(value) : value.toExponential();

/** Columns: `id`, `doc` (the JSON), `s<i>` per searchable field, `p` (edge n-grams), `f<i>` per filterable or sortable field. */
export function typedColumns(settings: IndexSettings): { field: string; type: FieldType; column: string }[] {
  const seen = new Map<string, FieldType>();
  for (const { field, type } of [...settings.filterable, ...settings.sortable]) if (!seen.has(field)) seen.set(field, type);
  return [...seen].map(([field, type], i) => ({ field, type, column: `f${i}` }));
}

/** A filter as the engine's SQL `WHERE`: columns by position, literals quoted, NULL as "absent". */
export function filterSql(filter: Filter, settings: IndexSettings): string {
  const columns = new Map(typedColumns(settings).map((c) => [c.field, c.column]));
  const col = (field: string) => {
    const column = columns.get(field);
    if (!column) throw new AppError('validation_error', undefined, undefined, `not filterable: ${field}`);
    return column;
  };
  const walk = (f: Filter): string => {
    switch (f.kind) {
      case 'and': return `(${f.of.map(walk).join(' AND ')})`;
      case 'or': return `(${f.of.map(walk).join(' OR ')})`;
      // NOT over SQL's three-valued logic: a comparison with an absent field is false here, so its negation holds.
      case 'not': return `(NOT COALESCE(${walk(f.of)}, false))`;
      case 'in': return `(${col(f.field)} IN (${f.values.map(sqlLiteral).join(', ')}))`;
      case 'exists': return `(${col(f.field)} IS ${f.exists ? 'NOT ' : ''}NULL)`;
      case 'compare': {
        const ops = { eq: '=', ne: '<>', gt: '>', gte: '>=', lt: '<', lte: '<=' } as const;
        const test = `${col(f.field)} ${ops[f.op]} ${sqlLiteral(f.value)}`;
        return f.op === 'ne' ? `(${col(f.field)} IS NULL OR ${test})` : `(${test})`;
      }
    }
  };
  return walk(filter);
}

/**
 * The rows after `key` (sort values, then id) in a browse's order, as SQL: equal on the keys before
 * one and after on it, for each key in turn. A document without a sort field comes after every one
 * with it, in either direction; after an absent value only the absent ones follow.
 */
export function afterSql(key: OrderKey, sort: { column: string; order: 'asc' | 'desc' }[]): string {
  if (key.length !== sort.length + 1 || typeof key.at(-1) !== 'string') throw new AppError('validation_error', undefined, undefined, 'cursor must be the next_cursor of a previous answer to the same query');
  const equal: string[] = [];
  const branches: string[] = [];
  sort.forEach(({ column, order }, i) => {
    const value = key[i]!;
    if (value !== null) {
      branches.push([...equal, `(${column} ${order === 'asc' ? '>' : '<'} ${sqlLiteral(value)} OR ${column} IS NULL)`].join(' AND '));
      equal.push(`${column} = ${sqlLiteral(value)}`);
    } else equal.push(`${column} IS NULL`);
  });
  branches.push([...equal, `id > ${sqlString(key.at(-1) as string)}`].join(' AND '));
  return branches.map((b) => `(${b})`).join(' OR ');
}

const tableNameOf = (ref: IndexRef, generation: number) =>
  `${TABLE_PREFIX}${createHash('sha256').update(ref.accountId).digest('hex').slice(0, 32)}_${ref.name}_g${generation}`;
const GENERATION_OF = /_g(\d+)$/;

/** One chain of work per key: writes to one index commit one at a time, in order. */
class Serializer {
  private readonly tails = new Map<string, Promise<unknown>>();
  run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const next = previous.then(work, work);
    const tail = next.catch(() => undefined);
    this.tails.set(key, tail);
    void tail.then(() => { if (this.tails.get(key) === tail) this.tails.delete(key); });
    return next;
  }
}

export class LanceSearchEngine implements SearchEngine {
  private readonly serial = new Serializer();
  private readonly tables = new Map<string, Promise<Table>>();
  /** Catalog records read in the last `readConsistencySeconds`: a warm function's queries skip the catalog's reads (its files on S3). */
  private readonly records = new Map<string, { record: IndexRecord; until: number }>();
  private readonly recordTtlMs: number;
  private catalogTable?: Promise<Table>;
  private readonly ready: Promise<{ lance: Lance; arrow: Arrow; db: Connection }>;

  constructor(options: LanceSearchEngineOptions) {
    this.recordTtlMs = (options.readConsistencySeconds ?? 0) * 1000;
    this.ready = (async () => {
      const lance = await loadLance();
      const arrow = await import('apache-arrow');
      const db = await lance.connect(options.uri, {
        readConsistencyInterval: options.readConsistencySeconds ?? 0,
        ...(options.storageOptions && { storageOptions: options.storageOptions }),
      });
      return { lance, arrow, db };
    })();
    // A failed start is reported by the first call that needs the engine.
    this.ready.catch(() => undefined);
  }

  private async catalog(): Promise<Table> {
    this.catalogTable ??= (async () => {
      const { db, arrow } = await this.ready;
      const schema = new arrow.Schema([
        new arrow.Field('account', new arrow.Utf8(), false),
        new arrow.Field('name', new arrow.Utf8(), false),
        new arrow.Field('record', new arrow.Utf8(), false),
      ]);
      return db.createEmptyTable(CATALOG, schema, { mode: 'create', existOk: true });
    })().catch((error: unknown) => {
      this.catalogTable = undefined;
      throw error;
    });
    return this.catalogTable;
  }

  private schemaOf(arrow: Arrow, settings: IndexSettings) {
    const types = { string: () => new arrow.Utf8(), number: () => new arrow.Float64(), boolean: () => new arrow.Utf8() };
    return new arrow.Schema([
      new arrow.Field('id', new arrow.Utf8(), false),
      new arrow.Field('doc', new arrow.Utf8(), false),
      ...settings.searchable.map((_, i) => new arrow.Field(`s${i}`, new arrow.Utf8(), true)),
      new arrow.Field('p', new arrow.Utf8(), true),
      ...typedColumns(settings).map(({ type, column }) => new arrow.Field(column, types[type](), true)),
    ]);
  }

  /** The generation's table, made on first use (a new index, or the first write after a purge). */
  private table(record: IndexRecord): Promise<Table> {
    const name = tableNameOf(record, record.generation);
    let table = this.tables.get(name);
    if (!table) {
      table = (async () => {
        const { db, arrow } = await this.ready;
        return db.createEmptyTable(name, this.schemaOf(arrow, record.settings), { mode: 'create', existOk: true });
      })();
      table.catch(() => this.tables.delete(name));
      this.tables.set(name, table);
    }
    return table;
  }

  // The catalog.

  private catalogWhere = (ref: IndexRef) => `account = ${sqlString(ref.accountId)} AND name = ${sqlString(ref.name)}`;

  async listIndexes(accountId: string, page: { limit: number; after?: string }): Promise<IndexRecord[]> {
    const rows = await (await this.catalog()).query().where(`account = ${sqlString(accountId)}`).select(['name', 'record']).toArray();
    return rows
      .map((row) => JSON.parse(String(row.record)) as IndexRecord)
      .filter((record) => page.after === undefined || record.name > page.after)
      .sort((a, b) => (a.name < b.name ? -1 : 1))
      .slice(0, page.limit);
  }

  async countIndexes(accountId: string): Promise<number> {
    return (await this.catalog()).countRows(`account = ${sqlString(accountId)}`);
  }

  /**
   * The index's catalog record. With a read-consistency interval (deployed), a record read in the
   * last interval is answered from memory: the catalog's changes made by other instances (settings,
   * purges, deletions) are seen within that interval, as the tables' commits are. A missing index
   * is never remembered, so an index made elsewhere is found at once.
   */
  async getIndex(ref: IndexRef): Promise<IndexRecord | undefined> {
    const key = recordKey(ref);
    const cached = this.records.get(key);
    if (cached && cached.until > Date.now()) return cached.record;
    const rows = await (await this.catalog()).query().where(this.catalogWhere(ref)).select(['record']).limit(1).toArray();
    const record = rows.length === 0 ? undefined : (JSON.parse(String(rows[0].record)) as IndexRecord);
    this.remember(ref, record);
    return record;
  }

  private remember(ref: IndexRef, record: IndexRecord | undefined): void {
    this.records.delete(recordKey(ref));
    if (!record || this.recordTtlMs === 0) return;
    if (this.records.size >= MAX_REMEMBERED_RECORDS) this.records.clear();
    this.records.set(recordKey(ref), { record, until: Date.now() + this.recordTtlMs });
  }

  async saveIndex(record: IndexRecord, options: { isNew: boolean }): Promise<void> {
    await this.serial.run(CATALOG, async () => {
      const catalog = await this.catalog();
      const row = [{ account: record.accountId, name: record.name, record: JSON.stringify(record) }];
      await catalog.mergeInsert(['account', 'name']).whenMatchedUpdateAll().whenNotMatchedInsertAll().execute(row);
    });
    this.remember(record, record);
    if (options.isNew) await this.table(record);
  }

  deleteIndex(ref: IndexRef): Promise<boolean> {
    this.remember(ref, undefined);
    return this.serial.run(CATALOG, async () => {
      const catalog = await this.catalog();
      if ((await catalog.countRows(this.catalogWhere(ref))) === 0) return false;
      await catalog.delete(this.catalogWhere(ref));
      return true;
    });
  }

  async purgeIndex(record: IndexRecord, now: string): Promise<IndexRecord> {
    // Generations never repeat, even for an index deleted and made again under its name.
    const next: IndexRecord = { ...record, generation: Math.max(record.generation + 1, Date.parse(now)), updatedAt: now };
    await this.saveIndex(next, { isNew: true });
    return next;
  }

  // Sweeping dropped generations.

  /**
   * Drops the tables of generations the catalog no longer names: purged, or of a deleted index;
   * those of one index when `ref` is given (the maintenance queue's sweep job, run the queue's
   * delay after the purge, so queries already reading the old table have finished), else of all.
   * The tables are listed before the catalog is read, so a table made after the listing (a write
   * after a purge) is never a candidate. Answers the tables dropped.
   */
  async sweep(ref?: IndexRef): Promise<string[]> {
    const { db } = await this.ready;
    const names: string[] = [];
    for (let page = await db.tableNames({ limit: 1000 }); page.length > 0; page = await db.tableNames({ startAfter: page.at(-1)!, limit: 1000 })) names.push(...page);
    const rows = await (await this.catalog()).query().select(['record']).toArray();
    const current = new Map<string, number>();
    for (const row of rows) {
      const record = JSON.parse(String(row.record)) as IndexRecord;
      current.set(tableNameOf(record, 0).replace(GENERATION_OF, ''), record.generation);
    }
    const dropped: string[] = [];
    const only = ref && tableNameOf(ref, 0).replace(GENERATION_OF, '');
    for (const name of names.filter((n) => n.startsWith(TABLE_PREFIX) && (only === undefined || n.replace(GENERATION_OF, '') === only))) {
      const generation = Number(GENERATION_OF.exec(name)?.[1]);
      const live = current.get(name.replace(GENERATION_OF, ''));
      if (live !== undefined && generation >= live) continue;
      await db.dropTable(name);
      this.tables.delete(name);
      dropped.push(name);
    }
    return dropped;
  }

  // Documents.

  private rowOf(settings: IndexSettings, { id, doc }: StoredDocument): Record<string, unknown> {
    const row: Record<string, unknown> = { id, doc: JSON.stringify(doc) };
    const terms = new Set<string>();
    settings.searchable.forEach(({ field }, i) => {
      const words = tokenize(fieldText(valueAt(doc, field)));
      // The words as the gateway reads them (lower-cased even for the flat search before the first index), each within the index's length.
      row[`s${i}`] = words.map(engineWord).join(' ');
      for (const word of words) terms.add(word);
    });
    row.p = edgeGrams(terms).join(' ');
    for (const { field, type, column } of typedColumns(settings)) {
      const value = valueAt(doc, field) ?? null;
      row[column] = type === 'boolean' && value !== null ? String(value) : value;
    }
    return row;
  }

  async upsert(record: IndexRecord, docs: StoredDocument[]): Promise<void> {
    const name = tableNameOf(record, record.generation);
    await this.serial.run(name, async () => {
      const { lance, arrow } = await this.ready;
      const table = await this.table(record);
      const ids = docs.map((d) => d.id);
      const existing = await table.query().where(`id IN (${ids.map(sqlString).join(', ')})`).select(['id']).toArray();
      const count = await table.countRows();
      if (count + ids.length - existing.length > record.settings.maxDocuments) {
        throw new AppError('conflict', 'max_documents', undefined, `the index holds ${count} documents and max_documents is ${record.settings.maxDocuments}: delete some or raise max_documents`);
      }
      const data = lance.makeArrowTable(docs.map((doc) => this.rowOf(record.settings, doc)), { schema: this.schemaOf(arrow, record.settings) });
      // A batch of new ids is an append; one that replaces documents is a merge on `id`.
      if (existing.length === 0) await table.add(data);
      else await table.mergeInsert('id').whenMatchedUpdateAll().whenNotMatchedInsertAll().execute(data);
    });
  }

  async getDocument(record: IndexRecord, id: string): Promise<StoredDocument | undefined> {
    const rows = await (await this.table(record)).query().where(`id = ${sqlString(id)}`).select(['doc']).limit(1).toArray();
    return rows.length === 0 ? undefined : { id, doc: JSON.parse(String(rows[0].doc)) as Record<string, unknown> };
  }

  private deleteMatching(record: IndexRecord, where: string): Promise<number> {
    return this.serial.run(tableNameOf(record, record.generation), async () => {
      const table = await this.table(record);
      const count = await table.countRows(where);
      if (count > 0) await table.delete(where);
      return count;
    });
  }

  deleteDocuments(record: IndexRecord, ids: string[]): Promise<number> {
    return this.deleteMatching(record, `id IN (${ids.map(sqlString).join(', ')})`);
  }

  deleteWhere(record: IndexRecord, filter: Filter): Promise<number> {
    return this.deleteMatching(record, filterSql(filter, record.settings));
  }

  async stats(record: IndexRecord): Promise<IndexStats> {
    const table = await this.table(record);
    const stats = await table.stats();
    let pending = stats.numRows;
    if (stats.numRows > 0) {
      const indexed = await table.indexStats('s0_idx');
      if (indexed) pending = indexed.numUnindexedRows;
    }
    return { documents: stats.numRows, bytes: stats.totalBytes, pendingDocuments: pending };
  }

  // Queries.

  private wordQuery(lance: Lance, settings: IndexSettings, word: string, isLast: boolean, plan: SearchPlan): FullTextQuery {
    // Cut as the documents' words are (a longer query word would match nothing in the index); its typos are counted on the whole word.
    const term = engineWord(word);
    const clauses: FullTextQuery[] = settings.searchable.map(({ weight }, i) => new lance.MatchQuery(term, `s${i}`, { boost: weight }));
    const typos = plan.typos ? typosAllowed(word) : 0;
    if (typos > 0) {
      settings.searchable.forEach(({ weight }, i) => clauses.push(new lance.MatchQuery(term, `s${i}`, { boost: weight * TYPO_BOOST, fuzziness: typos, maxExpansions: FUZZY_EXPANSIONS })));
    }
    if (plan.prefix && isLast) clauses.push(new lance.MatchQuery([...word].slice(0, MAX_PREFIX_CHARS).join(''), 'p', { boost: PREFIX_BOOST }));
    return clauses.length === 1 ? clauses[0]! : new lance.BooleanQuery(clauses.map((q) => [lance.Occur.Should, q]));
  }

  async search(record: IndexRecord, plan: SearchPlan): Promise<SearchResult> {
    const { lance } = await this.ready;
    const table = await this.table(record);
    await this.prewarm(table, tableNameOf(record, record.generation));
    const where = plan.filter && filterSql(plan.filter, record.settings);
    if (plan.words.length === 0) return this.browse(table, record, plan, where);

    const words = plan.words.map((word, i) => this.wordQuery(lance, record.settings, word, i === plan.words.length - 1, plan));
    const occur = plan.match === 'all' ? lance.Occur.Must : lance.Occur.Should;
    const query = words.length === 1 ? words[0]! : new lance.BooleanQuery(words.map((q) => [occur, q]));
    let request = table.query().fullTextSearch(query);
    if (where) request = request.where(where);
    const rows = await request.select(['id', 'doc', '_score']).limit(plan.candidates).toArray();
    const rules = { prefix: plan.prefix, typos: plan.typos };
    const candidates: Candidate[] = [];
    for (const row of rows) {
      const doc = JSON.parse(String(row.doc)) as Record<string, unknown>;
      const terms = new Set(record.settings.searchable.flatMap(({ field }) => tokenize(fieldText(valueAt(doc, field)))));
      // The engine's hits can lack a word (it cuts words at combining marks, where the gateway does not): check each hit.
      const holds = plan.match === 'all'
        ? holdsEveryWord(plan.words, terms, rules)
        : plan.words.some((word, i) => [...terms].some((term) => wordMatches(word, term, i === plan.words.length - 1, rules)));
      if (holds) candidates.push({ id: String(row.id), doc, score: Number(row._score) });
    }
    const exact = rows.length < plan.candidates;
    return { candidates, total: candidates.length, exact };
  }

  private readonly prewarmed = new Set<string>();

  /**
   * Loads a table's full-text indexes into memory on its first query in this environment, when
   * they cover at most `PREWARM_MAX_DOCUMENTS`: in a few large reads rather than the many small ones
   * (one per posting list, fuzzy expansions included) that each new query word costs otherwise. The
   * engine keeps them while the environment is warm. Measured over s3rver (10,000 documents,
   * 2026-11-28): a warm query 8 S3 GETs instead of 134, a cold one 94 instead of 363. Rows indexed
   * later (another environment's maintenance) are read on demand as before.
   */
  private async prewarm(table: Table, name: string): Promise<void> {
    if (this.prewarmed.has(name)) return;
    this.prewarmed.add(name);
    try {
      const indexes = (await table.listIndices()).filter((index) => index.indexType === 'FTS');
      const covered = indexes.length === 0 ? 0 : (await table.indexStats(indexes[0]!.name))?.numIndexedRows ?? 0;
      if (covered === 0 || covered > PREWARM_MAX_DOCUMENTS) return;
      for (const index of indexes) await table.prewarmIndex(index.name);
    } catch {
      // Only an optimisation: the query reads what it needs on demand.
    }
  }

  /**
   * No words: the matching documents after `plan.after`, in the sort keys' order then the id's (a
   * document without a sort field after those with it, either way), the first `candidates` read in
   * full. The engine orders and cuts (a top-k over the id and sort columns, nothing else read), so a
   * page reads its own documents only, and a later page starts from its cursor's key in the `WHERE`.
   * `total` counts every match (the filter's columns only; none without a filter).
   */
  private async browse(table: Table, record: IndexRecord, plan: SearchPlan, where: string | undefined): Promise<SearchResult> {
    const columns = new Map(typedColumns(record.settings).map((c) => [c.field, c.column]));
    const sortColumns = (plan.sort ?? []).map((s) => ({ ...s, column: columns.get(s.field)! }));
    const order = [...sortColumns.map((s) => ({ columnName: s.column, ascending: s.order === 'asc', nullsFirst: false })), { columnName: 'id', ascending: true }];
    const conditions = [where, plan.after && afterSql(plan.after, sortColumns)].filter((c): c is string => Boolean(c));
    // The engine cannot order by a column the query does not select ("TakeExec requires the input
    // plan to have a column named '_rowaddr'", https://github.com/lance-format/lance/issues/5290):
    // the order's columns are selected, and the documents read by id afterwards, so the top-k reads
    // no document's body (with `doc` in it, it read every match's: 10 MB, not 1.5, at 100,000).
    let request = table.query().select(['id', ...sortColumns.map((s) => s.column)]).orderBy(order).limit(plan.candidates);
    if (conditions.length > 0) request = request.where(conditions.map((c) => `(${c})`).join(' AND '));
    const [keys, total] = await Promise.all([request.toArray(), table.countRows(where)]);
    const chosen = keys.map((row) => String(row.id));
    const docs = new Map<string, Record<string, unknown>>();
    for (let i = 0; i < chosen.length; i += 500) {
      const slice = chosen.slice(i, i + 500);
      const rows = await table.query().where(`id IN (${slice.map(sqlString).join(', ')})`).select(['id', 'doc']).toArray();
      for (const row of rows) docs.set(String(row.id), JSON.parse(String(row.doc)) as Record<string, unknown>);
    }
    const candidates = chosen.flatMap((id) => (docs.has(id) ? [{ id, doc: docs.get(id)!, score: 0 }] : []));
    return { candidates, total, exact: true };
  }

  // Maintenance: run by the search maintenance queue's consumer (`functions/handlers/search-maintenance.ts`), or by a write's `wait`.

  /**
   * Brings the full-text indexes up to date with the table: builds those missing on the first rows,
   * else adds the rows written since (the engine's `optimize`, which also compacts small fragments
   * and removes versions older than a minute).
   *
   * The engine lets a write win over a compaction it overlaps ("Retryable commit conflict … This
   * Rewrite transaction was preempted by concurrent transaction Update"): writes from the search
   * function never wait for maintenance, so maintenance starts again from the new version, backing
   * off, up to `MAINTENANCE_ATTEMPTS` times (about 5 s), then fails the job for the queue to retry:
   * writes to one index without a pause can hold its compaction (and so its index update) off
   * (`test/handlers/search-engine.test.ts` shows the conflict and the retry).
   */
  async indexNow(record: IndexRecord): Promise<void> {
    await this.serial.run(tableNameOf(record, record.generation), async () => {
      const { lance } = await this.ready;
      const table = await this.table(record);
      for (let attempt = 1; ; attempt++) {
        try {
          if ((await table.countRows()) === 0) return;
          const existing = new Set((await table.listIndices()).map((index) => index.name));
          // An index definition is used up by the index it makes: one each.
          const fts = () => lance.Index.fts({ baseTokenizer: 'simple', lowercase: true, stem: false, removeStopWords: false, asciiFolding: false, withPosition: false, maxTokenLength: MAX_TOKEN_BYTES });
          for (const column of [...record.settings.searchable.map((_, i) => `s${i}`), 'p']) {
            if (!existing.has(`${column}_idx`)) await table.createIndex(column, { config: fts(), replace: true });
          }
          if (!existing.has('id_idx')) await table.createIndex('id', { config: lance.Index.btree(), replace: true });
          await table.optimize({ cleanupOlderThan: new Date(Date.now() - 60_000) });
          return;
        } catch (error) {
          if (attempt >= MAINTENANCE_ATTEMPTS || !isRetryableConflict(error)) throw error;
          // Backing off, so that a pause in the writes lets it through.
          await new Promise((resolve) => setTimeout(resolve, Math.min(2000, 50 * 2 ** (attempt - 1))));
        }
      }
    });
  }


  /**
   * A write's `wait`: maintenance here, until the index covers every row or the time is up. Writes
   * that keep preempting it (other callers', or the maintenance function's own compaction) make it
   * answer `false` at the deadline, never fail the write that is already committed.
   */
  async waitIndexed(record: IndexRecord, timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while ((await this.stats(record)).pendingDocuments > 0) {
      if (Date.now() > deadline) return false;
      await this.indexNow(record).catch((error: unknown) => {
        if (!isRetryableConflict(error)) throw error;
      });
    }
    return true;
  }
}
