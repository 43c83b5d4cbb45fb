// Builds dist/: ESM bundles by esbuild (one chunk shared by the entries) and .d.ts by tsc.
// `npm run build -w @flowgate/client` (and `npm pack`, through `prepack`).
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const here = dirname(fileURLToPath(import.meta.url));
const dist = join(here, 'dist');
const require = createRequire(import.meta.url);

rmSync(dist, { recursive: true, force: true });
await build({
  absWorkingDir: here,
  entryPoints: { index: 'src/index.ts', 'index.node': 'src/index.node.ts', webhooks: 'src/webhooks.ts' },
  outdir: 'dist',
  bundle: true,
  splitting: true,
  format: 'esm',
  // Neutral: the browser entry must run anywhere `fetch` does. Node's modules are imported only by
  // the Node entries (a test scans what the browser entry loads for `node:`).
  platform: 'neutral',
  target: 'es2022',
  external: ['jose', 'node:*'],
  chunkNames: 'chunks/[name]-[hash]',
  legalComments: 'none',
  logLevel: 'warning',
});

// Declarations: the whole repository is the root, since the webhooks entry is built from the
// product's sender catalog; only the client's own declarations are kept.
const types = join(dist, '.types');
const tsc = spawnSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', join(here, 'tsconfig.build.json'), '--outDir', types], { stdio: 'inherit' });
if (tsc.status !== 0) process.exit(tsc.status ?? 1);
cpSync(join(types, 'client', 'src'), dist, { recursive: true });
rmSync(types, { recursive: true, force: true });

const declarations = (dir) => readdirSync(dir).flatMap((name) => {
  const path = join(dir, name);
  return statSync(path).isDirectory() ? declarations(path) : path.endsWith('.d.ts') ? [path] : [];
});
for (const file of declarations(dist)) {
  if (/from ['"](\.\.\/)+functions\//.test(readFileSync(file, 'utf8'))) {
    console.error(`${file} refers to the product's source: the package's public types must be its own`);
    process.exit(1);
  }
}
for (const entry of ['index', 'index.node', 'webhooks']) {
  if (!existsSync(join(dist, `${entry}.js`)) || !existsSync(join(dist, `${entry}.d.ts`))) throw new Error(`dist/${entry} was not built`);
}
