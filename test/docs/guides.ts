import { readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';

/**
 * The docs as the example runner and the names check read them: README.md and every docs/*.md, and
 * their fenced blocks. The convention every guide follows: a ```sh block runs with bash, where `$FLOWGATE_URL` is the local stack's base URL, `$TOKEN` a
 * user's bearer token and `$API_KEY` an API key of a fresh account; the ```json block right after it is
 * the expected answer (the fields shown must match, `"…"` matches any value, and `…` inside a string any
 * text); a block preceded by the line `<!-- not-runnable -->` is skipped.
 */
export const ROOT = resolve(import.meta.dirname, '../..');

/** Every guide, README first, as paths relative to the repository. */
export function guidePaths(): string[] {
  const docs = readdirSync(resolve(ROOT, 'docs')).filter((name) => name.endsWith('.md')).sort().map((name) => `docs/${name}`);
  return ['README.md', ...docs];
}

/** Guides this branch writes: each must exist and hold a runnable example. */
export const OWN_GUIDES = [
  'README.md', 'docs/api.md', 'docs/kv.md', 'docs/objects.md', 'docs/streams.md', 'docs/mfa.md', 'docs/triggers.md',
  'docs/senders.md', 'docs/flows.md', 'docs/console.md', 'docs/deploying.md', 'docs/operating.md', 'docs/security.md',
  'docs/costs.md', 'docs/benchmarks.md', 'docs/local-stack.md', 'docs/architecture.md',
] as const;

/**
 * Guides written by others (the client, the API reference page, search indexes, the CLI): not required
 * to exist yet, but once present they are run like the rest and need a runnable example too.
 */
export const GUIDES_OF_OTHERS = ['docs/client.md', 'docs/api-reference.md', 'docs/search.md', 'docs/cli.md'] as const;

/** Guides that need no runnable example: the senders' guide is generated from the catalog (`npm run docs:senders`). */
export const NO_EXAMPLE_NEEDED: readonly string[] = ['docs/senders.md'];

export const NOT_RUNNABLE = '<!-- not-runnable -->';

export interface Block {
  /** The fence's info string's first word: `sh`, `json`, `ts`, or '' for none. */
  lang: string;
  code: string;
  /** 1-based line of the opening fence. */
  line: number;
  /** Preceded by `<!-- not-runnable -->` (the last non-blank line before the fence). */
  notRunnable: boolean;
}

export interface Example {
  guide: string;
  line: number;
  code: string;
  /** The ```json block right after the ```sh block, if there is one. */
  expected?: string;
}

/** The fenced blocks of a markdown text, in order. */
export function fencedBlocks(markdown: string): Block[] {
  const lines = markdown.split('\n');
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,}|~{3,})\s*([\w+-]*)/.exec(lines[i]!);
    if (!open) continue;
    const [, indent, fence, lang] = open;
    let end = i + 1;
    while (end < lines.length && !(lines[end]!.trim().startsWith(fence!) && /^(`{3,}|~{3,})$/.test(lines[end]!.trim()))) end++;
    let before = i - 1;
    while (before >= 0 && lines[before]!.trim() === '') before--;
    blocks.push({
      lang: lang ?? '',
      code: lines.slice(i + 1, end).map((line) => (line.startsWith(indent!) ? line.slice(indent!.length) : line)).join('\n'),
      line: i + 1,
      notRunnable: before >= 0 && lines[before]!.trim() === NOT_RUNNABLE,
    });
    i = end;
  }
  return blocks;
}

/** The runnable examples of a guide: its ```sh blocks not marked, each with the ```json block that follows it. */
export function examples(guide: string, markdown = readFileSync(resolve(ROOT, guide), 'utf8')): Example[] {
  const blocks = fencedBlocks(markdown);
  const lines = markdown.split('\n');
  const found: Example[] = [];
  blocks.forEach((block, index) => {
    if (block.lang !== 'sh' || block.notRunnable) return;
    const next = blocks[index + 1];
    // "Right after": only blank lines between the sh block's closing fence and the json block's opening one.
    const closing = block.line + block.code.split('\n').length;
    const adjacent = next?.lang === 'json' && lines.slice(closing + 1, next.line - 1).every((line) => line.trim() === '');
    found.push({ guide, line: block.line, code: block.code, ...(adjacent && { expected: next.code }) });
  });
  return found;
}

/** Every JSON value in a text, in order (curl prints answers back to back, with or without newlines between). */
export function jsonValues(text: string): unknown[] {
  const values: unknown[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c !== '{' && c !== '[') {
      i++;
      continue;
    }
    const end = matchingEnd(text, i);
    if (end < 0) {
      i++;
      continue;
    }
    try {
      values.push(JSON.parse(text.slice(i, end + 1)));
      i = end + 1;
    } catch {
      i++;
    }
  }
  return values;
}

/** The index of the bracket that closes the one at `start`, skipping strings; -1 when it never closes. */
function matchingEnd(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') {
      depth--;
      if (depth === 0) return i;
    }
  }
  return -1;
}

/**
 * Where `actual` differs from what `expected` shows, or undefined when it matches: objects must have
 * every field shown (more are fine), arrays the same length and elements (a last element `"…"` allows any
 * rest), `"…"` matches any value, a string with `…` in it matches any text in its place.
 */
export function mismatch(expected: unknown, actual: unknown, path = '$'): string | undefined {
  if (expected === '…') return actual === undefined ? `${path}: missing` : undefined;
  if (typeof expected === 'string' && expected.includes('…')) {
    const pattern = new RegExp(`^${expected.split('…').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('[\\s\\S]*')}$`);
    return typeof actual === 'string' && pattern.test(actual) ? undefined : `${path}: ${JSON.stringify(actual)} is not ${JSON.stringify(expected)}`;
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) return `${path}: ${JSON.stringify(actual)} is not an array`;
    const open = expected.at(-1) === '…';
    const shown = open ? expected.slice(0, -1) : expected;
    if (open ? actual.length < shown.length : actual.length !== shown.length) return `${path}: ${actual.length} elements, ${open ? 'at least ' : ''}${shown.length} shown`;
    for (let i = 0; i < shown.length; i++) {
      const found = mismatch(shown[i], actual[i], `${path}[${i}]`);
      if (found) return found;
    }
    return undefined;
  }
  if (expected !== null && typeof expected === 'object') {
    if (actual === null || typeof actual !== 'object' || Array.isArray(actual)) return `${path}: ${JSON.stringify(actual)} is not an object`;
    for (const [key, value] of Object.entries(expected)) {
      if (!(key in actual)) return `${path}.${key}: missing`;
      const found = mismatch(value, (actual as Record<string, unknown>)[key], `${path}.${key}`);
      if (found) return found;
    }
    return undefined;
  }
  return Object.is(expected, actual) ? undefined : `${path}: ${JSON.stringify(actual)} is not ${JSON.stringify(expected)}`;
}
