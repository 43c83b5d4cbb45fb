/**
 * The LanceDB adapter through the path the deployed stack uses: its files on S3 (s3rver) with
 * commits serialized through a DynamoDB table (dynalite), `s3+ddb://…?ddbTableName=…`, and several
 * engines (as several function instances) writing to one index at once; what a query asks of S3
 * and DynamoDB, counted at the servers, cold and warm; and how soon another instance's write is seen.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { s3Total, dynamodbTotal } from '../../bench/support/request-counter.js';
import { COMMIT_TABLE, startCountedSearch, type CountedSearch } from '../../bench/support/search-requests.js';
import { DEPLOYED_READ_CONSISTENCY_SECONDS } from '../../functions/domain/search/limits.js';
import type { IndexSettings } from '../../functions/domain/search/types.js';
import { parseQuery } from '../../functions/domain/search/validation.js';
import type { IndexRecord } from '../../functions/domain/search/types.js';
import { LanceSearchEngine } from '../../functions/adapters/lance/lance-search-engine.js';
import { LOCAL_AWS_ENV, LOCAL_OBJECTS_BUCKET } from '../../local/engines.js';

/** One set of engines for the file, with the commit table and counting proxies in front (the tests that count take what they count). */
let counted: CountedSearch;
beforeAll(async () => {
  counted = await startCountedSearch();
}, 60_000);
afterAll(async () => counted?.stop());

describe('LanceDB over s3+ddb (s3rver and dynalite)', () => {
  it('four engines writing to one index at once lose no document', async () => {
    // Straight to the engines, not through the counting proxies: nothing is counted here.
    const env = counted.engines.env;
    const storageOptions = {
      aws_access_key_id: LOCAL_AWS_ENV.AWS_ACCESS_KEY_ID, aws_secret_access_key: LOCAL_AWS_ENV.AWS_SECRET_ACCESS_KEY, aws_region: LOCAL_AWS_ENV.AWS_REGION,
      aws_endpoint: env.AWS_ENDPOINT_URL_S3!, dynamodb_endpoint: env.AWS_ENDPOINT_URL_DYNAMODB!, allow_http: 'true', aws_virtual_hosted_style_request: 'false',
    };
    const uri = `s3+ddb://${LOCAL_OBJECTS_BUCKET}/search?ddbTableName=${COMMIT_TABLE}`;
    const engines = Array.from({ length: 4 }, () => new LanceSearchEngine({ uri, storageOptions }));
    const record: IndexRecord = {
      accountId: 's3-test', name: 'shared', generation: 1, createdAt: '', updatedAt: '',
      settings: { idField: 'id', searchable: [{ field: 'text', weight: 1 }], filterable: [], sortable: [], stored: null, maxDocuments: 1_000_000 },
    };
    await engines[0]!.saveIndex(record, { isNew: true });
    await Promise.all(engines.map(async (engine, w) => {
      for (let batch = 0; batch < 5; batch++) {
        await engine.upsert(record, Array.from({ length: 20 }, (_, i) => ({ id: `w${w}-${batch}-${i}`, doc: { id: `w${w}-${batch}-${i}`, text: `writer ${w} batch ${batch}` } })));
      }
    }));
    expect((await engines[0]!.stats(record)).documents).toBe(400);
    const hits = await engines[1]!.search(record, { words: ['writer'], match: 'all', prefix: false, typos: false, candidates: 1000 });
    expect(hits.candidates).toHaveLength(400);
    // The commits went through the commit table: one row per table version, the index's 20 writes among them.
    const dynamo = DynamoDBDocumentClient.from(new DynamoDBClient({
      region: LOCAL_AWS_ENV.AWS_REGION, credentials: { accessKeyId: 'local', secretAccessKey: 'local' }, endpoint: env.AWS_ENDPOINT_URL_DYNAMODB,
    }));
    const commits = (await dynamo.send(new ScanCommand({ TableName: COMMIT_TABLE }))).Items ?? [];
    dynamo.destroy();
    expect(commits.filter((item) => String(item.base_uri).includes('_shared_g1')).length).toBeGreaterThanOrEqual(21);
  }, 120_000);
});

/**
 * A warm query's S3 requests at most. Measured on 2026-11-28 by `npm run bench search` (10,000
 * documents of ~650 bytes, prefix and typos, the index loaded on the first query): 8.4 GETs a warm
 * query (134 before the index was loaded whole), 94 for a new environment's first.
 */
const MAX_WARM_QUERY_S3_REQUESTS = 15;

describe('S3 and commit-table requests over s3+ddb, counted at s3rver and dynalite', () => {
  const settings: IndexSettings = { idField: 'id', searchable: [{ field: 'title', weight: 2 }, { field: 'body', weight: 1 }], filterable: [], sortable: [], stored: null, maxDocuments: 1_000_000 };
  const words = ['alpha', 'beta', 'gamma', 'delta', 'omega', 'kappa'];
  const docs = (count: number, from = 0) => Array.from({ length: count }, (_, i) => {
    const id = `d${from + i}`;
    return { id, doc: { id, title: `${words[i % 6]} ${words[(i * 7) % 6]}`, body: `body ${i} ${words[(i * 3) % 6]} text` } };
  });

  it(`a warm environment keeps its connection, tables and catalog record: a warm query makes at most ${MAX_WARM_QUERY_S3_REQUESTS} S3 requests and no commit-table call within the interval`, async () => {
    const ref = { accountId: 'counted', name: 'warm' };
    const writer = counted.open(DEPLOYED_READ_CONSISTENCY_SECONDS);
    await writer.service.putIndex(ref, settings);
    for (const from of [0, 1000]) {
      await writer.service.upsert(ref, () => docs(1000, from), { wait: false });
      await writer.engine.indexNow((await writer.engine.getIndex(ref))!);
    }
    // An interval long enough that the warm query surely falls within it on a busy machine (deployed it is 1 s).
    const reader = counted.open(60);
    const query = (q: string) => reader.service.query(ref, (s) => parseQuery({ q, limit: 10 }, s));
    counted.proxies.take();
    expect((await query('alpha')).hits.length).toBeGreaterThan(0);
    const cold = counted.proxies.take();
    expect((await query('gamma')).hits.length).toBeGreaterThan(0);
    const warm = counted.proxies.take();
    expect(s3Total(warm)).toBeLessThanOrEqual(MAX_WARM_QUERY_S3_REQUESTS);
    expect(s3Total(warm)).toBeLessThan(s3Total(cold) / 2);
    expect({ LIST: warm.s3.LIST, PUT: warm.s3.PUT, POST: warm.s3.POST, DELETE: warm.s3.DELETE }).toEqual({ LIST: 0, PUT: 0, POST: 0, DELETE: 0 });
    // Within the interval nothing is checked: the catalog record is remembered and the table's version kept.
    expect(dynamodbTotal(warm)).toBe(0);
  }, 120_000);

  it(`a write made through another engine (another function environment) is seen within ${DEPLOYED_READ_CONSISTENCY_SECONDS} s`, async () => {
    const ref = { accountId: 'counted', name: 'seen' };
    const writer = counted.open(DEPLOYED_READ_CONSISTENCY_SECONDS);
    const reader = counted.open(DEPLOYED_READ_CONSISTENCY_SECONDS);
    await writer.service.putIndex(ref, settings);
    await writer.service.upsert(ref, () => docs(10), { wait: false });
    const ids = async () => (await reader.service.query(ref, (s) => parseQuery({ q: 'fresh', limit: 10 }, s))).hits.map((h) => h.id);
    expect(await ids()).toEqual([]);
    await writer.service.upsert(ref, () => [{ id: 'late', doc: { id: 'late', title: 'fresh', body: 'written elsewhere' } }], { wait: false });
    const written = performance.now();
    for (;;) {
      const found = await ids();
      if (found.includes('late')) break;
      // The bound, with room for the query that looks (a shared machine's query takes up to a few seconds).
      expect(performance.now() - written).toBeLessThan(DEPLOYED_READ_CONSISTENCY_SECONDS * 1000 + 5000);
    }
  }, 120_000);
});
