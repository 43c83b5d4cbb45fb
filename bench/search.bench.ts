/**
 * `npm run bench search`: the search engine's indexing throughput and query latency (p50/p99) at
 * 10,000 and 100,000 documents, a browse's page (no words: first, middle, sorted, filtered) beside a
 * one-word query, beside MiniSearch in the same process on the same documents (the
 * in-memory floor: no durability, no files); the S3 and commit-table requests of each operation
 * over `s3+ddb://` as deployed (counted at s3rver and dynalite); and what that costs per million
 * queries and per million documents indexed (those requests, API Gateway, Lambda requests and
 * compute at this machine's timings).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import MiniSearch from 'minisearch';
import { LanceSearchEngine } from '../functions/adapters/lance/lance-search-engine.js';
import type { IndexRecord, SearchPlan, SortKey } from '../functions/domain/search/types.js';
import { FUNCTIONS } from '../functions/manifest.js';
import { DEPLOYED_READ_CONSISTENCY_SECONDS } from '../functions/domain/search/limits.js';
import { dynamodbTotal, s3Total, type RequestCounts } from './support/request-counter.js';
import { measureRequests, startCountedSearch, type RequestsPerOperation } from './support/search-requests.js';
import { seededRandom, skewedWords } from './support/synthetic-text.js';

const prices = JSON.parse(readFileSync(resolve(import.meta.dirname, 'prices.json'), 'utf8')).prices as Record<string, { usd: number }>;

const words = skewedWords(5000);
/** Documents of about 650 bytes, as the engine probe used. */
const documents = (count: number) => {
  const next = seededRandom(count);
  return Array.from({ length: count }, (_, i) => ({ id: `d${i}`, title: words(next, 6), body: words(next, 90), category: `c${i % 8}`, rank: Math.floor(next() * 1000) }));
};
const percentile = (values: number[], p: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))]!;

/** Sizes measured, each a prefix of the same documents: each engine indexes once, growing its index from one size to the next. */
const SIZES = [10_000, 100_000] as const;
/**
 * Queries timed per size, the same for both engines: 1 to 3 words (prefix on the last, typos on).
 * MiniSearch at 100,000 documents takes about a second a query, so a few dozen keep the whole
 * `npm run bench` within its ten minutes; p99 of 40 is the slowest of the 40.
 */
const QUERIES = Array.from({ length: 40 }, (_, i) => words(seededRandom(1000 + i), 1 + (i % 3)));
/**
 * A browse (no words) beside a one-word query, timed alternately in the same run, 20 each: a page of
 * 20 as the service asks for it (21 candidates), the first and one from the middle (its cursor's key),
 * by id and sorted by a number field; and filtered to one of the 8 categories.
 */
const BROWSES = 20;
const ONE_WORD = Array.from({ length: BROWSES }, (_, i) => words(seededRandom(3000 + i), 1));

interface SizeResult {
  documents: number;
  lance_docs_per_second: number;
  lance_write_ms: number;
  lance_index_ms: number;
  lance_query_p50_ms: number;
  lance_query_p99_ms: number;
  lance_one_word_p50_ms: number;
  lance_browse_p50_ms: number;
  lance_browse_middle_p50_ms: number;
  lance_browse_sorted_p50_ms: number;
  lance_browse_sorted_middle_p50_ms: number;
  lance_browse_filtered_p50_ms: number;
  minisearch_docs_per_second: number;
  minisearch_query_p50_ms: number;
  minisearch_query_p99_ms: number;
}

async function timeQueries(search: (q: string) => unknown): Promise<number[]> {
  const times: number[] = [];
  for (const q of QUERIES) {
    const t = performance.now();
    await search(q);
    times.push(performance.now() - t);
  }
  return times;
}

/**
 * LanceDB: one index, documents written in batches of 1,000 then indexed, up to each size in turn.
 * A size's throughput counts every write and index build since the start (the build at 10,000
 * included in 100,000's): what it took to get there.
 */
async function lance(docs: ReturnType<typeof documents>, dir: string) {
  const engine = new LanceSearchEngine({ uri: dir });
  const record: IndexRecord = {
    accountId: 'bench', name: 'bench', generation: 1, createdAt: '', updatedAt: '',
    settings: { idField: 'id', searchable: [{ field: 'title', weight: 3 }, { field: 'body', weight: 1 }], filterable: [{ field: 'category', type: 'string' }], sortable: [{ field: 'rank', type: 'number' }], stored: null, maxDocuments: 10_000_000 },
  };
  await engine.saveIndex(record, { isNew: true });
  const results = [];
  let writeMs = 0;
  let indexMs = 0;
  let written = 0;
  for (const size of SIZES) {
    let started = performance.now();
    for (; written < size; written += 1000) await engine.upsert(record, docs.slice(written, written + 1000).map((doc) => ({ id: doc.id, doc })));
    writeMs += performance.now() - started;
    started = performance.now();
    await engine.indexNow(record);
    indexMs += performance.now() - started;
    const times = await timeQueries((q) => engine.search(record, { words: q.split(' '), match: 'all', prefix: true, typos: true, candidates: 1000 }));
    results.push({ writeMs, indexMs, times, browse: await timeBrowses(engine, record, size) });
  }
  return results;
}

/** Median milliseconds of each browse kind and of one-word queries, alternating, so load changes hit all alike. */
async function timeBrowses(engine: LanceSearchEngine, record: IndexRecord, size: number) {
  const base: SearchPlan = { words: [], match: 'all', prefix: true, typos: true, candidates: 21 };
  const sorted: SortKey[] = [{ field: 'rank', order: 'desc' }];
  const kinds: Record<string, (i: number) => Promise<unknown>> = {
    one_word: (i) => engine.search(record, { ...base, words: [ONE_WORD[i]!], candidates: 1000 }),
    browse: () => engine.search(record, base),
    browse_middle: () => engine.search(record, { ...base, after: [`d${size / 2}`] }),
    browse_sorted: () => engine.search(record, { ...base, sort: sorted }),
    browse_sorted_middle: () => engine.search(record, { ...base, sort: sorted, after: [500, 'd0'] }),
    browse_filtered: () => engine.search(record, { ...base, filter: { kind: 'compare', field: 'category', op: 'eq', value: 'c3' } }),
  };
  const times = Object.fromEntries(Object.keys(kinds).map((kind) => [kind, [] as number[]]));
  for (let i = 0; i < BROWSES; i++) {
    for (const [kind, run] of Object.entries(kinds)) {
      const t = performance.now();
      await run(i);
      times[kind]!.push(performance.now() - t);
    }
  }
  return Object.fromEntries(Object.entries(times).map(([kind, list]) => [kind, +percentile(list, 0.5).toFixed(2)])) as Record<keyof typeof kinds, number>;
}

/** MiniSearch, in memory: the same documents added up to each size in turn, the same queries. */
async function minisearch(docs: ReturnType<typeof documents>) {
  const mini = new MiniSearch({ fields: ['title', 'body'], storeFields: ['title'], searchOptions: { boost: { title: 3 }, prefix: true, fuzzy: 0.2, combineWith: 'AND' } });
  const results = [];
  let indexMs = 0;
  let added = 0;
  for (const size of SIZES) {
    const started = performance.now();
    mini.addAll(docs.slice(added, size));
    added = size;
    indexMs += performance.now() - started;
    results.push({ indexMs, times: await timeQueries((q) => mini.search(q)) });
  }
  return results;
}

async function runSizes(): Promise<SizeResult[]> {
  const docs = documents(SIZES.at(-1)!);
  const dir = mkdtempSync(join(tmpdir(), 'flowgate-search-bench-'));
  try {
    const lanceRuns = await lance(docs, dir);
    const miniRuns = await minisearch(docs);
    return SIZES.map((count, i) => {
      const l = lanceRuns[i]!;
      const m = miniRuns[i]!;
      const result = {
        documents: count,
        lance_docs_per_second: Math.round(count / ((l.writeMs + l.indexMs) / 1000)),
        lance_write_ms: Math.round(l.writeMs), lance_index_ms: Math.round(l.indexMs),
        lance_query_p50_ms: +percentile(l.times, 0.5).toFixed(2), lance_query_p99_ms: +percentile(l.times, 0.99).toFixed(2),
        lance_one_word_p50_ms: l.browse.one_word!, lance_browse_p50_ms: l.browse.browse!, lance_browse_middle_p50_ms: l.browse.browse_middle!,
        lance_browse_sorted_p50_ms: l.browse.browse_sorted!, lance_browse_sorted_middle_p50_ms: l.browse.browse_sorted_middle!, lance_browse_filtered_p50_ms: l.browse.browse_filtered!,
        minisearch_docs_per_second: Math.round(count / (m.indexMs / 1000)),
        minisearch_query_p50_ms: +percentile(m.times, 0.5).toFixed(2), minisearch_query_p99_ms: +percentile(m.times, 0.99).toFixed(2),
      };
      console.log(JSON.stringify(result));
      return result;
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** SQS requests of one maintenance job: its send, its receive and its delete (the event source mapping's). */
const SQS_REQUESTS_PER_JOB = 3;

/** The priced classes of S3 and DynamoDB requests in some counts. */
function requestCost(counts: RequestCounts): number {
  const putClass = counts.s3.PUT + counts.s3.POST + counts.s3.LIST;
  const getClass = counts.s3.GET + counts.s3.HEAD;
  const writes = counts.dynamodb.PutItem ?? 0;
  // The commit table's reads: each a Query of one small item, priced as a strongly consistent read unit (the upper bound).
  const reads = dynamodbTotal(counts) - writes;
  return putClass * prices.s3_put_request!.usd + getClass * prices.s3_get_request!.usd + writes * prices.dynamodb_write_request_unit!.usd + reads * prices.dynamodb_read_request_unit!.usd;
}

/**
 * S3 and commit-table requests per operation over `s3+ddb://` (s3rver and dynalite, counted at the
 * servers), with 10,000 documents and the deployed read-consistency interval.
 */
async function runRequests(): Promise<RequestsPerOperation> {
  const counted = await startCountedSearch();
  try {
    const docs = documents(REQUEST_DOCUMENTS);
    const requests = await measureRequests(counted, docs, QUERIES.slice(0, 21), { readConsistencySeconds: DEPLOYED_READ_CONSISTENCY_SECONDS });
    for (const [operation, counts] of Object.entries(requests)) console.log(JSON.stringify({ operation, s3: counts.s3, s3_total: +s3Total(counts).toFixed(1), dynamodb: counts.dynamodb }));
    return requests;
  } finally {
    await counted.stop();
  }
}
const REQUEST_DOCUMENTS = 10_000;

export default async function searchBench() {
  const runs = await runSizes();
  const requests = await runRequests();
  const at10k = runs[0]!;
  const at100k = runs[1]!;
  const gb = FUNCTIONS.search.memoryMb / 1024;
  // The search function runs on x86_64 (its engine's binary is the lock's x64 one): that architecture's price.
  const gbSecond = prices[`lambda_${FUNCTIONS.search.architecture ?? 'arm64'}_gb_second`]!.usd;
  const maintenanceGb = FUNCTIONS.searchMaintenance.memoryMb / 1024;
  // Per query: the API call, one invocation, its compute at the measured p50 at 10,000 documents (this machine's x86-64
  // core against local files: Lambda's duration over S3 is longer), its S3 and commit-table requests warm.
  const queryCompute = gb * (at10k.lance_query_p50_ms / 1000) * gbSecond;
  const queryRequests = requestCost(requests.warm_query);
  const perMillionQueries = 1e6 * (prices.api_gateway_http_request!.usd + prices.lambda_request!.usd + queryCompute + queryRequests);
  // Per document, in batches of 1,000, each taken in by its own maintenance job (a batch in every window; fewer jobs when
  // batches come faster): the batch's call, invocation and write time, the job's send/receive/delete, invocation and
  // index time, and both one's requests.
  const writeSeconds = at100k.lance_write_ms / 1000 / at100k.documents * 1000;
  const indexSeconds = at100k.lance_index_ms / 1000 / at100k.documents * 1000;
  const perBatch = prices.api_gateway_http_request!.usd + 2 * prices.lambda_request!.usd + SQS_REQUESTS_PER_JOB * prices.sqs_request!.usd
    + gb * writeSeconds * gbSecond + maintenanceGb * indexSeconds * gbSecond
    + requestCost(requests.batch_write_1000) + requestCost(requests.maintenance_per_1000);
  const perMillionDocs = 1e3 * perBatch;
  // One document a call (`PUT …/documents/{id}`): each is a commit of its own; compute at the batch's per-document write time (a floor).
  const perSingle = prices.api_gateway_http_request!.usd + prices.lambda_request!.usd + gb * (writeSeconds / 1000) * gbSecond + requestCost(requests.single_write);
  const cost = {
    usd_per_million_queries: +perMillionQueries.toFixed(2),
    usd_per_million_queries_s3_and_commit_table: +(1e6 * queryRequests).toFixed(2),
    usd_per_million_queries_lambda: +(1e6 * (prices.lambda_request!.usd + queryCompute)).toFixed(2),
    usd_per_million_documents_indexed: +perMillionDocs.toFixed(2),
    usd_per_million_single_document_writes: +(1e6 * perSingle).toFixed(2),
    usd_per_million_documents_s3_and_commit_table: +(1e3 * (requestCost(requests.batch_write_1000) + requestCost(requests.maintenance_per_1000))).toFixed(2),
    basis: `queries: warm, ${REQUEST_DOCUMENTS} documents, 10 hits with prefix and typos, p50 ${at10k.lance_query_p50_ms} ms (this machine); `
      + `documents: batches of 1,000, one maintenance job each, ${+(writeSeconds * 1000).toFixed(0)} ms write + ${+(indexSeconds * 1000).toFixed(0)} ms index a batch (this machine, at 100,000); `
      + 'single writes: a commit each, their maintenance (at most one job per index per 10 s) not counted; storage not counted',
  };
  console.log(JSON.stringify(cost));
  return { runs, requests, cost };
}
