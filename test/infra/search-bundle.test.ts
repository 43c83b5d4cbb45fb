/**
 * The search function's code as deployed: its bundle leaves the engine out (a native module
 * esbuild cannot bundle), so the engine's installed packages must fit Lambda's 250 MB of unzipped
 * code beside it, and loading it stays off the function's init path.
 */
import { lstatSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FUNCTIONS } from '../../functions/manifest.js';

const ROOT = resolve(import.meta.dirname, '../..');
/** Lambda's limit on a function's unzipped code, its layers included. https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html */
const LAMBDA_UNZIPPED_CODE_BYTES = 250 * 1024 * 1024;

function bytesUnder(path: string): number {
  // Links (the stub that stands in for the embedding providers) are not shipped content.
  const stat = lstatSync(path);
  if (stat.isSymbolicLink()) return 0;
  if (!stat.isDirectory()) return stat.size;
  return readdirSync(path).reduce((sum, entry) => sum + bytesUnder(join(path, entry)), 0);
}

describe('the search function\'s engine', () => {
  it('is left out of the bundle, and the packages shipped beside it fit Lambda\'s 250 MB unzipped (this platform\'s native build; arm64\'s was 149 MB in the probe)', () => {
    expect(FUNCTIONS.search.nativeModules).toEqual(['@lancedb/lancedb', 'apache-arrow']);
    const lancedb = resolve(ROOT, 'node_modules/@lancedb');
    const native = readdirSync(lancedb).filter((name) => name.startsWith('lancedb-'));
    expect(native.length).toBeGreaterThan(0);
    const packages = [join(lancedb, 'lancedb'), ...native.map((name) => join(lancedb, name)), resolve(ROOT, 'node_modules/apache-arrow'), resolve(ROOT, 'node_modules/flatbuffers'), resolve(ROOT, 'node_modules/reflect-metadata')];
    const total = packages.reduce((sum, path) => sum + bytesUnder(path), 0);
    // One platform's binary is shipped (the lock installs only this machine's); with the bundle's few hundred KB.
    expect(total).toBeLessThan(LAMBDA_UNZIPPED_CODE_BYTES - 5 * 1024 * 1024);
    console.log(`search engine packages: ${(total / 1024 / 1024).toFixed(1)} MB of ${LAMBDA_UNZIPPED_CODE_BYTES / 1024 / 1024} MB`);
  });

  it('is not loaded by the search function\'s entry at init: only on the first request that needs it', () => {
    const source = readFileSync(resolve(ROOT, 'functions/handlers/search.ts'), 'utf8');
    expect(source).not.toMatch(/^import .*lance-search-engine/m);
    expect(source).toMatch(/await import\('\.\.\/adapters\/lance\/lance-search-engine\.js'\)/);
  });
});
