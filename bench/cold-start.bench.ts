import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { FUNCTIONS, QUEUES, TABLES, type FunctionSpec } from '../functions/manifest.js';
import { bundleLikeCdk } from './support/bundle.js';
import type { ChartRow } from './support/chart-row.js';
import { fixed, int, median, verdict } from './support/timing.js';

/**
 * `npm run bench cold-start`: each function of `functions/manifest.ts` bundled as the CDK stack
 * bundles it (minified ESM, see support/bundle.ts), its size, and the time a fresh `node` process
 * takes to import it, against an empty handler bundled the same way. Import time is measured
 * inside the child (`performance.now()` around `await import()`), so process start-up is left out;
 * the runs rotate through the bundles so that a noisy moment hits them alike.
 */
const RUNS = 9;
const MAX_BUNDLE_BYTES = 500 * 1000;
const MAX_EXTRA_IMPORT_MS = 100;
const EMPTY = 'empty';
const EMPTY_SPEC: FunctionSpec = { entry: 'bench/support/empty-handler.ts', timeoutSeconds: 3, memoryMb: 128, tables: {}, sendsTo: [] };

const IMPORT_AND_TIME = 'const started = performance.now(); await import(process.argv[1]); console.log(performance.now() - started);';

/** What a deployed function finds in its environment at import; the values only need the right shape. */
function lambdaEnv(): Record<string, string> {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'AKIAXXXXXXXXXXXXXXXX',
    AWS_SECRET_ACCESS_KEY: 'x'.repeat(40),
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    POWERTOOLS_SERVICE_NAME: 'flowgate',
    FLOW_STATE_MACHINE_ARN_PREFIX: 'arn:aws:states:us-east-1:000000000000:stateMachine:flow-',
    FLOW_NAMES: 'echo,route-by-type',
    WEBHOOK_BASE_URL: 'https://api.example.com/webhooks',
    LOCAL_SECRETS_KEY: randomBytes(32).toString('base64'),
    AUTH_JWT_SECRET: randomBytes(32).toString('base64url'),
  };
  for (const table of Object.values(TABLES)) env[table.env] = `bench-${table.env.toLowerCase()}`;
  for (const queue of Object.values(QUEUES)) {
    env[queue.env] = `https://sqs.us-east-1.amazonaws.com/000000000000/bench-${queue.env.toLowerCase()}`;
    env[queue.env.replace(/_URL$/, '_DLQ_URL')] = `https://sqs.us-east-1.amazonaws.com/000000000000/bench-${queue.env.toLowerCase()}-dlq`;
  }
  return env;
}

async function importMs(file: string, env: Record<string, string>): Promise<number> {
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', IMPORT_AND_TIME, pathToFileURL(file).href], { env });
  return Number(stdout.trim());
}

export default async function coldStartBench() {
  const outdir = await mkdtemp(join(tmpdir(), 'flowgate-cold-start-'));
  const functions = [{ name: EMPTY, spec: EMPTY_SPEC }, ...Object.entries(FUNCTIONS).map(([name, spec]) => ({ name, spec: spec as FunctionSpec }))];
  const started = Date.now();
  const bundles = await bundleLikeCdk(outdir, functions);
  const bundleSeconds = (Date.now() - started) / 1000;
  const names = functions.map((f) => f.name);
  const env = lambdaEnv();

  const samples = new Map<string, number[]>(names.map((name) => [name, []]));
  for (const name of names) await importMs(bundles[name]!, env); // the files into the page cache
  for (let run = 0; run < RUNS; run++) {
    for (let i = 0; i < names.length; i++) {
      const name = names[(run + i) % names.length]!;
      samples.get(name)!.push(await importMs(bundles[name]!, env));
    }
  }
  const emptyMs = median(samples.get(EMPTY)!);
  const emptyBytes = (await stat(bundles[EMPTY]!)).size;
  const rows = [];
  for (const name of names.filter((n) => n !== EMPTY)) {
    const bytes = (await stat(bundles[name]!)).size;
    // Paired by run: each run imported every bundle once, close together in time.
    const extraMs = median(samples.get(name)!.map((value, run) => value - samples.get(EMPTY)![run]!));
    rows.push({ name, entry: FUNCTIONS[name as keyof typeof FUNCTIONS].entry, bytes, kib: bytes / 1024, import_ms: median(samples.get(name)!), import_ms_samples: samples.get(name)!, extra_import_ms: extraMs, size_met: bytes < MAX_BUNDLE_BYTES, import_met: extraMs <= MAX_EXTRA_IMPORT_MS });
  }

  console.log(`bundled with the CDK's ServiceFunction construct (esbuild, ESM, node22, minified) in ${fixed(bundleSeconds)} s; import in a fresh node ${process.version}, median of ${RUNS} runs`);
  console.log(`${'function'.padEnd(12)}${'bytes'.padStart(11)}${'KiB'.padStart(8)}${'import ms'.padStart(11)}${'+ vs empty'.padStart(12)}   targets: < ${int(MAX_BUNDLE_BYTES)} bytes, ≤ +${MAX_EXTRA_IMPORT_MS} ms`);
  console.log(`${EMPTY.padEnd(12)}${int(emptyBytes).padStart(11)}${fixed(emptyBytes / 1024).padStart(8)}${fixed(emptyMs).padStart(11)}${''.padStart(12)}`);
  for (const row of rows) {
    const flags = [row.size_met ? '' : 'size', row.import_met ? '' : 'import'].filter(Boolean).join(', ');
    console.log(`${row.name.padEnd(12)}${int(row.bytes).padStart(11)}${fixed(row.kib).padStart(8)}${fixed(row.import_ms).padStart(11)}${`+${fixed(row.extra_import_ms)}`.padStart(12)}${flags ? `   MISSED: ${flags}` : ''}`);
  }
  const sizeMet = rows.every((r) => r.size_met);
  const importMet = rows.every((r) => r.import_met);
  console.log(`target: every bundle < 500 KB (500,000 bytes): ${verdict(sizeMet)}; every import within +${MAX_EXTRA_IMPORT_MS} ms of the empty one: ${verdict(importMet)}`);

  await rm(outdir, { recursive: true, force: true });
  const chart: ChartRow[] = rows.flatMap((row) => [
    { label: row.name, group: 'bundle size, KB (minified)', value: row.bytes / 1000, target: MAX_BUNDLE_BYTES / 1000, better: 'lower' as const, text: `${fixed(row.bytes / 1000)} KB` },
    { label: row.name, group: 'import time over the empty bundle, ms', value: row.extra_import_ms, target: MAX_EXTRA_IMPORT_MS, better: 'lower' as const, text: `+${fixed(row.extra_import_ms)} ms (${fixed(row.import_ms)} ms)` },
  ]);
  return {
    runs: RUNS,
    empty: { bytes: emptyBytes, import_ms: emptyMs, import_ms_samples: samples.get(EMPTY)! },
    rows,
    max_bundle_bytes: MAX_BUNDLE_BYTES,
    max_extra_import_ms: MAX_EXTRA_IMPORT_MS,
    target_met: sizeMet && importMet,
    chart,
  };
}
