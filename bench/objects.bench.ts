import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { dynamoClient } from '../functions/adapters/aws/clients/dynamo.js';
import { s3Client } from '../functions/adapters/aws/clients/s3.js';
import { LOCAL_OBJECTS_BUCKET } from '../local/engines.js';
import { startLocalStack } from '../local/stack.js';
import type { ChartRow } from './support/chart-row.js';
import { fixed, int } from './support/timing.js';

/**
 * `npm run bench objects`: what an object upload and download cost, direct through the API and
 * through presigned URLs, counted from what the handlers send (DynamoDB read and write units as
 * dynalite reports them, S3 requests by class from the product's own client) plus the requests
 * the client makes (API calls, each one Lambda invocation; PUTs and GETs to presigned URLs); and
 * the throughput of presigned transfers beside a plain SDK `PutObject` of the same bytes in the
 * same run. Lambda duration is not priced here: it is this machine's, not Lambda's (see the
 * webhook cost bench for how far apart they are); the request fees are.
 */
const COUNT = 40;
const SMALL = 64 * 1024;
const LARGE = 4 * 1024 * 1024;
const LARGE_COUNT = 8;
const prices = JSON.parse(readFileSync(resolve(import.meta.dirname, 'prices.json'), 'utf8')).prices;
const USD = {
  wru: prices.dynamodb_write_request_unit.usd as number,
  rru: prices.dynamodb_read_request_unit.usd as number,
  s3Put: prices.s3_put_request.usd as number,
  s3Get: prices.s3_get_request.usd as number,
  api: prices.api_gateway_http_request.usd as number,
  lambda: prices.lambda_request.usd as number,
};
const S3_PUT_CLASS = /^(PutObject|CreateMultipartUpload|UploadPart|CompleteMultipartUpload|ListObjectsV2|CopyObject)$/;
const S3_FREE = /^(DeleteObject|DeleteObjects|AbortMultipartUpload)$/;

interface Counts { wru: number; rru: number; s3Put: number; s3Get: number; api: number }
const zero = (): Counts => ({ wru: 0, rru: 0, s3Put: 0, s3Get: 0, api: 0 });

export default async function objectsBench() {
  const stack = await startLocalStack({ port: 0 });
  let counts = zero();
  dynamoClient(stack.aws).middlewareStack.add((next, context) => async (args) => {
    (args.input as { ReturnConsumedCapacity?: string }).ReturnConsumedCapacity = 'TOTAL';
    const result = await next(args);
    const consumed = [(result.output as { ConsumedCapacity?: { CapacityUnits?: number } | { CapacityUnits?: number }[] }).ConsumedCapacity ?? []].flat();
    const units = consumed.reduce((sum, c) => sum + (c.CapacityUnits ?? 0), 0);
    counts[/^(Put|Update|Delete|BatchWrite)/.test(context.commandName ?? '') ? 'wru' : 'rru'] += units;
    return result;
  }, { step: 'initialize', name: 'countUnits' });
  s3Client(stack.aws).middlewareStack.add((next, context) => async (args) => {
    const name = (context.commandName ?? '').replace(/Command$/, '');
    if (S3_PUT_CLASS.test(name)) counts.s3Put++;
    else if (!S3_FREE.test(name)) counts.s3Get++;
    return next(args);
  }, { step: 'initialize', name: 'countS3Requests' });

  try {
    const token = await stack.token('objects-bench');
    const api = async (method: string, path: string, body?: unknown, raw?: Uint8Array) => {
      counts.api++;
      const res = await fetch(stack.baseUrl + path, {
        method, headers: { authorization: `Bearer ${token}`, 'content-type': raw === undefined ? 'application/json' : 'application/octet-stream' },
        body: raw ?? (body === undefined ? undefined : JSON.stringify(body)),
      });
      const bytes = new Uint8Array(await res.arrayBuffer());
      if (res.status >= 300) throw new Error(`${method} ${path} answered ${res.status} ${new TextDecoder().decode(bytes)}`);
      return { bytes, json: () => JSON.parse(new TextDecoder().decode(bytes)) };
    };
    const presigned = async (url: string, method: 'PUT' | 'GET', init: RequestInit = {}) => {
      counts[method === 'PUT' ? 's3Put' : 's3Get']++;
      const res = await fetch(url, { method, ...init });
      const bytes = new Uint8Array(await res.arrayBuffer());
      if (res.status !== 200) throw new Error(`${method} presigned answered ${res.status}`);
      return { res, bytes };
    };
    await api('PUT', '/storage/objects/bench', {});
    const body = (size: number) => new Uint8Array(size).fill(120);

    const measure = async (name: string, count: number, one: (i: number) => Promise<unknown>) => {
      counts = zero();
      const started = performance.now();
      for (let i = 0; i < count; i++) await one(i);
      const seconds = (performance.now() - started) / 1000;
      const per = (n: number) => n / count;
      const c = counts;
      const usd = per(c.api) * (USD.api + USD.lambda) + per(c.s3Put) * USD.s3Put + per(c.s3Get) * USD.s3Get + per(c.wru) * USD.wru + per(c.rru) * USD.rru;
      return { case: name, per_second: count / seconds, api_calls: per(c.api), s3_put_class: per(c.s3Put), s3_get_class: per(c.s3Get), write_units: per(c.wru), read_units: per(c.rru), usd_per_million: usd * 1e6 };
    };
    const small = body(SMALL);
    const rows = [
      await measure('upload, direct PUT (64 KiB)', COUNT, (i) => api('PUT', `/storage/objects/bench/objects/direct-${i}`, undefined, small)),
      await measure('upload, presigned PUT (64 KiB)', COUNT, async (i) => {
        const upload = (await api('POST', '/storage/objects/bench/uploads', { key: `presigned-${i}`, size: SMALL })).json().data;
        await presigned(upload.url, 'PUT', { headers: upload.headers, body: small });
        await api('POST', `/storage/objects/bench/uploads/${upload.id}/complete`);
      }),
      await measure('download, direct GET (64 KiB)', COUNT, (i) => api('GET', `/storage/objects/bench/objects/direct-${i}`)),
      await measure('download, presigned GET (64 KiB)', COUNT, async (i) => {
        const { url } = (await api('POST', `/storage/objects/bench/objects/presigned-${i}/url`, {})).json().data;
        await presigned(url, 'GET');
      }),
    ];

    // Throughput of the bytes' path: presigned PUT and GET of 4 MiB against the SDK's PutObject.
    const large = body(LARGE);
    const client = s3Client(stack.aws);
    const rate = async (run: (i: number) => Promise<unknown>) => {
      const started = performance.now();
      for (let i = 0; i < LARGE_COUNT; i++) await run(i);
      return (LARGE * LARGE_COUNT) / ((performance.now() - started) / 1000) / 1024 ** 2;
    };
    const sdkPut = await rate((i) => client.send(new PutObjectCommand({ Bucket: LOCAL_OBJECTS_BUCKET, Key: `bench-baseline/${i}`, Body: large })));
    const urls: string[] = [];
    const presignedPut = await rate(async (i) => {
      const upload = (await api('POST', '/storage/objects/bench/uploads', { key: `large-${i}`, size: LARGE })).json().data;
      await presigned(upload.url, 'PUT', { headers: upload.headers, body: large });
      await api('POST', `/storage/objects/bench/uploads/${upload.id}/complete`);
      urls.push((await api('POST', `/storage/objects/bench/objects/large-${i}/url`, {})).json().data.url);
    });
    const presignedGet = await rate((i) => presigned(urls[i]!, 'GET'));
    const throughput = { object_bytes: LARGE, sdk_put_mib_per_second: sdkPut, presigned_put_mib_per_second: presignedPut, presigned_get_mib_per_second: presignedGet, presigned_put_ratio_to_sdk_put: presignedPut / sdkPut };

    console.log(`${'case'.padEnd(34)}${'per s'.padStart(7)}${'API'.padStart(5)}${'S3 PUT'.padStart(8)}${'S3 GET'.padStart(8)}${'WRU'.padStart(6)}${'RRU'.padStart(6)}${'$ per 1M'.padStart(10)}`);
    for (const r of rows) {
      console.log(`${r.case.padEnd(34)}${int(r.per_second).padStart(7)}${fixed(r.api_calls, 0).padStart(5)}${fixed(r.s3_put_class, 1).padStart(8)}${fixed(r.s3_get_class, 1).padStart(8)}${fixed(r.write_units, 1).padStart(6)}${fixed(r.read_units, 1).padStart(6)}${`$${fixed(r.usd_per_million, 2)}`.padStart(10)}`);
    }
    console.log(`4 MiB: SDK PutObject ${fixed(sdkPut, 1)} MiB/s, presigned PUT (create + PUT + complete + URL) ${fixed(presignedPut, 1)} MiB/s (${fixed(throughput.presigned_put_ratio_to_sdk_put, 2)}x), presigned GET ${fixed(presignedGet, 1)} MiB/s`);
    const chart: ChartRow[] = [
      { label: 'presigned PUT, 4 MiB', group: 'object upload, MiB/s ÷ SDK PutObject', value: throughput.presigned_put_ratio_to_sdk_put, better: 'higher', text: `${fixed(throughput.presigned_put_ratio_to_sdk_put, 2)}x (${fixed(presignedPut, 1)} vs ${fixed(sdkPut, 1)} MiB/s)` },
    ];
    return { rows, throughput, prices_usd: USD, chart };
  } finally {
    await stack.stop();
  }
}
