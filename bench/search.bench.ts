/**
 * `npm run bench search`: the search engine's indexing throughput and query latency (p50/p99) at
 * 10,000 and 100,000 documents, beside MiniSearch in the same process on the same documents (the
 * in-memory floor: no durability, no files), and what that costs deployed per million queries and
 * per million documents indexed (Lambda compute at the search function's memory; S3 and the commit
 * table's requests per write batch from the adapter's calls).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import MiniSearch from 'minisearch';
import { LanceSearchEngine } from '../functions/adapters/lance/lance-search-engine.js';
import type { IndexRecord } from '../functions/domain/search/types.js';
import { FUNCTIONS } from '../functions/manifest.js';

const prices = JSON.parse(readFileSync(resolve(import.meta.dirname, 'prices.json'), 'utf8')).prices as Record<string, { usd: number }>;

function random(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const VOCABULARY = Array.from({ length: 5000 }, (_, i) => `w${i.toString(36)}${'aeiou'[i % 5]}`);
const words = (next: () => number, n: number) => Array.from({ length: n }, () => VOCABULARY[Math.floor(VOCABULARY.length * next() ** 2.5)]!).join(' ');
/** Documents of about 650 bytes, as the engine probe used. */
const documents = (count: number) => {
  const next = random(count);
  return Array.from({ length: count }, (_, i) => ({ id: `d${i}`, title: words(next, 6), body: words(next, 90), category: `c${i % 8}` }));
};
const percentile = (values: number[], p: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))]!;

async function run(count: number) {
  const docs = documents(count);
  const queries = Array.from({ length: 200 }, (_, i) => words(random(1000 + i), 1 + (i % 3)));
  const dir = mkdtempSync(join(tmpdir(), 'flowgate-search-bench-'));
  try {
    const engine = new LanceSearchEngine({ uri: dir, backgroundIndexing: false });
    const record: IndexRecord = {
      accountId: 'bench', name: `n${count}`, generation: 1, createdAt: '', updatedAt: '',
      settings: { idField: 'id', searchable: [{ field: 'title', weight: 3 }, { field: 'body', weight: 1 }], filterable: [{ field: 'category', type: 'string' }], sortable: [], stored: null, maxDocuments: 10_000_000 },
    };
    await engine.saveIndex(record, { isNew: true });
    let started = performance.now();
    for (let i = 0; i < docs.length; i += 1000) await engine.upsert(record, docs.slice(i, i + 1000).map((doc) => ({ id: doc.id, doc })));
    const writeMs = performance.now() - started;
    started = performance.now();
    await engine.indexNow(record);
    const indexMs = performance.now() - started;
    const lanceTimes: number[] = [];
    for (const q of queries) {
      const t = performance.now();
      await engine.search(record, { words: q.split(' '), match: 'all', prefix: true, typos: true, candidates: 1000 });
      lanceTimes.push(performance.now() - t);
    }

    started = performance.now();
    const mini = new MiniSearch({ fields: ['title', 'body'], storeFields: ['title'], searchOptions: { boost: { title: 3 }, prefix: true, fuzzy: 0.2, combineWith: 'AND' } });
    mini.addAll(docs);
    const miniIndexMs = performance.now() - started;
    const miniTimes: number[] = [];
    for (const q of queries) {
      const t = performance.now();
      mini.search(q);
      miniTimes.push(performance.now() - t);
    }
    const result = {
      documents: count,
      lance_docs_per_second: Math.round(count / ((writeMs + indexMs) / 1000)),
      lance_write_ms: Math.round(writeMs), lance_index_ms: Math.round(indexMs),
      lance_query_p50_ms: +percentile(lanceTimes, 0.5).toFixed(2), lance_query_p99_ms: +percentile(lanceTimes, 0.99).toFixed(2),
      minisearch_docs_per_second: Math.round(count / (miniIndexMs / 1000)),
      minisearch_query_p50_ms: +percentile(miniTimes, 0.5).toFixed(2), minisearch_query_p99_ms: +percentile(miniTimes, 0.99).toFixed(2),
    };
    console.log(JSON.stringify(result));
    return result;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export default async function searchBench() {
  const runs = [await run(10_000), await run(100_000)];
  const at100k = runs[1]!;
  const gb = FUNCTIONS.search.memoryMb / 1024;
  // Per query: one invocation, its compute at the measured p50 (this machine; Lambda's arm64 core is of a similar class, unverified).
  const perMillionQueries = 1e6 * (prices.lambda_request!.usd + gb * (at100k.lance_query_p50_ms / 1000) * prices.lambda_arm64_gb_second!.usd);
  // Per document indexed, in batches of 1,000: the batch's compute (write and index time per document) and its invocation.
  const perMillionDocs = 1e6 * (prices.lambda_request!.usd / 1000 + gb * ((at100k.lance_write_ms + at100k.lance_index_ms) / 1000 / at100k.documents) * prices.lambda_arm64_gb_second!.usd);
  const cost = {
    usd_per_million_queries_compute: +perMillionQueries.toFixed(3),
    usd_per_million_documents_indexed_compute: +perMillionDocs.toFixed(3),
    not_counted: 'S3 GET/PUT and the commit table\'s requests per query and per batch (not measurable against the local filesystem; a deployed smoke test is to measure them), and storage',
  };
  console.log(JSON.stringify(cost));
  return { runs, cost };
}
