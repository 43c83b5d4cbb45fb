import { readdir, readFile, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';

/**
 * A static `import … from "./x.mjs"`, `import "./x.mjs"` or `export … from "./x.mjs"` between
 * the files of an esbuild bundle; `import("./x.mjs")`, a chunk loaded on first use, does not match.
 */
const STATIC_IMPORT = /\b(?:import|export)\s*(?:[\w$*{}\s,]*?from\s*)?["'](\.\/[^"']+\.mjs)["']/g;

/** The files Lambda loads at init: `index.mjs` and every chunk it imports statically, transitively. */
export async function filesLoadedAtInit(index: string): Promise<string[]> {
  const seen = new Set<string>();
  const pending = [resolve(index)];
  while (pending.length > 0) {
    const file = pending.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    for (const [, path] of (await readFile(file, 'utf8')).matchAll(STATIC_IMPORT)) pending.push(resolve(dirname(file), path!));
  }
  return [...seen];
}

/** Bytes at init (what the size target applies to) and of the whole asset (chunks loaded on first use too). */
export async function bundleSize(index: string): Promise<{ initBytes: number; initFiles: number; assetBytes: number; assetFiles: number }> {
  const sizeOf = async (files: string[]) => (await Promise.all(files.map((f) => stat(f)))).reduce((sum, s) => sum + s.size, 0);
  const init = await filesLoadedAtInit(index);
  const asset = (await readdir(dirname(index))).filter((f) => f.endsWith('.mjs')).map((f) => join(dirname(index), f));
  return { initBytes: await sizeOf(init), initFiles: init.length, assetBytes: await sizeOf(asset), assetFiles: asset.length };
}
