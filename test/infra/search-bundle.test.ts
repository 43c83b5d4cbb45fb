/**
 * The search function's code as deployed: its bundle leaves the engine out (a native module
 * esbuild cannot bundle), and a layer staged from node_modules ships it: the engine, its platform
 * binary and the closure of their runtime dependencies, which must fit Lambda's 250 MB of unzipped
 * code beside the bundle and load from `/opt/nodejs/node_modules` alone. Loading it stays off the
 * function's init path.
 */
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FUNCTIONS } from '../../functions/manifest.js';
import { EsbuildBundling } from '../../lib/constructs/esm-bundle.js';
import { nativeModulesHash, stageNativeModules, type StagedPackage } from '../../lib/constructs/native-modules-layer.js';
import { synth } from '../support/synth.js';

const ROOT = resolve(import.meta.dirname, '../..');
/** Lambda's limit on a function's unzipped code, its layers included. https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html */
const LAMBDA_UNZIPPED_CODE_BYTES = 250 * 1024 * 1024;
const MB = 1024 * 1024;

function bytesUnder(path: string): number {
  const stat = lstatSync(path);
  if (stat.isSymbolicLink()) return 0;
  if (!stat.isDirectory()) return stat.size;
  return readdirSync(path).reduce((sum, entry) => sum + bytesUnder(join(path, entry)), 0);
}

function filesUnder(path: string): string[] {
  return lstatSync(path).isDirectory() ? readdirSync(path).flatMap((entry) => filesUnder(join(path, entry))) : [path];
}

const nativeModules = FUNCTIONS.search.nativeModules;
let work: string;
let layer: string;
let staged: StagedPackage[];

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'flowgate-search-layer-'));
  layer = join(work, 'layer');
  staged = stageNativeModules(ROOT, nativeModules, layer);
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('the search function\'s engine', () => {
  it('is left out of the bundle and runs on x86_64 with the layer attached (the lock installs the x64 binary), one layer for the search function and its maintenance', () => {
    expect(nativeModules).toEqual(['@lancedb/lancedb', 'apache-arrow']);
    expect(FUNCTIONS.searchMaintenance.nativeModules).toEqual(nativeModules);
    const { template } = synth();
    const engineFunctions = (['search', 'searchMaintenance'] as const).map((name) =>
      Object.values(template.findResources('AWS::Lambda::Function', { Properties: { Description: `Flowgate ${name} (${FUNCTIONS[name].entry})` } })));
    expect(engineFunctions.map((found) => found.length)).toEqual([1, 1]);
    const layers = template.findResources('AWS::Lambda::LayerVersion');
    expect(Object.keys(layers)).toHaveLength(1);
    const [layerId, layerResource] = Object.entries(layers)[0]!;
    for (const [fn] of engineFunctions) {
      expect(fn!.Properties.Architectures).toEqual(['x86_64']);
      expect(fn!.Properties.Layers).toEqual([{ Ref: layerId }]);
    }
    expect(layerResource.Properties.CompatibleArchitectures).toEqual(['x86_64']);
    expect(layerResource.Properties.CompatibleRuntimes).toEqual(['nodejs22.x']);
    // Every other function stays on arm64 with no layer.
    const others = Object.values(template.findResources('AWS::Lambda::Function')).filter((fn) => !engineFunctions.some(([engineFn]) => engineFn === fn) && fn.Properties.Runtime === 'nodejs22.x');
    expect(others.length).toBeGreaterThan(5);
    for (const fn of others) expect([fn.Properties.Architectures, fn.Properties.Layers]).toEqual([['arm64'], undefined]);
  });

  it('stages the engine, its x64 binary and their runtime closure, with a hash that depends only on the lock', () => {
    const paths = staged.map((p) => p.path);
    expect(paths).toEqual(expect.arrayContaining(['node_modules/@lancedb/lancedb', 'node_modules/@lancedb/lancedb-linux-x64-gnu', 'node_modules/apache-arrow', 'node_modules/flatbuffers', 'node_modules/reflect-metadata']));
    expect(paths.filter((p) => p.includes('@types/'))).toEqual([]);
    const binaries = filesUnder(join(layer, 'nodejs')).filter((file) => file.endsWith('.node'));
    expect(binaries.map((file) => file.slice(layer.length + 1))).toEqual(['nodejs/node_modules/@lancedb/lancedb-linux-x64-gnu/lancedb.linux-x64-gnu.node']);
    expect(nativeModulesHash(ROOT, nativeModules)).toBe(nativeModulesHash(ROOT, [...nativeModules]));
    expect(nativeModulesHash(ROOT, nativeModules)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('fits Lambda\'s 250 MB unzipped: the layer beside the function\'s bundle', () => {
    const bundle = join(work, 'bundle');
    new EsbuildBundling(ROOT, FUNCTIONS.search.entry, false, undefined, nativeModules).tryBundle(bundle);
    const layerBytes = bytesUnder(layer);
    const bundleBytes = bytesUnder(bundle);
    expect(layerBytes + bundleBytes).toBeLessThan(LAMBDA_UNZIPPED_CODE_BYTES);
    console.log(`search layer ${(layerBytes / MB).toFixed(1)} MB + bundle ${(bundleBytes / MB).toFixed(2)} MB of ${LAMBDA_UNZIPPED_CODE_BYTES / MB} MB`);
  });

  it('resolves from /opt/nodejs/node_modules alone: a new node with only the layer on NODE_PATH opens and queries a table', () => {
    const modules = join(layer, 'nodejs', 'node_modules');
    const require = createRequire(join(work, 'nowhere.js'));
    expect(require.resolve('@lancedb/lancedb', { paths: [modules] }).startsWith(modules)).toBe(true);
    const data = join(work, 'data');
    const script = `
      const lancedb = require('@lancedb/lancedb');
      const arrow = require('apache-arrow');
      if (!require.resolve('@lancedb/lancedb').startsWith(process.env.NODE_PATH)) throw new Error('resolved outside the layer');
      (async () => {
        const db = await lancedb.connect(process.argv[1]);
        const table = await db.createTable('t', [{ id: 'a', text: 'a hobbit and a wizard' }, { id: 'b', text: 'a desert planet' }]);
        await table.createIndex('text', { config: lancedb.Index.fts() });
        const hits = await table.search('wizard', 'fts').select(['id']).toArray();
        console.log(JSON.stringify({ hits: hits.map((h) => h.id), arrow: typeof arrow.tableFromArrays }));
      })().catch((error) => { console.error(error); process.exit(1); });`;
    const out = execFileSync(process.execPath, ['-e', script, data], {
      cwd: work,
      env: { PATH: process.env.PATH ?? '', NODE_PATH: modules, LANCE_CPU_THREADS: '2', LANCEDB_LOG: 'error' },
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(JSON.parse(out.trim().split('\n').at(-1)!)).toEqual({ hits: ['a'], arrow: 'function' });
  });

  it("is not loaded by the search or maintenance function's entry at init: only on the first call that needs it", () => {
    for (const handler of ['functions/handlers/search.ts', 'functions/handlers/search-maintenance.ts']) {
      const source = readFileSync(resolve(ROOT, handler), 'utf8');
      expect(source, handler).not.toMatch(/^import .*lance-search-engine/m);
      expect(source, handler).toMatch(/^import \{ searchEngineFor \} from '\.\.\/adapters\/lance\/search-engine-on-first-use\.js';$/m);
    }
    const lazy = readFileSync(resolve(ROOT, 'functions/adapters/lance/search-engine-on-first-use.ts'), 'utf8');
    expect(lazy).not.toMatch(/^import .*lance-search-engine/m);
    expect(lazy).toMatch(/await import\('\.\/lance-search-engine\.js'\)/);
  });
});
