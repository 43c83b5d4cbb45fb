/**
 * A browse (a query without `q`) against the engine itself, through the search service: the engine
 * orders and cuts each page (its top-k, after the cursor's key), so a page reads its own documents,
 * never every match's keys; and the pages together are the whole order, each document once, in the
 * order the service gives (code point order for text, documents without the field last).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadLance } from '../../functions/adapters/lance/engine-environment.js';
import { LanceSearchEngine } from '../../functions/adapters/lance/lance-search-engine.js';
import { codePointOrder, SearchService } from '../../functions/domain/search/service.js';
import type { IndexRecord, SearchEngine, SearchPlan, SortKey } from '../../functions/domain/search/types.js';
import { parseQuery } from '../../functions/domain/search/validation.js';
import { AppError } from '../../functions/shared/errors.js';

const dir = mkdtempSync(join(tmpdir(), 'flowgate-search-browse-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const lance = new LanceSearchEngine({ uri: dir });

/** What the service asked the engine for, and what the engine read in full. */
const asked: { plan: SearchPlan; documents: number }[] = [];
const engine: SearchEngine = new Proxy(lance, {
  get: (target, name) => (name === 'search'
    ? async (record: IndexRecord, plan: SearchPlan) => {
      const result = await target.search(record, plan);
      asked.push({ plan, documents: result.candidates.length });
      return result;
    }
    : (target as any)[name]?.bind(target)),
});
const service = new SearchService({ engine, maintenance: { schedule: async () => undefined }, now: Date.now });

const COUNT = 2_500;
/** Text with characters beyond U+FFFF and in U+E000–U+FFFF, where UTF-16 order and the engine's differ; ties; absent values. */
const TAGS = ['a', 'b', '\u{1F600}', '\uFF21', 'a\u{1F600}', 'a\uE000', "it's", 'Z'];
const docs = Array.from({ length: COUNT }, (_, i) => ({
  id: `d${String(i).padStart(4, '0')}${i % 5 === 0 ? '\u{1F600}' : ''}`,
  group: `g${i % 3}`,
  ...(i % 7 !== 0 && { rank: (i * 37) % 101 + (i % 2 ? 0.5 : 0) }),
  ...(i % 11 !== 0 && { tag: TAGS[i % TAGS.length] }),
  ...(i % 4 !== 0 && { flag: i % 3 === 0 }),
}));
const record: IndexRecord = {
  accountId: 'browse-test', name: 'browse', generation: 1, createdAt: '', updatedAt: '',
  settings: {
    idField: 'id', searchable: [{ field: 'tag', weight: 1 }], filterable: [{ field: 'group', type: 'string' }],
    sortable: [{ field: 'rank', type: 'number' }, { field: 'tag', type: 'string' }, { field: 'flag', type: 'boolean' }], stored: null, maxDocuments: 1_000_000,
  },
};
beforeAll(async () => {
  await lance.saveIndex(record, { isNew: true });
  for (let i = 0; i < COUNT; i += 1000) await lance.upsert(record, docs.slice(i, i + 1000).map((doc) => ({ id: doc.id, doc })));
});

const query = (body: Record<string, unknown>) => service.query(record, (settings) => parseQuery(body, settings));

/** Every page of a browse, by cursor. */
async function allPages(body: Record<string, unknown>) {
  const ids: string[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const answer = await query({ ...body, ...(cursor && { cursor }) });
    ids.push(...answer.hits.map((h) => h.id));
    expect(answer.total).toBe(body.filter ? docs.filter((d) => d.group === 'g1').length : COUNT);
    cursor = answer.nextCursor ?? undefined;
    pages++;
  } while (cursor);
  return { ids, pages };
}

/** The service's order, computed here: by each key (absent last either way), then id, text in code point order. */
function expected(sort: SortKey[], only = (_: (typeof docs)[number]) => true): string[] {
  const compare = (a: unknown, b: unknown) => (typeof a === 'string' ? codePointOrder(a, b as string) : Number(a) - Number(b));
  return docs.filter(only).sort((x, y) => {
    for (const { field, order } of sort) {
      const a = (x as any)[field];
      const b = (y as any)[field];
      if (a === undefined || b === undefined) {
        if (a !== b) return a === undefined ? 1 : -1;
        continue;
      }
      const c = compare(a, b) * (order === 'desc' ? -1 : 1);
      if (c !== 0) return c;
    }
    return codePointOrder(x.id, y.id);
  }).map((d) => d.id);
}

describe('a browse (no q): the engine orders and cuts each page', () => {
  it('threat: a browse page reads its own documents (limit + 1), not the 1,000 first of every match with every match\'s keys, on any page', async () => {
    asked.length = 0;
    const first = await query({ sort: [{ field: 'rank', order: 'desc' }], limit: 20 });
    const second = await query({ sort: [{ field: 'rank', order: 'desc' }], limit: 20, cursor: first.nextCursor });
    expect(second.hits).toHaveLength(20);
    expect(asked.map((a) => a.plan.candidates)).toEqual([21, 21]);
    expect(asked.map((a) => a.documents)).toEqual([21, 21]);
    expect(asked[1]!.plan.after).toEqual([first.hits.at(-1)!.document.rank ?? null, first.hits.at(-1)!.id]);
  });

  it('the pages are the whole order, each document once, past the 1,000 a query with q reaches: by id, by number (ties, absent), by text (beyond U+FFFF), by boolean, two keys, with a filter', async () => {
    const cases: { sort?: SortKey[]; filter?: boolean }[] = [
      {}, { sort: [{ field: 'rank', order: 'desc' }] }, { sort: [{ field: 'tag', order: 'asc' }] },
      { sort: [{ field: 'flag', order: 'asc' }, { field: 'rank', order: 'asc' }] }, { sort: [{ field: 'tag', order: 'desc' }, { field: 'flag', order: 'desc' }], filter: true },
    ];
    for (const { sort, filter } of cases) {
      const { ids, pages } = await allPages({ limit: 100, ...(sort && { sort }), ...(filter && { filter: { group: 'g1' } }) });
      const want = expected(sort ?? [], filter ? (d) => d.group === 'g1' : undefined);
      expect(ids).toEqual(want);
      expect(pages).toBe(Math.ceil(want.length / 100));
    }
  });

  it('facets of a browse are those of its first 1,000 in order, on every page', async () => {
    const body = { sort: [{ field: 'rank', order: 'asc' }], facets: ['group'], limit: 50 };
    const first = await query(body);
    const later = await query({ ...body, cursor: first.nextCursor });
    expect(later.facets).toEqual(first.facets);
    expect(first.facets!.group!.values.reduce((n, v) => n + v.count, 0)).toBe(1000);
    expect(later.hits[0]!.id).toBe(expected([{ field: 'rank', order: 'asc' }])[50]);
  });

  it('a cursor whose key is not one of this order (another type, an object, a quote in an id, too short) is a validation error, never a fault', async () => {
    const first = await query({ sort: [{ field: 'rank', order: 'asc' }], limit: 5 });
    const decoded = JSON.parse(Buffer.from(first.nextCursor!, 'base64url').toString('utf8'));
    const forged = (k: unknown) => Buffer.from(JSON.stringify({ ...decoded, k })).toString('base64url');
    for (const k of [['x', 'd1'], [{ a: 1 }, 'd1'], [1], [1, 2], [true, 'd1'], [1, 'd1', 'd2']]) {
      await expect(query({ sort: [{ field: 'rank', order: 'asc' }], limit: 5, cursor: forged(k) })).rejects.toMatchObject({ code: 'validation_error' } satisfies Partial<AppError>);
    }
    // A quote stays inside its literal: the page after it, not a widened WHERE.
    const quoted = await query({ sort: [{ field: 'rank', order: 'asc' }], limit: 5, cursor: forged([null, "d' OR '1'='1"]) });
    expect(quoted.hits.map((h) => h.id)).toEqual(expected([{ field: 'rank', order: 'asc' }]).filter((id) => docs.find((d) => d.id === id)!.rank === undefined && codePointOrder(id, "d' OR '1'='1") > 0).slice(0, 5));
  });

  it("lance#5290: the engine cannot order by a column the query does not select; the adapter selects the order's columns", async () => {
    const engineModule = await loadLance();
    const db = await engineModule.connect(dir);
    const table = await db.openTable((await db.tableNames()).find((t) => t.includes('_browse_g'))!);
    await expect(table.query().select(['id']).orderBy([{ columnName: 'f1', ascending: true }]).limit(3).toArray()).rejects.toThrow(/_rowaddr|_rowid/);
    expect(await table.query().select(['id', 'f1']).orderBy([{ columnName: 'f1', ascending: true }]).limit(3).toArray()).toHaveLength(3);
  });
});
