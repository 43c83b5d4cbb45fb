/**
 * The search indexes' use cases over the engine port: the catalog of an account's indexes, their
 * documents, and queries (ranking by the engine; order, cursor, facets and highlights here).
 */
import { AppError, notFound } from '../../shared/errors.js';
import type { Clock } from '../clock.js';
import { MAX_CANDIDATES, MAX_FACET_DOCUMENTS, MAX_FACET_VALUES, MAX_ID_BYTES, MAX_INDEXES_PER_ACCOUNT, MAX_WAIT_INDEXED_MS } from './limits.js';
import { fieldText, highlight, valueAt } from './text.js';
import type { Candidate, Filter, IndexRecord, IndexRef, IndexSettings, IndexStats, OrderKey, SearchEngine, SearchMaintenance, SortKey, StoredDocument } from './types.js';
import { invalid, settingsChanges, type QueryInput } from './validation.js';
import { equalText } from '../webhooks/senders/primitives/equal-text.js';

export interface IndexInfo {
  record: IndexRecord;
  stats: IndexStats;
}

export interface Hit {
  id: string;
  score: number;
  document: Record<string, unknown>;
  highlights?: Record<string, string>;
}

export interface QueryAnswer {
  hits: Hit[];
  total: number;
  totalExact: boolean;
  facets?: Record<string, { values: { value: string | number | boolean; count: number }[]; exhaustive: boolean }>;
  nextCursor: string | null;
  tookMs: number;
}

const missing = (ref: IndexRef) => notFound('index', `no index ${ref.name}`);

function fingerprint(parts: unknown): string {
  // FNV-1a over the query's JSON: tells a cursor of another query apart (not a secret).
  let hash = 0x811c9dc5;
  for (const c of JSON.stringify(parts)) hash = Math.imul(hash ^ c.charCodeAt(0), 0x01000193) >>> 0;
  return hash.toString(36);
}

const orderOfValues = (a: unknown, b: unknown): number => {
  // Documents without the field come last whatever the order.
  if (a === null || a === undefined) return b === null || b === undefined ? 0 : 1;
  if (b === null || b === undefined) return -1;
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b);
  return codePointOrder(String(a), String(b));
};

/**
 * Text in code point order, which is UTF-8's byte order and so the engine's (a browse's page is
 * chosen by the engine, then ordered here): JavaScript's `<` compares UTF-16 units, which puts a
 * character beyond U+FFFF (an emoji) before U+E000–U+FFFF.
 */
export function codePointOrder(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) {
      const lift = (c: number) => (c >= 0xd800 && c <= 0xdfff ? c + 0x2000 : c >= 0xe000 ? c - 0x800 : c);
      return lift(x) - lift(y);
    }
  }
  return a.length - b.length;
}

/** Orders candidates: by the sort keys, else by score (highest first); then by id, so the order is total. */
function orderKeyOf(candidate: Candidate, sort: SortKey[] | undefined, ranked: boolean): OrderKey {
  const values = sort ? sort.map((s) => (valueAt(candidate.doc, s.field) ?? null) as OrderKey[number]) : ranked ? [candidate.score] : [];
  return [...values, candidate.id];
}

function orderOfKeys(a: OrderKey, b: OrderKey, sort: SortKey[] | undefined, ranked: boolean): number {
  for (let i = 0; i < a.length; i++) {
    const isId = i === a.length - 1;
    let order = orderOfValues(a[i], b[i]);
    if (!isId && sort && sort[i]!.order === 'desc' && a[i] !== null && b[i] !== null) order = -order;
    if (!isId && !sort && ranked) order = -order;
    if (order !== 0) return order;
  }
  return 0;
}

function isBrowseKey(key: unknown[], sort: SortKey[] | undefined, settings: IndexSettings): boolean {
  const fields = sort ?? [];
  if (key.length !== fields.length + 1) return false;
  const id = key.at(-1);
  if (typeof id !== 'string' || Buffer.byteLength(id, 'utf8') > MAX_ID_BYTES) return false;
  return fields.every(({ field }, i) => {
    const value = key[i];
    const type = settings.sortable.find((s) => s.field === field)?.type;
    if (value === null) return true;
    return type === 'number' ? typeof value === 'number' && Number.isFinite(value) : typeof value === type;
  });
}

const and = (a: Filter | undefined, b: Filter | undefined): Filter | undefined => (a && b ? { kind: 'and', of: [a, b] } : a ?? b);

export class SearchService {
  constructor(private readonly deps: { engine: SearchEngine; maintenance: SearchMaintenance; now: Clock }) {}

  /** The sweep of the index's generations no longer current, after the queue's delay: queries already reading one finish first. */
  private sweepLater = (record: IndexRecord) => this.deps.maintenance.schedule({ accountId: record.accountId, name: record.name, generation: record.generation, kind: 'sweep' });

  private iso = () => new Date(this.deps.now()).toISOString();

  async listIndexes(accountId: string, page: { limit: number; cursor?: string }): Promise<{ indexes: IndexInfo[]; nextCursor: string | null }> {
    let after: string | undefined;
    if (page.cursor !== undefined) {
      after = Buffer.from(page.cursor, 'base64url').toString('utf8');
      if (!after || Buffer.from(after, 'utf8').toString('base64url') !== page.cursor) throw invalid('cursor must be the next_cursor of a previous answer');
    }
    const records = await this.deps.engine.listIndexes(accountId, { limit: page.limit + 1, ...(after !== undefined && { after }) });
    const shown = records.slice(0, page.limit);
    const indexes = await Promise.all(shown.map(async (record) => ({ record, stats: await this.deps.engine.stats(record) })));
    return { indexes, nextCursor: records.length > page.limit ? Buffer.from(shown.at(-1)!.name, 'utf8').toString('base64url') : null };
  }

  /**
   * Creates the index, or updates its settings: weights, stored fields and `max_documents` apply at
   * once; a change of the fields that make up the engine's columns needs every document indexed
   * again, so it is refused (409 `conflict`, naming them) unless the index is empty, when it is free.
   */
  async putIndex(ref: IndexRef, settings: IndexSettings): Promise<{ info: IndexInfo; created: boolean }> {
    const { engine } = this.deps;
    const existing = await engine.getIndex(ref);
    const now = this.iso();
    if (!existing) {
      if ((await engine.countIndexes(ref.accountId)) >= MAX_INDEXES_PER_ACCOUNT) {
        throw new AppError('conflict', 'too many indexes', undefined, `an account has at most ${MAX_INDEXES_PER_ACCOUNT} indexes`);
      }
      // Its first generation is its creation time, as a purge's is (never 1 again): an index deleted
      // and made again under its name before the deleted one's sweep ran would otherwise open the
      // deleted generation's table, its documents (and columns of its settings) still in it.
      const record: IndexRecord = { ...ref, settings, generation: Math.max(1, Date.parse(now)), createdAt: now, updatedAt: now };
      await engine.saveIndex(record, { isNew: true });
      return { info: { record, stats: await engine.stats(record) }, created: true };
    }
    const { rebuild } = settingsChanges(existing.settings, settings);
    let record: IndexRecord = { ...existing, settings, updatedAt: now };
    if (rebuild.length > 0) {
      const stats = await engine.stats(existing);
      if (stats.documents > 0) {
        throw new AppError('conflict', 'settings need a rebuild', undefined,
          `changing ${rebuild.join(', ')} needs every document indexed again: purge the index (DELETE …/purge) and write its documents again, or create a new index with these settings`);
      }
      record = await engine.purgeIndex(record, now);
      await this.sweepLater(record);
    } else {
      await engine.saveIndex(record, { isNew: false });
    }
    return { info: { record, stats: await engine.stats(record) }, created: false };
  }

  async requireIndex(ref: IndexRef): Promise<IndexRecord> {
    const record = await this.deps.engine.getIndex(ref);
    if (!record) throw missing(ref);
    return record;
  }

  async describeIndex(ref: IndexRef): Promise<IndexInfo> {
    const record = await this.requireIndex(ref);
    return { record, stats: await this.deps.engine.stats(record) };
  }

  async deleteIndex(ref: IndexRef): Promise<void> {
    if (!(await this.deps.engine.deleteIndex(ref))) throw missing(ref);
    await this.deps.maintenance.schedule({ ...ref, generation: 0, kind: 'sweep' });
  }

  /** Empties the index and keeps its settings: a new generation, whatever the index holds; the old one is swept. */
  async purgeIndex(ref: IndexRef): Promise<IndexRecord> {
    const record = await this.deps.engine.purgeIndex(await this.requireIndex(ref), this.iso());
    await this.sweepLater(record);
    return record;
  }

  /**
   * After a committed write: with `wait`, the full-text index is brought up to date here; else (or
   * past the wait) a maintenance job is scheduled, which takes the write in within the queue's bound.
   * Until then the write is found all the same (the engine searches rows not yet indexed flat).
   */
  private async afterWrite(record: IndexRecord, wait: boolean): Promise<{ indexed: boolean }> {
    const indexed = wait && await this.deps.engine.waitIndexed(record, MAX_WAIT_INDEXED_MS);
    if (!indexed) await this.deps.maintenance.schedule({ accountId: record.accountId, name: record.name, generation: record.generation, kind: 'index' });
    return { indexed };
  }

  async upsert(ref: IndexRef, parse: (settings: IndexSettings) => StoredDocument[], options: { wait: boolean }): Promise<{ ids: string[]; indexed: boolean }> {
    const record = await this.requireIndex(ref);
    const docs = parse(record.settings);
    await this.deps.engine.upsert(record, docs);
    return { ids: docs.map((d) => d.id), ...(await this.afterWrite(record, options.wait)) };
  }

  async getDocument(ref: IndexRef, id: string): Promise<StoredDocument> {
    const doc = await this.deps.engine.getDocument(await this.requireIndex(ref), id);
    if (!doc) throw notFound('document');
    return doc;
  }

  async deleteDocument(ref: IndexRef, id: string, options: { wait: boolean }): Promise<void> {
    const record = await this.requireIndex(ref);
    if ((await this.deps.engine.deleteDocuments(record, [id])) === 0) throw notFound('document');
    await this.afterWrite(record, options.wait);
  }

  async deleteDocuments(ref: IndexRef, parse: (settings: IndexSettings) => { ids: string[] } | { filter: Filter }, options: { wait: boolean }): Promise<{ deleted: number; indexed: boolean }> {
    const record = await this.requireIndex(ref);
    const what = parse(record.settings);
    const deleted = 'ids' in what ? await this.deps.engine.deleteDocuments(record, what.ids) : await this.deps.engine.deleteWhere(record, what.filter);
    return { deleted, ...(await this.afterWrite(record, options.wait)) };
  }

  /**
   * Runs a query. `fixedFilter` (a search-only key's) is ANDed with the caller's filter, so it can
   * narrow what the key reaches and never widen it.
   */
  async query(ref: IndexRef, parse: (settings: IndexSettings) => QueryInput, options: { fixedFilter?: (settings: IndexSettings) => Filter } = {}): Promise<QueryAnswer> {
    const started = this.deps.now();
    const record = await this.requireIndex(ref);
    const input = parse(record.settings);
    const ranked = input.words.length > 0;
    const filter = and(options.fixedFilter?.(record.settings), input.filter);
    const print = fingerprint([input.q, input.match, input.prefix, input.typos, input.filter ?? null, input.sort ?? null]);
    // A cursor names the last hit of a page by its order key, and the query it belongs to.
    let after: { k: OrderKey; o: number } | undefined;
    if (input.cursor !== undefined) {
      try {
        const decoded = JSON.parse(Buffer.from(input.cursor, 'base64url').toString('utf8')) as { f: string; k: OrderKey; o: number };
        if (!equalText(String(decoded.f), print) || !Array.isArray(decoded.k) || !Number.isSafeInteger(decoded.o)) throw new Error('other query');
        // A browse's key goes to the engine's WHERE: of the sort fields' types (or null), then an id.
        if (!ranked && !isBrowseKey(decoded.k, input.sort, record.settings)) throw new Error('not a key of this order');
        after = decoded;
      } catch {
        throw invalid('cursor must be the next_cursor of a previous answer to the same query');
      }
    }
    const plan = {
      words: input.words, match: input.match, prefix: input.prefix, typos: input.typos, candidates: MAX_CANDIDATES,
      ...(filter && { filter }), ...(!ranked && input.sort && { sort: input.sort }),
    };
    const ordered = (candidates: Candidate[]) => candidates
      .map((candidate) => ({ candidate, key: orderKeyOf(candidate, input.sort, ranked) }))
      .sort((a, b) => orderOfKeys(a.key, b.key, input.sort, ranked));
    // A browse (no words) asks the engine for its page and one more (is there a next?), after the
    // cursor's key: the engine orders and cuts, so a page reads that many documents, never every
    // match's keys. Its facets are those of the first MAX_FACET_DOCUMENTS, as a query's.
    const wantsFacets = input.facets.length > 0;
    const result = await this.deps.engine.search(record, ranked ? plan : { ...plan, candidates: input.limit + 1, ...(after && { after: after.k }) });
    const keyed = ordered(result.candidates);
    const start = after === undefined || !ranked ? 0 : this.resume(keyed, after, input.sort, ranked);
    const rest = keyed.slice(start);
    const page = rest.slice(0, input.limit);
    const nextCursor = rest.length > input.limit ? Buffer.from(JSON.stringify({ f: print, k: page.at(-1)!.key, o: start + page.length })).toString('base64url') : null;
    const faceted = !wantsFacets ? [] : ranked ? keyed : ordered((await this.deps.engine.search(record, plan)).candidates);
    return {
      hits: page.map(({ candidate }) => this.hitOf(candidate, record.settings, input)),
      total: result.total,
      totalExact: result.exact,
      ...(wantsFacets && { facets: this.facetsOf(faceted.slice(0, MAX_FACET_DOCUMENTS).map((k) => k.candidate), input.facets, result.total) }),
      nextCursor,
      tookMs: Math.max(0, Math.round(this.deps.now() - started)),
    };
  }

  /**
   * Where the next page starts. Sorted (or browsed) orders come from the documents' own values, so
   * the page continues after the last hit's key. A rank's scores move a little as the engine's
   * statistics catch up with writes, so a ranked page continues after the last hit's id where it
   * now stands, or at the same offset if it is gone.
   */
  private resume(keyed: { key: OrderKey }[], after: { k: OrderKey; o: number }, sort: SortKey[] | undefined, ranked: boolean): number {
    if (ranked && !sort) {
      const id = after.k.at(-1);
      const at = keyed.findIndex(({ key }) => key.at(-1) === id);
      return at === -1 ? Math.min(after.o, keyed.length) : at + 1;
    }
    const at = keyed.findIndex(({ key }) => orderOfKeys(key, after.k, sort, ranked) > 0);
    return at === -1 ? keyed.length : at;
  }

  private hitOf(candidate: Candidate, settings: IndexSettings, input: QueryInput): Hit {
    const document = settings.stored === null ? candidate.doc : Object.fromEntries(settings.stored.flatMap((field) => {
      const value = valueAt(candidate.doc, field);
      return value === undefined ? [] : [[field, value]];
    }));
    const hit: Hit = { id: candidate.id, score: candidate.score, document };
    if (input.highlight && input.words.length > 0) {
      const rules = { prefix: input.prefix, typos: input.typos };
      hit.highlights = {};
      for (const field of input.highlight.fields) {
        const text = fieldText(valueAt(candidate.doc, field));
        if (text) hit.highlights[field] = highlight(text, input.words, rules, input.highlight).html;
      }
    }
    return hit;
  }

  private facetsOf(candidates: Candidate[], fields: string[], total: number): NonNullable<QueryAnswer['facets']> {
    const exhaustive = candidates.length >= total;
    return Object.fromEntries(fields.map((field) => {
      const counts = new Map<string | number | boolean, number>();
      for (const { doc } of candidates) {
        const value = valueAt(doc, field);
        if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') counts.set(value, (counts.get(value) ?? 0) + 1);
      }
      const values = [...counts].sort((a, b) => b[1] - a[1] || orderOfValues(a[0], b[0])).slice(0, MAX_FACET_VALUES).map(([value, count]) => ({ value, count }));
      return [field, { values, exhaustive }];
    }));
  }
}
