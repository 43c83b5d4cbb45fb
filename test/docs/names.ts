import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ROUTES } from '../../functions/manifest.js';
import { METRICS_SERVICE } from '../../functions/shared/metric-names.js';
import { SETTINGS } from '../../functions/settings.js';
import { SENDERS } from '../../functions/domain/webhooks/senders/catalog.js';
import { GUIDES_OF_OTHERS, ROOT } from './guides.js';

/**
 * What a guide may name, read from the tables themselves: the routes of the route table, the
 * settings (environment variables and CDK context keys) of the settings table and the stack's
 * context reader, the senders of the catalog. `unknownNames(text)` lists what a text names that
 * none of them has.
 */
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'ANY'] as const;

/** A route path as a pattern: `{name}` one segment, `{name+}` the rest. */
const routePattern = (path: string) => new RegExp(`^${path.split('/').map((segment) =>
  segment.endsWith('+}') ? '.+' : segment.startsWith('{') ? '[^/]+' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('/')}$`);
const ROUTE_PATTERNS = ROUTES.map((route) => ({ method: route.method as string, pattern: routePattern(route.path), path: route.path }));

/**
 * A path as a guide writes it: `{bucket}`, `<id>`, `$TRIGGER_ID` and `…` name any one segment. A
 * leading `…/` stands for whatever comes before (`POST …/consumers/{name}/fetch`).
 */
function pathMatches(docPath: string, method?: string): boolean {
  const suffix = docPath.startsWith('…/');
  const segments = docPath.replace(/^…/, '').split('/').slice(1);
  return ROUTE_PATTERNS.some((route) => {
    if (method && route.method !== 'ANY' && route.method !== method && !(method === 'OPTIONS')) return false;
    const routeSegments = route.path.split('/').slice(1);
    if (suffix ? routeSegments.length < segments.length : routeSegments.length !== segments.length && !route.path.endsWith('+}')) return false;
    const tail = suffix ? routeSegments.slice(routeSegments.length - segments.length) : routeSegments;
    if (route.path.endsWith('+}') && !suffix) return route.pattern.test(`/${segments.map((s) => (isPlaceholder(s) ? 'x' : s)).join('/')}`);
    return segments.every((segment, i) => {
      const want = tail[i]!;
      return want.startsWith('{') || isPlaceholder(segment) || segment === want;
    });
  });
}

const isPlaceholder = (segment: string) => /^(\{[^}]*\}|<[^>]*>|\$\{?\w+\}?|…)$/.test(segment) || segment.includes('$');

/** Environment variables the product reads: the settings table's, the local stack's own, the flows' functions'. */
export function knownEnvNames(): Set<string> {
  const names = new Set<string>(Object.values(SETTINGS).map((setting) => setting.env));
  for (const name of ['PORT', 'FLOWS_DIR', 'FLOWGATE_DATA_DIR', 'FLOWGATE_METRICS', 'CORS_ALLOWED_ORIGINS']) names.add(name);
  // The variables every example is run with (test/docs/examples.test.ts).
  for (const name of ['FLOWGATE_URL', 'TOKEN', 'API_KEY']) names.add(name);
  const flowSettings = JSON.parse(readFileSync(resolve(ROOT, 'flows/functions/settings.json'), 'utf8')) as Record<string, unknown>;
  for (const name of Object.keys(flowSettings)) names.add(name);
  return names;
}

/** CDK context keys the stack reads: the settings table's, and every key `lib/config.ts` asks for. */
export function knownContextKeys(): Set<string> {
  const keys = new Set<string>();
  for (const setting of Object.values(SETTINGS)) if (setting.source.kind === 'context') keys.add(setting.source.key);
  const config = readFileSync(resolve(ROOT, 'lib/config.ts'), 'utf8');
  for (const [, key] of config.matchAll(/(?:text|tryGetContext|maxConcurrency|wholeNumber|flag)\('([a-zA-Z]+)'/g)) keys.add(key!);
  for (const [, prefix] of config.matchAll(/throttle\('([a-zA-Z]+)'/g)) for (const end of ['RateLimit', 'BurstLimit']) keys.add(`${prefix}${end}`);
  const flowSettings = JSON.parse(readFileSync(resolve(ROOT, 'flows/functions/settings.json'), 'utf8')) as Record<string, { context?: string }>;
  for (const setting of Object.values(flowSettings)) if (setting.context) keys.add(setting.context);
  return keys;
}

/** Every identifier of the code base: a backticked CONSTANT_NAME in a guide must be one of them. */
function codeWords(): Set<string> {
  const words = new Set<string>();
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      if (name === 'node_modules' || name.startsWith('.') || name === 'cdk.out' || name === 'fixtures') continue;
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (/\.(ts|mjs|json)$/.test(name)) for (const [word] of readFileSync(path, 'utf8').matchAll(/[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+/g)) words.add(word);
    }
  };
  for (const dir of ['functions', 'lib', 'local', 'bin', 'bench', 'flows', 'console', 'cli', 'test/support']) walk(resolve(ROOT, dir));
  for (const [word] of readFileSync(resolve(ROOT, 'package.json'), 'utf8').matchAll(/[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+/g)) words.add(word);
  return words;
}

const SENDER_IDS = new Set(SENDERS.map((row) => row.id));

let cache: { env: Set<string>; context: Set<string>; words: Set<string> } | undefined;
const known = () => (cache ??= { env: knownEnvNames(), context: knownContextKeys(), words: codeWords() });

/** What a guide's text names that does not exist, one line each (`route GET /nowhere`). */
export function unknownNames(text: string): string[] {
  const { env, context, words } = known();
  const found: string[] = [];
  // Routes in prose and tables: `GET /storage/kv/{bucket}`, `PUT|GET|DELETE /storage/kv/{bucket}`, `POST …/ack`.
  for (const [, methods, rawPath] of text.matchAll(/\b((?:GET|HEAD|POST|PUT|PATCH|DELETE|OPTIONS|ANY)(?:\|(?:GET|HEAD|POST|PUT|PATCH|DELETE))*) (…?\/[^\s`'"()\],;]*)/g)) {
    const path = rawPath!.replace(/[?#].*$/, '').replace(/[.:]+$/, '').replace(/\/$/, '') || '/';
    if (path.startsWith('//')) continue;
    for (const method of methods!.split('|')) {
      if (!METHODS.includes(method as (typeof METHODS)[number])) continue;
      if (!pathMatches(path, method)) found.push(`route ${method} ${path}`);
    }
  }
  // Routes in examples: "$FLOWGATE_URL/…" up to the quote, space or query.
  for (const [, rawPath] of text.matchAll(/\$\{?FLOWGATE_URL\}?(\/[^\s"'?#)`]*)/g)) {
    const path = rawPath!.replace(/\/$/, '') || '/';
    if (!pathMatches(path)) found.push(`route ${path}`);
  }
  // Settings: a context key (`-c key=…`, context `key`), an environment variable set before `npm start`,
  // and any backticked CONSTANT_NAME (a setting, or a constant of the code), which must exist.
  for (const [, key] of text.matchAll(/(?:-c |context `)([a-zA-Z]+)/g)) if (key !== 'key' && !context.has(key!)) found.push(`context ${key}`);
  for (const [, name] of text.matchAll(/\b([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)=\S* npm (?:start|run)/g)) if (!env.has(name!)) found.push(`setting ${name}`);
  for (const [, name] of text.matchAll(/`([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)`/g)) if (!env.has(name!) && !words.has(name!)) found.push(`setting ${name}`);
  // Senders: a trigger's "service" anywhere, and the sender id column of a table row. A metric
  // line's "service" is the service's own name (docs/operating.md), not a sender.
  for (const [, id] of text.matchAll(/"service"\s*:\s*"([a-z0-9_]+)"/g)) if (!SENDER_IDS.has(id!) && id !== METRICS_SERVICE) found.push(`sender ${id}`);
  return [...new Set(found)];
}

/** Files of the repository a guide names (`functions/domain/kv/service.ts`) that are not there. */
export function missingFiles(text: string): string[] {
  const missing = new Set<string>();
  for (const [, path] of text.matchAll(/(?<![\w./-])((?:functions|lib|local|bin|bench|test|flows|console|patches|releases)\/[\w./+-]*[\w/])(?![\w*<])/g)) {
    if (!existsSync(resolve(ROOT, path!))) missing.add(path!);
  }
  return [...missing];
}

/** Links to other guides (`kv.md#keys-in-urls`) whose file or heading does not exist. */
export function brokenLinks(guide: string, text: string): string[] {
  const base = guide.includes('/') ? resolve(ROOT, guide, '..') : ROOT;
  const broken: string[] = [];
  for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
    if (/^[a-z]+:/.test(target!)) continue;
    const [file, anchor] = target!.split('#') as [string, string | undefined];
    const path = file ? resolve(base, file) : resolve(ROOT, guide);
    // The guides other branches write are linked before they land: their path is promised, not broken.
    if (!existsSync(path) && !GUIDES_OF_OTHERS.some((other) => resolve(ROOT, other) === path)) {
      broken.push(target!);
      continue;
    }
    if (anchor && existsSync(path) && path.endsWith('.md') && !headingSlugs(readFileSync(path, 'utf8')).has(anchor)) broken.push(target!);
  }
  return broken;
}

/** GitHub's anchors of a markdown text's headings. */
export function headingSlugs(markdown: string): Set<string> {
  const slugs = new Set<string>();
  let fence = false;
  for (const line of markdown.split('\n')) {
    if (/^\s*```/.test(line)) fence = !fence;
    const heading = !fence && /^#{1,6} (.*)$/.exec(line);
    if (heading) slugs.add(heading[1]!.trim().toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, '').replace(/ /g, '-'));
  }
  return slugs;
}
