import { readdir, readFile, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { writeChart } from './chart.js';

/**
 * `npm run bench [name…]`: runs every `bench/*.bench.ts` (or the named ones) one after another,
 * prints each figure beside its same-run baseline, and saves the results to bench/results.json
 * (a run of some benches replaces only their entries), drawn as bench/results.svg.
 * Each bench module's default export returns a JSON-serialisable result.
 */
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
process.env.POWERTOOLS_LOG_LEVEL ??= 'ERROR';
// Loaded after the settings above (an import would run first); metric lines dropped, not printed.
(await import('./support/metrics-off-stdout.js')).dropMetricLines();
const dir = import.meta.dirname;
const wanted = process.argv.slice(2);
const files = (await readdir(dir)).filter((f) => f.endsWith('.bench.ts') && (wanted.length === 0 || wanted.some((w) => f.startsWith(w)))).sort();
const results: Record<string, unknown> = {};
/** Each bench's wall time: `npm run bench` as a whole must stay within ten minutes on two cores. */
const seconds: Record<string, number> = {};
const startedAll = performance.now();
for (const file of files) {
  const name = file.slice(0, -'.bench.ts'.length);
  console.log(`\n## ${name}`);
  const started = performance.now();
  const bench = (await import(pathToFileURL(resolve(dir, file)).href)).default as () => Promise<unknown>;
  results[name] = await bench();
  seconds[name] = (performance.now() - started) / 1000;
}
console.log(`\nwall time: ${Object.entries(seconds).map(([name, s]) => `${name} ${s.toFixed(0)} s`).join(', ')}; in all ${((performance.now() - startedAll) / 1000).toFixed(0)} s`);
const path = resolve(dir, 'results.json');
const previous = await readFile(path, 'utf8').then((text) => JSON.parse(text).results as Record<string, unknown>, () => ({}));
const measuredAt = new Date().toISOString();
const merged = { ...previous, ...Object.fromEntries(Object.entries(results).map(([name, result]) => [name, { measured_at: measuredAt, node: process.version, ...(result as object) }])) };
await writeFile(path, JSON.stringify({ results: merged }, null, 2) + '\n');
await writeChart(path, resolve(dir, 'results.svg'));
console.log(`\nsaved ${path} and results.svg`);
// A bench that missed a bar it must hold (`npm run bench cost`) sets the exit code; the results are saved either way.
process.exit(process.exitCode ?? 0);
