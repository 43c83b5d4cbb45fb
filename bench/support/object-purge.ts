import { performance } from 'node:perf_hooks';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import S3Object from 's3rver/lib/models/object.js';
import FilesystemStore from 's3rver/lib/stores/filesystem.js';
import { createAwsClients, destroyAwsClients } from '../../functions/adapters/aws/clients.js';
import { dynamoClient } from '../../functions/adapters/aws/clients/dynamo.js';
import { s3Client } from '../../functions/adapters/aws/clients/s3.js';
import { DynamoObjectCatalog, objectsPk } from '../../functions/adapters/aws/dynamo-object-catalog.js';
import { objectKey, S3BlobStore } from '../../functions/adapters/aws/s3-blob-store.js';
import type { StoreGeneration } from '../../functions/domain/objects/types.js';
import { LOCAL_AWS_ENV, LOCAL_OBJECTS_BUCKET } from '../../local/engines.js';
import { apiGatewayEvent } from './api-gateway-events.js';
import { median, sleep } from './timing.js';
import { countPartition, fillTable } from './partition.js';

/**
 * The object stores' half of `npm run bench purge`: each round fills stores of 10 and 10,000
 * objects (bytes in s3rver under `<store id>/<generation>/<key>` and their catalog entries in
 * dynalite, as a write leaves them), purges each through the objects function's Lambda entry,
 * writes a few objects through it after the purge, runs the sweeper to completion and checks that
 * nothing of the old generations is left, in S3 or in the catalog, and that the later objects
 * still read back. The 10-object purges around the large one are the baseline. As for the KV
 * buckets, the large store's reclaim is measured on the first round's sweep; later rounds' large
 * generations are left unswept.
 *
 * The bytes are written by s3rver's own store, as its PutObject handler writes them, without the
 * HTTP request and signatures: through the S3 API s3rver takes about 400 PUTs a second here, and
 * filling 20,000 objects that way made the bench take 50 s longer. The listing through the S3 API
 * and a read through the objects function check that s3rver and the product see what was written.
 */
const SIZES = [10, 10_000] as const;
/** Each round's stores in purge order: 10-object purges around the large one, so the baseline sees the same conditions. */
const PLAN = [10, 10_000, 10] as const;
const ROUNDS = 2;
const WARMUP_PURGES = 30;
const TARGET_RATIO = 2;
const SETTLE_BEFORE_PURGES_MS = 1000;
/** Objects written at once; s3rver's store is files, so this is file writes in flight. */
const FILL_CONCURRENCY = 32;
/** Catalog `BatchWriteItem` requests in flight where the fill goes over HTTP (`fillTable`; one at a time until session 14). */
const CATALOG_FILL_CONCURRENCY = 16;
const WRITES_AFTER_PURGE = 3;
const BODY = Buffer.alloc(64, 'o');
const CONTENT_TYPE = 'application/octet-stream';

type HttpHandler = (event: APIGatewayProxyEventV2) => Promise<{ statusCode?: number; body?: string; isBase64Encoded?: boolean }>;

export interface ObjectPurgeHarness {
  /** The engines' environment, already in `process.env` (the entries read it when imported). */
  env: Record<string, string>;
  /** s3rver's directory (`objectsPath` of `startEngines`). */
  objectsDirectory: string;
  authorization: string;
  account: string;
  /** Plays the sweep queue until it is empty; milliseconds spent in the sweeper per generation. Tasks of generations in `leave` are dropped unrun. */
  sweepAll(leave?: ReadonlySet<string>): Promise<Map<string, number>>;
}

export interface ObjectPurgeRow {
  objects: number;
  purge_ms: number;
  samples_ms: number[];
  ratio: number;
  reclaim_objects_per_s: number;
  reclaim_sweeps: number;
}

export interface ObjectPurgeResult {
  rounds: number;
  baseline_objects: number;
  rows: ObjectPurgeRow[];
  target_ratio: number;
  target_met: boolean;
  /** Catalog entries and S3 objects of purged generations left after the sweeps (must be 0). */
  leftover_entries: number;
  leftover_s3_objects: number;
  /** Objects written after a purge that did not read back after the sweep (must be 0), of `later_writes_checked`. */
  lost_later_writes: number;
  later_writes_checked: number;
  /** Later rounds' large generations, left unswept. */
  unswept_generations: number;
  fill_objects_per_s: number;
}

const ms = (value: number) => value.toFixed(2).padStart(8);
const int = (value: number) => Math.round(value).toLocaleString('en-US');
const keyOf = (i: number) => `object-${String(i).padStart(6, '0')}`;

export async function objectStorePurges(harness: ObjectPurgeHarness): Promise<ObjectPurgeResult> {
  const { env, objectsDirectory, authorization, account, sweepAll } = harness;
  const objects = (await import('../../functions/entries/objects.js')).handler as unknown as HttpHandler;
  // The bench's own clients, made as the functions make theirs, for the fill and the checks.
  const aws = createAwsClients({
    region: LOCAL_AWS_ENV.AWS_REGION,
    credentials: { accessKeyId: LOCAL_AWS_ENV.AWS_ACCESS_KEY_ID, secretAccessKey: LOCAL_AWS_ENV.AWS_SECRET_ACCESS_KEY },
    endpoints: { dynamodb: env.AWS_ENDPOINT_URL_DYNAMODB!, s3: env.AWS_ENDPOINT_URL_S3! },
  });
  const doc = dynamoClient(aws);
  const table = env.KV_TABLE!;
  const catalog = new DynamoObjectCatalog(doc, table);
  const blobs = new S3BlobStore(s3Client(aws), LOCAL_OBJECTS_BUCKET);
  const engineStore = new FilesystemStore(objectsDirectory);

  const request = async (method: string, store: string, tail: '' | '/purge' | '/objects/{key+}', options: { key?: string; body?: string } = {}) => {
    const rawPath = `/storage/objects/${store}${tail.replace('{key+}', options.key ?? '')}`;
    const response = await objects(apiGatewayEvent({
      method, routeKey: `${method} /storage/objects/{store}${tail}`, rawPath,
      pathParameters: { store, ...(options.key !== undefined && { key: options.key }) },
      headers: { authorization, ...(options.body !== undefined && { 'content-type': 'text/plain' }) },
      body: options.body,
    }));
    if (response.statusCode! >= 300) throw new Error(`${method} ${rawPath} answered ${response.statusCode} ${response.body}`);
    return response;
  };

  const generationOf = async (store: string): Promise<StoreGeneration> => {
    const found = await catalog.getStore({ accountId: account, name: store });
    return { id: found!.id, generation: found!.generation };
  };

  /** What a write leaves, without the API in between: the bytes where the S3 adapter puts them, the entries as the catalog writes them. */
  const fill = async (store: string, at: StoreGeneration, count: number) => {
    const etags: string[] = new Array(count);
    let next = 0;
    const putBytes = async () => {
      while (next < count) {
        const i = next++;
        const { md5 } = await engineStore.putObject(new S3Object(LOCAL_OBJECTS_BUCKET, objectKey(at, keyOf(i)), BODY, { 'content-type': CONTENT_TYPE }));
        etags[i] = JSON.stringify(md5);
      }
    };
    await Promise.all(Array.from({ length: FILL_CONCURRENCY }, putBytes));
    const lastModified = new Date().toISOString();
    const pk = objectsPk(at);
    // The attributes `DynamoObjectCatalog.putObject` writes for a new object.
    await fillTable(env.AWS_ENDPOINT_URL_DYNAMODB!, table, count, (i) => (
      { pk, sk: keyOf(i), size: BODY.length, etag: etags[i]!, content_type: CONTENT_TYPE, last_modified: lastModified, revision: 1 }), CATALOG_FILL_CONCURRENCY);
    if (!await catalog.adjustUsage({ accountId: account, name: store }, at, { objects: count, bytes: count * BODY.length }, null)) throw new Error(`usage of ${store} not set`);
  };

  const catalogCount = (at: StoreGeneration) => countPartition(doc, table, objectsPk(at));

  const s3Count = async (at: StoreGeneration) => {
    let total = 0;
    let after: string | undefined;
    do {
      const page = await blobs.listGeneration(at, { after, limit: 1000 });
      total += page.keys.length;
      after = page.last;
    } while (after !== undefined);
    return total;
  };

  // Warm-up: JIT, connection pools, and the S3 and SQS clients the objects function loads on first use.
  await request('PUT', 'warmup', '');
  await request('PUT', 'warmup', '/objects/{key+}', { key: 'warm', body: 'warm' });
  await request('GET', 'warmup', '/objects/{key+}', { key: 'warm' });
  for (let i = 0; i < WARMUP_PURGES; i++) await request('DELETE', 'warmup', '/purge');
  await sweepAll();

  const latencies = new Map<number, number[]>(SIZES.map((size) => [size, []]));
  const reclaim = new Map<number, { objects: number; ms: number; sweeps: number }>(SIZES.map((size) => [size, { objects: 0, ms: 0, sweeps: 0 }]));
  let fillObjects = 0;
  let fillMs = 0;
  let leftoverEntries = 0;
  let leftoverS3 = 0;
  let lostLaterWrites = 0;
  let laterWritesChecked = 0;
  let unswept = 0;
  const largest = SIZES[SIZES.length - 1];
  for (let round = 0; round < ROUNDS; round++) {
    const stores: { size: number; name: string; at: StoreGeneration }[] = [];
    for (const [i, size] of PLAN.entries()) {
      const name = `round${round}-${i}-${size}`;
      await request('PUT', name, '');
      const at = await generationOf(name);
      const started = performance.now();
      await fill(name, at, size);
      fillMs += performance.now() - started;
      fillObjects += size;
      const [entries, bytes] = [await catalogCount(at), await s3Count(at)];
      if (entries !== size || bytes !== size) throw new Error(`fill of ${name} incomplete: ${entries} entries, ${bytes} S3 objects of ${size}`);
      const read = await request('GET', name, '/objects/{key+}', { key: keyOf(size - 1) });
      if (Buffer.from(read.body!, 'base64').compare(BODY) !== 0) throw new Error(`${name}: a filled object does not read back`);
      stores.push({ size, name, at });
    }
    await sleep(SETTLE_BEFORE_PURGES_MS);
    for (const { size, name } of stores) {
      const started = performance.now();
      await request('DELETE', name, '/purge');
      latencies.get(size)!.push(performance.now() - started);
    }
    // Written into the new generations before their old ones are swept: the sweep must leave them.
    for (const { name } of stores) {
      for (let i = 0; i < WRITES_AFTER_PURGE; i++) await request('PUT', name, '/objects/{key+}', { key: `after-purge-${i}`, body: `${name} ${i}` });
    }
    // The first round's sweep measures the large store's reclaim; later rounds' large generations stay unswept.
    const leave = new Set(round === 0 ? [] : stores.filter(({ size }) => size === largest).map(({ at }) => at.generation));
    const busy = await sweepAll(leave);
    for (const { size, name, at } of stores) {
      if (leave.has(at.generation)) {
        unswept++;
        continue;
      }
      const spent = reclaim.get(size)!;
      spent.objects += size;
      spent.ms += busy.get(at.generation) ?? 0;
      spent.sweeps++;
      laterWritesChecked += WRITES_AFTER_PURGE;
      leftoverEntries += await catalogCount(at);
      leftoverS3 += await s3Count(at);
      for (let i = 0; i < WRITES_AFTER_PURGE; i++) {
        const read = await request('GET', name, '/objects/{key+}', { key: `after-purge-${i}` }).catch(() => undefined);
        const body = read?.body === undefined ? undefined : Buffer.from(read.body, read.isBase64Encoded ? 'base64' : 'utf8').toString();
        if (body !== `${name} ${i}`) lostLaterWrites++;
      }
    }
  }

  const baseline = median(latencies.get(10)!);
  const rows: ObjectPurgeRow[] = SIZES.map((size) => {
    const samples = latencies.get(size)!;
    const { objects: count, ms: spentMs, sweeps } = reclaim.get(size)!;
    return { objects: size, purge_ms: median(samples), samples_ms: samples, ratio: median(samples) / baseline, reclaim_objects_per_s: count / (spentMs / 1000), reclaim_sweeps: sweeps };
  });
  const largestRow = rows[rows.length - 1]!;

  console.log(`\nobject store purge latency (median of ${ROUNDS} rounds; ${latencies.get(10)!.length} baseline samples) through the objects handler against dynalite, s3rver and local SQS`);
  console.log('   objects   purge ms   ratio to 10 objects   samples (ms)                     sweeper reclaim');
  for (const row of rows) {
    console.log(`${int(row.objects).padStart(10)}   ${ms(row.purge_ms)}   ${(row.ratio.toFixed(2) + 'x').padStart(19)}   ${row.samples_ms.map((s) => s.toFixed(2)).join(', ').padEnd(32)}  ${int(row.reclaim_objects_per_s).padStart(6)} objects/s (${row.reclaim_sweeps} sweep${row.reclaim_sweeps === 1 ? '' : 's'})`);
  }
  console.log(`target: ${int(largestRow.objects)}-object purge within ${TARGET_RATIO}x of the 10-object purge: ${largestRow.ratio <= TARGET_RATIO ? 'met' : 'MISSED'} (${largestRow.ratio.toFixed(2)}x)`);
  console.log(`of purged generations after the sweeps: ${leftoverEntries} catalog entries, ${leftoverS3} S3 objects left; objects written after the purges lost: ${lostLaterWrites} of ${laterWritesChecked}${unswept > 0 ? ` (${unswept} later ${int(largest)}-object generation${unswept === 1 ? '' : 's'} left unswept)` : ''}`);
  console.log(`(fill, for scale: ${int(fillObjects / (fillMs / 1000))} objects/s, by s3rver's store ${FILL_CONCURRENCY} at once, then the catalog entries into dynalite's store as its PutItem puts them)`);

  destroyAwsClients(aws);
  return {
    rounds: ROUNDS, baseline_objects: 10, rows, target_ratio: TARGET_RATIO, target_met: largestRow.ratio <= TARGET_RATIO,
    leftover_entries: leftoverEntries, leftover_s3_objects: leftoverS3, lost_later_writes: lostLaterWrites, later_writes_checked: laterWritesChecked,
    unswept_generations: unswept, fill_objects_per_s: fillObjects / (fillMs / 1000),
  };
}
