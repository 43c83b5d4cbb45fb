import { resolve } from 'node:path';
import { buildSync } from 'esbuild';
import type { ConsoleAsset, ConsoleFiles } from '../functions/console/assets.js';

const CONSOLE_DIR = import.meta.dirname;

const CONTENT_TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
};

/**
 * Builds the console (`console/app.ts` and the CSS it imports) with esbuild into memory: hashed
 * file names, minified, for the browsers of the last few years. (The senders the form offers are
 * not built in: it reads them from `GET /signature-services`, the catalog the API verifies with.)
 */
export function buildConsole(): ConsoleFiles {
  const result = buildSync({
    entryPoints: [resolve(CONSOLE_DIR, 'app.ts')],
    entryNames: '[name].[hash]',
    outdir: '/console',
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    minify: true,
    logLevel: 'warning',
  });
  const assets: Record<string, ConsoleAsset> = {};
  for (const file of result.outputFiles) {
    const name = file.path.slice(file.path.lastIndexOf('/') + 1);
    const ext = name.slice(name.lastIndexOf('.'));
    assets[name] = { contentType: CONTENT_TYPES[ext] ?? 'application/octet-stream', body: file.text };
  }
  const script = Object.keys(assets).find((n) => n.endsWith('.js'))!;
  const style = Object.keys(assets).find((n) => n.endsWith('.css'));
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Flowgate console</title>
${style ? `<link rel="stylesheet" href="/console/${style}">\n` : ''}<script type="module" src="/console/${script}"></script>
</head>
<body>
<div id="app"><main><p>Loading…</p></main></div>
</body>
</html>
`;
  return { html, assets };
}
