/**
 * What the search engine asks of S3 and DynamoDB through the path the deployed stack uses
 * (`s3+ddb://`), counted at the servers (s3rver and dynalite behind `request-counter.ts`): a batch
 * write, a maintenance job, a cold open with its first query, a warm query and a purge, each as the
 * search function's use cases run it (`SearchService`). Shared by `npm run bench search` and
 * `test/handlers/search-engine-s3.test.ts`.
 */
import { resolve } from 'node:path';
import { CreateTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { LanceSearchEngine } from '../../functions/adapters/lance/lance-search-engine.js';
import { SearchService } from '../../functions/domain/search/service.js';
import type { IndexRef, IndexSettings } from '../../functions/domain/search/types.js';
import { parseQuery } from '../../functions/domain/search/validation.js';
import { LOCAL_AWS_ENV, LOCAL_OBJECTS_BUCKET, startEngines, type Engines } from '../../local/engines.js';
import { startCountingProxies, type CountingProxies, type RequestCounts } from './request-counter.js';

export const COMMIT_TABLE = 'search-commits';

/** Engines with the commit table, counting proxies in front, and a way to make engines over them as the search function makes its own. */
export interface CountedSearch {
  engines: Engines;
  proxies: CountingProxies;
  /** A new engine (a new function environment) over the counted endpoints, and the use cases over it. */
  open(readConsistencySeconds: number): { engine: LanceSearchEngine; service: SearchService };
  stop(): Promise<void>;
}

export async function startCountedSearch(): Promise<CountedSearch> {
  const engines = await startEngines({ flowsDirs: [resolve(import.meta.dirname, '../../flows')], visibilityTimeoutSeconds: 2, stepFunctions: false });
  const dynamo = new DynamoDBClient({ region: LOCAL_AWS_ENV.AWS_REGION, credentials: { accessKeyId: LOCAL_AWS_ENV.AWS_ACCESS_KEY_ID, secretAccessKey: LOCAL_AWS_ENV.AWS_SECRET_ACCESS_KEY }, endpoint: engines.env.AWS_ENDPOINT_URL_DYNAMODB });
  await dynamo.send(new CreateTableCommand({
    TableName: COMMIT_TABLE, BillingMode: 'PAY_PER_REQUEST',
    KeySchema: [{ AttributeName: 'base_uri', KeyType: 'HASH' }, { AttributeName: 'version', KeyType: 'RANGE' }],
    AttributeDefinitions: [{ AttributeName: 'base_uri', AttributeType: 'S' }, { AttributeName: 'version', AttributeType: 'N' }],
  }));
  dynamo.destroy();
  const proxies = await startCountingProxies({ s3: engines.env.AWS_ENDPOINT_URL_S3!, dynamodb: engines.env.AWS_ENDPOINT_URL_DYNAMODB! });
  const storageOptions = {
    aws_access_key_id: LOCAL_AWS_ENV.AWS_ACCESS_KEY_ID, aws_secret_access_key: LOCAL_AWS_ENV.AWS_SECRET_ACCESS_KEY, aws_region: LOCAL_AWS_ENV.AWS_REGION,
    aws_endpoint: proxies.s3Endpoint, dynamodb_endpoint: proxies.dynamodbEndpoint, allow_http: 'true', aws_virtual_hosted_style_request: 'false',
  };
  const uri = `s3+ddb://${LOCAL_OBJECTS_BUCKET}/search?ddbTableName=${COMMIT_TABLE}`;
  return {
    engines,
    proxies,
    open(readConsistencySeconds) {
      const engine = new LanceSearchEngine({ uri, storageOptions, readConsistencySeconds });
      return { engine, service: new SearchService({ engine, maintenance: { schedule: async () => undefined }, now: Date.now }) };
    },
    async stop() {
      await proxies.stop();
      await engines.stop();
    },
  };
}

export interface RequestsPerOperation {
  /** Requests of one `POST …/documents` of 1,000 documents (mean over the batches). */
  batch_write_1000: RequestCounts;
  /** Requests of one `PUT …/documents/{id}` (mean of a few). */
  single_write: RequestCounts;
  /** One maintenance job taking in one batch of 1,000 (mean over the jobs after the first build). */
  maintenance_per_1000: RequestCounts;
  /** A new environment's first query: the connection, the catalog and the index opened, then queried. */
  cold_open_and_first_query: RequestCounts;
  /** A query in a warm environment within its read-consistency interval (mean). */
  warm_query: RequestCounts;
  /** A warm query once the interval has passed: the latest version checked (mean). */
  warm_query_after_interval: RequestCounts;
  purge: RequestCounts;
}

const SETTINGS: IndexSettings = {
  idField: 'id', searchable: [{ field: 'title', weight: 3 }, { field: 'body', weight: 1 }], filterable: [{ field: 'category', type: 'string' }], sortable: [], stored: null, maxDocuments: 10_000_000,
};

/** The mean of several counts, each kind rounded to a tenth. */
export function meanOf(all: RequestCounts[]): RequestCounts {
  const mean: RequestCounts = { s3: { GET: 0, HEAD: 0, LIST: 0, PUT: 0, DELETE: 0, POST: 0 }, dynamodb: {} };
  for (const counts of all) {
    for (const [kind, n] of Object.entries(counts.s3)) mean.s3[kind as keyof RequestCounts['s3']] += n / all.length;
    for (const [op, n] of Object.entries(counts.dynamodb)) mean.dynamodb[op] = (mean.dynamodb[op] ?? 0) + n / all.length;
  }
  for (const kind of Object.keys(mean.s3) as (keyof RequestCounts['s3'])[]) mean.s3[kind] = Math.round(mean.s3[kind] * 10) / 10;
  for (const op of Object.keys(mean.dynamodb)) mean.dynamodb[op] = Math.round(mean.dynamodb[op]! * 10) / 10;
  return mean;
}

/**
 * Counts each operation on one index of `docs` written in batches of 1,000 (each followed by its
 * maintenance job, as a write in every window would), `queries` queried warm. The queries run with
 * prefix and typo tolerance, as the API's defaults.
 */
export async function measureRequests(counted: CountedSearch, docs: { id: string }[], queries: string[], options: { readConsistencySeconds: number }): Promise<RequestsPerOperation> {
  const { proxies } = counted;
  const writer = counted.open(options.readConsistencySeconds);
  const ref: IndexRef = { accountId: 'bench-requests', name: 'measured' };
  await writer.service.putIndex(ref, SETTINGS);
  const writes: RequestCounts[] = [];
  const jobs: RequestCounts[] = [];
  for (let i = 0; i < docs.length; i += 1000) {
    const batch = docs.slice(i, i + 1000).map((doc) => ({ id: doc.id, doc: doc as Record<string, unknown> }));
    proxies.take();
    await writer.service.upsert(ref, () => batch, { wait: false });
    writes.push(proxies.take());
    await writer.engine.indexNow((await writer.engine.getIndex(ref))!);
    // The first job builds the index: counted apart from the ones that add to it.
    if (i > 0) jobs.push(proxies.take());
  }
  const query = (service: SearchService, q: string) => service.query(ref, (settings) => parseQuery({ q, limit: 10 }, settings));
  const reader = counted.open(options.readConsistencySeconds);
  proxies.take();
  await query(reader.service, queries[0]!);
  const cold = proxies.take();
  const warm: RequestCounts[] = [];
  for (const q of queries.slice(1)) {
    await query(reader.service, q);
    warm.push(proxies.take());
  }
  const afterInterval: RequestCounts[] = [];
  for (const q of queries.slice(1, 4)) {
    await new Promise((done) => setTimeout(done, options.readConsistencySeconds * 1000 + 50));
    proxies.take();
    await query(reader.service, q);
    afterInterval.push(proxies.take());
  }
  const singles: RequestCounts[] = [];
  for (let i = 0; i < 5; i++) {
    const doc = { ...(docs[i] as Record<string, unknown>), id: `single-${i}` };
    proxies.take();
    await writer.service.upsert(ref, () => [{ id: `single-${i}`, doc }], { wait: false });
    singles.push(proxies.take());
  }
  proxies.take();
  await writer.service.purgeIndex(ref);
  const purge = proxies.take();
  await writer.engine.sweep(ref);
  proxies.take();
  return {
    batch_write_1000: meanOf(writes), single_write: meanOf(singles), maintenance_per_1000: meanOf(jobs), cold_open_and_first_query: cold, warm_query: meanOf(warm),
    warm_query_after_interval: meanOf(afterInterval), purge,
  };
}
