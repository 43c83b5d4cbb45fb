import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { ConsoleFiles } from '../functions/console/assets.js';

const require = createRequire(import.meta.url);

/**
 * Scalar's standalone browser bundle (`@scalar/api-reference`, a pinned devDependency), read from
 * node_modules: vendored into the system function's files at synth, never fetched from a CDN.
 * The package exports no `package.json`, so its folder is found from its main entry (`dist/index.js`).
 */
const standalonePath = () => join(dirname(require.resolve('@scalar/api-reference')), 'browser', 'standalone.js');

const JS = 'text/javascript; charset=utf-8';
const hashed = (name: string, body: string) => `${name}.${createHash('sha256').update(body).digest('base64url').slice(0, 10)}.js`;

/**
 * The API reference page: an HTML shell, Scalar's bundle and a start script (no inline script),
 * each under `/docs/`. The shell reads `/openapi.json` from the same origin.
 */
export function buildApiReference(): ConsoleFiles {
  const scalar = readFileSync(standalonePath(), 'utf8');
  // Fonts are the system's (no request to Scalar's font host); the document is this origin's.
  const start = `Scalar.createApiReference('#reference', ${JSON.stringify({ url: '/openapi.json', withDefaultFonts: false, hideClientButton: false, telemetry: false, agent: { disabled: true }, mcp: { disabled: true }, showDeveloperTools: 'never' })});\n`;
  const assets = { [hashed('scalar', scalar)]: { contentType: JS, body: scalar }, [hashed('start', start)]: { contentType: JS, body: start } };
  const [scalarName, startName] = Object.keys(assets) as [string, string];
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Flowgate API reference</title>
</head>
<body>
<div id="reference"></div>
<script src="/docs/${scalarName}"></script>
<script src="/docs/${startName}"></script>
</body>
</html>
`;
  return { html, assets };
}
