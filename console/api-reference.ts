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
const CSS = 'text/css; charset=utf-8';
const hashed = (name: string, body: string, ext: string) => `${name}.${createHash('sha256').update(body).digest('base64url').slice(0, 10)}.${ext}`;

/**
 * What axe-core (serious and critical) finds in Scalar 1.72.1's own markup, repaired here: the
 * icon-only copy buttons of its code blocks have no name (`button-name`), and a tag's list of
 * endpoints scrolls without taking keyboard focus (`scrollable-region-focusable`). Repaired as
 * Scalar renders, since it re-renders as the reader opens groups.
 */
const A11Y_REPAIRS = `const repair = () => {
  for (const button of document.querySelectorAll('button.scalar-code-copy:not([aria-label])')) button.setAttribute('aria-label', 'Copy');
  for (const list of document.querySelectorAll('ul.endpoints:not([tabindex])')) list.setAttribute('tabindex', '0');
};
new MutationObserver(repair).observe(document.getElementById('reference'), { childList: true, subtree: true });
repair();
`;

/**
 * Scalar's light theme draws the method badges (`GET`, `POST`, …) and muted text under the 4.5:1
 * contrast WCAG AA asks of small text (`color-contrast`, e.g. #0084d6 on white is 3.98:1): the same
 * hues, darkened to 4.5:1 or more on its backgrounds.
 */
const CONTRAST_CSS = `.light-mode, .light-mode .scalar-app, :root {
  --scalar-color-blue: #0062a3 !important;
  --scalar-color-green: #0b7039 !important;
  --scalar-color-orange: #9c4a00 !important;
  --scalar-color-red: #b3202a !important;
  --scalar-color-yellow: #7a5d00 !important;
  --scalar-color-purple: #6b3fa0 !important;
  --scalar-color-2: #616161 !important;
  --scalar-color-3: #5e5e5e !important;
}
.sidebar-search-placeholder { color: #5e5e5e !important; }
`;

/**
 * The API reference page: an HTML shell, Scalar's bundle and a start script (no inline script),
 * each under `/docs/`. The shell reads `/openapi.json` from the same origin.
 */
export function buildApiReference(): ConsoleFiles {
  const scalar = readFileSync(standalonePath(), 'utf8');
  // Fonts are the system's (no request to Scalar's font host); the document is this origin's.
  const options = { url: '/openapi.json', withDefaultFonts: false, telemetry: false, agent: { disabled: true }, mcp: { disabled: true }, showDeveloperTools: 'never', forceDarkModeState: 'light', hideDarkModeToggle: true };
  const start = `Scalar.createApiReference('#reference', ${JSON.stringify(options)});\n${A11Y_REPAIRS}`;
  const assets: ConsoleFiles['assets'] = {
    [hashed('scalar', scalar, 'js')]: { contentType: JS, body: scalar },
    [hashed('start', start, 'js')]: { contentType: JS, body: start },
    [hashed('contrast', CONTRAST_CSS, 'css')]: { contentType: CSS, body: CONTRAST_CSS },
  };
  const [scalarName, startName, cssName] = Object.keys(assets) as [string, string, string];
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Flowgate API reference</title>
<link rel="stylesheet" href="/docs/${cssName}">
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
