/**
 * Search indexes over HTTP on the local stack (LanceDB in a directory of the stack's own): the
 * index's round trip, what a query can do (prefix, typos, filters, sort, facets, highlights,
 * cursor, all and any terms), writes from many callers, purge, and refusals naming the field.
 */
import { describe, expect, it } from 'vitest';
import { call, useLocalStack } from '../support/local-stack.js';

const stack = useLocalStack();

let counter = 0;
/** A fresh account with its own index made with `settings`, and helpers bound to it. */
async function tenant(settings: Record<string, unknown> = BOOKS) {
  const n = ++counter;
  const account = `search-user-${n}`;
  const token = await stack.token(account);
  const base = `/storage/search/books-${n}`;
  const put = await call(stack, 'PUT', base, { token, body: settings });
  expect(put.status, put.text).toBe(201);
  const upsert = async (documents: unknown[], query = '') => {
    const res = await call(stack, 'POST', `${base}/documents${query}`, { token, body: { documents } });
    expect(res.status, res.text).toBe(200);
    return res.json.data;
  };
  const query = async (body: Record<string, unknown>) => {
    const res = await call(stack, 'POST', `${base}/query`, { token, body });
    expect(res.status, res.text).toBe(200);
    return res.json.data as { hits: { id: string; score: number; document: Record<string, unknown>; highlights?: Record<string, string> }[]; total: number; total_relation: string; facets?: Record<string, { values: { value: unknown; count: number }[]; exhaustive: boolean }>; next_cursor: string | null; took_ms: number };
  };
  const ids = async (body: Record<string, unknown>) => (await query(body)).hits.map((h) => h.id);
  return { account, token, base, upsert, query, ids };
}

const BOOKS = {
  searchable_fields: [{ field: 'title', weight: 3 }, 'body'],
  filterable_fields: [{ field: 'genre', type: 'string' }, { field: 'year', type: 'number' }, { field: 'in_print', type: 'boolean' }],
  sortable_fields: [{ field: 'year', type: 'number' }, { field: 'title', type: 'string' }],
};
const LIBRARY = [
  { id: 'b1', title: 'The Hobbit', body: 'A hobbit goes on an adventure with dwarves and a wizard', genre: 'fantasy', year: 1937, in_print: true },
  { id: 'b2', title: 'Dune', body: 'Spice, sandworms and a desert planet called Arrakis', genre: 'science-fiction', year: 1965, in_print: true },
  { id: 'b3', title: 'Foundation', body: 'A mathematician predicts the fall of a galactic empire', genre: 'science-fiction', year: 1951, in_print: false },
  { id: 'b4', title: 'The Silmarillion', body: 'The elder days of Middle-earth, elves and the wizard Olorin', genre: 'fantasy', year: 1977, in_print: true },
  { id: 'b5', title: 'Neuromancer', body: 'A hacker in cyberspace and a desert of the real', genre: 'science-fiction', year: 1984 },
];

describe('search indexes', () => {
  it('round trip: create, list, read, write, get, query, delete', async () => {
    const t = await tenant();
    const info = await call(stack, 'GET', t.base, { token: t.token });
    expect(info.json.data).toMatchObject({ name: t.base.split('/').pop(), id_field: 'id', searchable_fields: [{ field: 'title', weight: 3 }, { field: 'body', weight: 1 }], documents: 0, max_documents: 1_000_000 });
    expect((await t.upsert(LIBRARY)).ids).toEqual(['b1', 'b2', 'b3', 'b4', 'b5']);
    const list = await call(stack, 'GET', '/storage/search', { token: t.token });
    expect(list.json.data.indexes.map((i: { name: string; documents: number }) => [i.name, i.documents])).toEqual([[t.base.split('/').pop(), 5]]);
    const one = await call(stack, 'GET', `${t.base}/documents/b2`, { token: t.token });
    expect(one.json.data).toEqual({ id: 'b2', document: LIBRARY[1] });
    const put = await call(stack, 'PUT', `${t.base}/documents/b6`, { token: t.token, body: { title: 'Hyperion', body: 'Pilgrims and the Shrike', genre: 'science-fiction', year: 1989 } });
    expect(put.status, put.text).toBe(200);
    expect(await t.ids({ q: 'shrike' })).toEqual(['b6']);
    expect((await t.query({ q: 'wizard' })).hits.map((h) => h.id).sort()).toEqual(['b1', 'b4']);
    expect((await call(stack, 'DELETE', `${t.base}/documents/b6`, { token: t.token })).status).toBe(204);
    expect((await call(stack, 'GET', `${t.base}/documents/b6`, { token: t.token })).status).toBe(404);
    expect(await t.ids({ q: 'shrike' })).toEqual([]);
    expect((await call(stack, 'DELETE', t.base, { token: t.token })).status).toBe(204);
    expect((await call(stack, 'GET', t.base, { token: t.token })).status).toBe(404);
  });

  it('ranks by field weight, matches the last word as a prefix and words within a typo', async () => {
    const t = await tenant();
    await t.upsert(LIBRARY, '?wait=true');
    // "desert" is in b2's and b5's body; "dune" in b2's title (weight 3).
    expect((await t.ids({ q: 'dune desert', match: 'any' }))[0]).toBe('b2');
    expect(await t.ids({ q: 'silmar' })).toEqual(['b4']);
    expect(await t.ids({ q: 'silmar', prefix: false })).toEqual([]);
    expect(await t.ids({ q: 'the silmar' })).toEqual(['b4']);
    // One edit in a word of 5+ characters; none in shorter words.
    expect(await t.ids({ q: 'hobit' })).toEqual(['b1']);
    expect(await t.ids({ q: 'hobbt wizrd' })).toEqual(['b1']);
    expect(await t.ids({ q: 'fondation' })).toEqual(['b3']);
    expect(await t.ids({ q: 'fondation', typo_tolerance: false })).toEqual([]);
    expect(await t.ids({ q: 'dnue', prefix: false })).toEqual([]);
  });

  it('all terms: every hit holds every word, and an unknown word matches nothing', async () => {
    const t = await tenant();
    await t.upsert(LIBRARY, '?wait=true');
    expect((await t.ids({ q: 'wizard hobbit' }))).toEqual(['b1']);
    expect((await t.ids({ q: 'wizard hobbit', match: 'any' })).sort()).toEqual(['b1', 'b4']);
    expect(await t.ids({ q: 'wizard zzzunknownword', prefix: false })).toEqual([]);
  });

  it('filters with eq, ranges, in, and/or/not; sorts; counts facets; highlights', async () => {
    const t = await tenant();
    await t.upsert(LIBRARY, '?wait=true');
    expect((await t.ids({ filter: { genre: 'fantasy' } }))).toEqual(['b1', 'b4']);
    expect((await t.ids({ filter: { year: { gte: 1951, lt: 1977 } } }))).toEqual(['b2', 'b3']);
    expect((await t.ids({ filter: { genre: { in: ['fantasy', 'horror'] }, year: { gt: 1940 } } }))).toEqual(['b4']);
    expect((await t.ids({ filter: { or: [{ year: 1937 }, { year: 1984 }] } }))).toEqual(['b1', 'b5']);
    expect((await t.ids({ filter: { not: { in_print: true } } }))).toEqual(['b3', 'b5']);
    expect((await t.ids({ filter: { in_print: { exists: false } } }))).toEqual(['b5']);
    expect((await t.ids({ q: 'desert', filter: { year: { gt: 1970 } } }))).toEqual(['b5']);
    expect(await t.ids({ sort: ['year:desc'] })).toEqual(['b5', 'b4', 'b2', 'b3', 'b1']);
    expect(await t.ids({ q: 'a', sort: [{ field: 'year', order: 'asc' }] })).toEqual(['b1', 'b3', 'b2', 'b4', 'b5']);
    const faceted = await t.query({ q: '', facets: ['genre', 'in_print'] });
    expect(faceted.total).toBe(5);
    expect(faceted.total_relation).toBe('eq');
    expect(faceted.facets).toEqual({
      genre: { values: [{ value: 'science-fiction', count: 3 }, { value: 'fantasy', count: 2 }], exhaustive: true },
      in_print: { values: [{ value: true, count: 3 }, { value: false, count: 1 }], exhaustive: true },
    });
    const lit = await t.query({ q: 'wizard hob', highlight: true });
    expect(lit.hits[0]!.highlights).toEqual({
      title: 'The <mark>Hobbit</mark>',
      body: 'A <mark>hobbit</mark> goes on an adventure with dwarves and a <mark>wizard</mark>',
    });
    const tagged = await t.query({ q: 'earth', highlight: { fields: ['body'], pre_tag: '[', post_tag: ']' } });
    expect(tagged.hits[0]!.highlights).toEqual({ body: 'The elder days of Middle-[earth], elves and the wizard Olorin' });
  });

  it('pages with a stable cursor, in rank or sort order, with no repeats or gaps', async () => {
    const t = await tenant();
    await t.upsert(Array.from({ length: 45 }, (_, i) => ({ id: `p${String(i).padStart(2, '0')}`, title: `page ${i % 3 === 0 ? 'page' : ''}`, body: 'paging', year: 2000 + (i % 7) })), '?wait=true');
    for (const body of [{ q: 'paging page' , match: 'any' }, { q: '', sort: ['year:asc'] }, { q: 'paging' }]) {
      const seen: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await t.query({ ...body, limit: 10, ...(cursor && { cursor }) });
        seen.push(...page.hits.map((h) => h.id));
        cursor = page.next_cursor ?? undefined;
      } while (cursor);
      expect(seen.length).toBe(45);
      expect(new Set(seen).size).toBe(45);
    }
    const res = await call(stack, 'POST', `${t.base}/query`, { token: t.token, body: { q: 'other', cursor: (await t.query({ q: 'paging', limit: 5 })).next_cursor } });
    expect(res.status).toBe(400);
    expect(res.json.message).toMatch(/cursor/);
  });

  it('writes from many callers at once lose nothing', async () => {
    const t = await tenant();
    await Promise.all(Array.from({ length: 20 }, (_, w) => t.upsert(Array.from({ length: 25 }, (_, i) => ({ id: `w${w}-${i}`, title: `writer ${w}`, body: `doc ${i}` })))));
    const info = await call(stack, 'GET', t.base, { token: t.token });
    expect(info.json.data.documents).toBe(500);
    expect((await t.query({ q: 'writer' })).total).toBe(500);
  });

  it('all-terms results after 300 updates hold every term', async () => {
    const t = await tenant({ searchable_fields: ['text'] });
    const words = ['red', 'green', 'blue', 'cyan', 'magenta', 'yellow'];
    const textOf = (i: number, round: number) => `${words[(i + round) % 6]} ${words[(i * 2 + round) % 6]} item`;
    await t.upsert(Array.from({ length: 200 }, (_, i) => ({ id: `d${i}`, text: textOf(i, 0) })), '?wait=true');
    // 300 updates in 30 calls of 10: each changes the words of documents already indexed (most of the
    // 200 by the end). The adapter's check at 1,000 updates: test/handlers/search-engine.test.ts.
    for (let round = 1; round <= 30; round++) {
      await t.upsert(Array.from({ length: 10 }, (_, k) => {
        const i = (round * 13 + k * 17) % 200;
        return { id: `d${i}`, text: textOf(i, round) };
      }));
    }
    for (const q of ['red blue', 'green magenta', 'cyan yellow item']) {
      const hits = (await t.query({ q, prefix: false, typo_tolerance: false, limit: 100 })).hits;
      for (const hit of hits) for (const word of q.split(' ')) expect(String(hit.document.text).split(' ')).toContain(word);
    }
  });

  it("another account's index is 404, like a missing one", async () => {
    const t = await tenant();
    await t.upsert(LIBRARY);
    const other = await stack.token('search-intruder');
    for (const [method, path, body] of [['GET', t.base], ['POST', `${t.base}/query`, { q: 'dune' }], ['GET', `${t.base}/documents/b1`], ['POST', `${t.base}/documents`, { documents: [{ id: 'x' }] }], ['DELETE', `${t.base}/purge`]] as const) {
      const res = await call(stack, method, path, { token: other, ...(body && { body }) });
      expect(res.status, `${method} ${path}`).toBe(404);
    }
    expect((await call(stack, 'GET', '/storage/search', { token: other })).json.data.indexes).toEqual([]);
  });

  it('bad settings, documents and queries are 400 naming the field; nothing is written', async () => {
    const t = await tenant();
    const refused = async (method: string, path: string, body: unknown, field: RegExp) => {
      const res = await call(stack, method, path, { token: t.token, body });
      expect(res.status, res.text).toBe(400);
      expect(res.json).toMatchObject({ error: 'validation_error' });
      expect(res.json.message).toMatch(field);
    };
    await refused('PUT', '/storage/search/bad-1', { searchable_fields: [] }, /searchable_fields/);
    await refused('PUT', '/storage/search/bad-1', { searchable_fields: [{ field: 'title', weight: 0 }] }, /searchable_fields\[0\]\.weight/);
    await refused('PUT', '/storage/search/bad-1', { searchable_fields: ['t'], filterable_fields: [{ field: 'x', type: 'date' }] }, /filterable_fields\[0\]\.type/);
    await refused('PUT', '/storage/search/bad-1', { searchable_fields: ['t'], max_documents: 0 }, /max_documents/);
    await refused('PUT', '/storage/search/bad-1', { searchable_fields: ['t'], colour: 1 }, /colour/);
    await refused('POST', `${t.base}/documents`, { documents: [{ id: 'ok', title: 'x' }, { title: 'no id' }] }, /documents\[1\]\.id/);
    await refused('POST', `${t.base}/documents`, { documents: [{ id: 'y', year: 'nineteen' }] }, /documents\[0\]\.year/);
    await refused('POST', `${t.base}/query`, { q: 'x', filter: { author: 'me' } }, /filter\.author/);
    await refused('POST', `${t.base}/query`, { filter: { year: { gte: 'now' } } }, /filter\.year\.gte/);
    await refused('POST', `${t.base}/query`, { filter: { year: { near: 3 } } }, /filter\.year\.near/);
    await refused('POST', `${t.base}/query`, { sort: ['genre:asc'] }, /sort\[0\]/);
    await refused('POST', `${t.base}/query`, { facets: ['body'] }, /facets\[0\]/);
    await refused('POST', `${t.base}/query`, { limit: 1000 }, /limit/);
    expect((await call(stack, 'GET', t.base, { token: t.token })).json.data.documents).toBe(0);
    expect((await call(stack, 'GET', '/storage/search/bad-1', { token: t.token })).status).toBe(404);
  });

  it('an index deleted and made again under its name (before the sweep has run) starts empty: the deleted documents never come back, whatever the new settings', async () => {
    const t = await tenant();
    await t.upsert(LIBRARY);
    expect((await call(stack, 'DELETE', t.base, { token: t.token })).status).toBe(204);
    const again = await call(stack, 'PUT', t.base, { token: t.token, body: BOOKS });
    expect(again.status, again.text).toBe(201);
    expect(again.json.data.documents).toBe(0);
    expect((await call(stack, 'GET', `${t.base}/documents/b1`, { token: t.token })).status).toBe(404);
    expect(await t.ids({ q: 'hobbit' })).toEqual([]);
    expect(await t.ids({ q: '' })).toEqual([]);
    // Other fields than the deleted index had: its writes and queries work on a table of these settings.
    expect((await call(stack, 'DELETE', t.base, { token: t.token })).status).toBe(204);
    const other = { searchable_fields: ['name'], filterable_fields: [{ field: 'year', type: 'string' }] };
    expect((await call(stack, 'PUT', t.base, { token: t.token, body: other })).status).toBe(201);
    await t.upsert([{ id: 'n1', name: 'fresh', year: 'MMXXVI' }]);
    expect(await t.ids({ q: 'fresh', filter: { year: 'MMXXVI' } })).toEqual(['n1']);
    expect(await t.ids({ q: '' })).toEqual(['n1']);
  });

  it('settings: weights change at once; a field change needs a rebuild (409) unless the index is empty', async () => {
    const t = await tenant();
    await t.upsert(LIBRARY, '?wait=true');
    const reweighted = await call(stack, 'PUT', t.base, { token: t.token, body: { ...BOOKS, searchable_fields: ['title', { field: 'body', weight: 10 }], stored_fields: ['title'] } });
    expect(reweighted.status, reweighted.text).toBe(200);
    const hits = (await t.query({ q: 'dune desert', match: 'any' })).hits;
    expect(hits[0]!.document).toEqual({ title: expect.any(String) });
    const refield = await call(stack, 'PUT', t.base, { token: t.token, body: { ...BOOKS, searchable_fields: ['title'] } });
    expect(refield.status).toBe(409);
    expect(refield.json.message).toMatch(/searchable_fields/);
    expect((await call(stack, 'DELETE', `${t.base}/purge`, { token: t.token })).status).toBe(200);
    expect((await call(stack, 'PUT', t.base, { token: t.token, body: { ...BOOKS, searchable_fields: ['title'] } })).status).toBe(200);
  });
});
