/**
 * Search-only keys, the keys a web page may hold: `search:query` with one index and an optional
 * fixed filter. One test per threat: a stolen key cannot write, cannot read another index (nor any
 * other route), and its fixed filter cannot be widened by the caller's own filter.
 */
import { describe, expect, it } from 'vitest';
import { call, useLocalStack } from '../support/local-stack.js';

const stack = useLocalStack();

const SETTINGS = { searchable_fields: ['title'], filterable_fields: [{ field: 'tenant', type: 'string' }, { field: 'rank', type: 'number' }] };
const DOCS = [
  { id: 'a1', title: 'alpha report', tenant: 'acme', rank: 1 },
  { id: 'a2', title: 'alpha summary', tenant: 'acme', rank: 2 },
  { id: 'g1', title: 'alpha report', tenant: 'globex', rank: 1 },
  { id: 'g2', title: 'secret alpha plan', tenant: 'globex', rank: 3 },
];

async function setUp() {
  const token = await stack.token('search-keys-owner');
  for (const index of ['catalog', 'private']) {
    expect((await call(stack, 'PUT', `/storage/search/${index}`, { token, body: SETTINGS })).status).toBe(201);
    expect((await call(stack, 'POST', `/storage/search/${index}/documents`, { token, body: { documents: DOCS } })).status).toBe(200);
  }
  const mint = async (body: unknown) => {
    const res = await call(stack, 'POST', '/api-keys', { token, body });
    expect(res.status, res.text).toBe(201);
    return res.json.data.api_key as string;
  };
  const tenantKey = await mint({ scopes: ['search:query'], search: { index: 'catalog', filter: { tenant: 'acme' } } });
  const indexKey = await mint({ scopes: ['search:query'], search: { index: 'catalog' } });
  return { token, tenantKey, indexKey };
}
let setup: ReturnType<typeof setUp> | undefined;
const ready = () => (setup ??= setUp());
const query = (apiKey: string, index: string, body: unknown) => call(stack, 'POST', `/storage/search/${index}/query`, { apiKey, body });
const idsOf = (res: { json: { data: { hits: { id: string }[] } } }) => res.json.data.hits.map((h) => h.id).sort();

describe('search-only keys', () => {
  it('query their index, within their fixed filter', async () => {
    const { tenantKey, indexKey } = await ready();
    const res = await query(tenantKey, 'catalog', { q: 'alpha' });
    expect(res.status, res.text).toBe(200);
    expect(idsOf(res)).toEqual(['a1', 'a2']);
    expect(idsOf(await query(indexKey, 'catalog', { q: 'alpha' }))).toEqual(['a1', 'a2', 'g1', 'g2']);
  });

  it('threat: the caller\'s filter cannot widen the fixed one (or, not, another tenant); facets and totals stay inside it', async () => {
    const { tenantKey } = await ready();
    for (const filter of [{ tenant: 'globex' }, { or: [{ tenant: 'globex' }, { tenant: 'acme' }] }, { not: { tenant: 'acme' } }, { tenant: { in: ['globex', 'acme'] } }, { tenant: { exists: true } }]) {
      const res = await query(tenantKey, 'catalog', { q: 'alpha', filter, facets: ['tenant'] });
      expect(res.status, res.text).toBe(200);
      expect(res.json.data.hits.every((h: { document: { tenant: string } }) => h.document.tenant === 'acme'), JSON.stringify(filter)).toBe(true);
      expect(JSON.stringify(res.json.data.facets)).not.toContain('globex');
    }
    const browse = await query(tenantKey, 'catalog', { q: '', limit: 100 });
    expect(browse.json.data.total).toBe(2);
    expect(idsOf(await query(tenantKey, 'catalog', { q: 'secret' }))).toEqual([]);
  });

  it('threat: it cannot read another index (404, as an index of another account) nor list indexes or read documents', async () => {
    const { tenantKey, indexKey } = await ready();
    for (const key of [tenantKey, indexKey]) {
      expect((await query(key, 'private', { q: 'alpha' })).status).toBe(404);
      expect((await call(stack, 'GET', '/storage/search', { apiKey: key })).status).toBe(403);
      expect((await call(stack, 'GET', '/storage/search/catalog', { apiKey: key })).status).toBe(403);
      expect((await call(stack, 'GET', '/storage/search/catalog/documents/g2', { apiKey: key })).status).toBe(403);
      expect((await call(stack, 'GET', '/storage/kv', { apiKey: key })).status).toBe(403);
    }
  });

  it('threat: it cannot write: no upsert, delete, purge, settings change or index deletion', async () => {
    const { tenantKey, token } = await ready();
    const writes: [string, string, unknown?][] = [
      ['POST', '/storage/search/catalog/documents', { documents: [{ id: 'x', title: 'injected', tenant: 'acme' }] }],
      ['PUT', '/storage/search/catalog/documents/x', { title: 'injected', tenant: 'acme' }],
      ['DELETE', '/storage/search/catalog/documents/a1'],
      ['POST', '/storage/search/catalog/documents/delete', { filter: { tenant: 'acme' } }],
      ['DELETE', '/storage/search/catalog/purge'],
      ['PUT', '/storage/search/catalog', SETTINGS],
      ['DELETE', '/storage/search/catalog'],
    ];
    for (const [method, path, body] of writes) {
      const res = await call(stack, method, path, { apiKey: tenantKey, ...(body !== undefined && { body }) });
      expect(res.status, `${method} ${path}`).toBe(403);
      expect(res.json.error).toBe('forbidden');
    }
    expect((await call(stack, 'GET', '/storage/search/catalog', { token })).json.data.documents).toBe(4);
  });

  it('is minted only as search:query alone, with an index; a bad restriction is a 400 naming the field', async () => {
    const { token } = await ready();
    for (const [body, field] of [
      [{ scopes: ['search:query'] }, /search/],
      [{ scopes: ['search:query', 'storage'], search: { index: 'catalog' } }, /search:query/],
      [{ scopes: ['storage:read'], search: { index: 'catalog' } }, /search/],
      [{ scopes: ['search:query'], search: { index: 'bad name!' } }, /search\.index/],
      [{ scopes: ['search:query'], search: { index: 'catalog', filter: [] } }, /search\.filter/],
      [{ scopes: ['search:query'], search: { index: 'catalog', tenant: 'x' } }, /search\.tenant/],
    ] as const) {
      const res = await call(stack, 'POST', '/api-keys', { token, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.json.message).toMatch(field);
    }
  });

  it('a fixed filter that no longer fits the index refuses the key\'s queries (403) rather than dropping the filter', async () => {
    const { token } = await ready();
    expect((await call(stack, 'PUT', '/storage/search/loose', { token, body: { searchable_fields: ['title'] } })).status).toBe(201);
    const key = (await call(stack, 'POST', '/api-keys', { token, body: { scopes: ['search:query'], search: { index: 'loose', filter: { tenant: 'acme' } } } })).json.data.api_key;
    const res = await query(key, 'loose', { q: 'alpha' });
    expect(res.status).toBe(403);
    expect(res.json.error).toBe('forbidden');
  });
});
