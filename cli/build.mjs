// Bundles the CLI into one ESM file (dist/flowgate.mjs): what `npm pack` ships, and what starts in
// a fraction of the time the TypeScript source takes under tsx. `node build.mjs [outfile]`.
import { build } from 'esbuild';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const outfile = resolve(process.argv[2] ?? resolve(here, 'dist/flowgate.mjs'));

await build({
  entryPoints: [resolve(here, 'src/main.ts')],
  outfile,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  // ws's optional native speed-ups; it runs without them.
  external: ['bufferutil', 'utf-8-validate'],
  // CommonJS dependencies (commander, cli-progress) call require: give the bundle one.
  banner: { js: "import { createRequire as __flowgateRequire } from 'node:module'; const require = __flowgateRequire(import.meta.url);" },
  conditions: ['node'],
  legalComments: 'none',
  logLevel: 'warning',
});
