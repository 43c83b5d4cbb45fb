import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fencedBlocks, ROOT, type Example } from './guides.js';

/**
 * A guide's ```ts examples as one program for tsx. Each block runs in a scope of its own (so names may
 * repeat from one block to the next), in order, in one process per guide, when the runner writes a line
 * to the process's stdin (so sh and ts blocks run in the guide's order); its `import`s are hoisted to
 * the top and merged; `@flowgate/client` is the repository's client/src (no build). In scope for every
 * block: `flowgate`, a client of the local stack acting with `$TOKEN`, and `baseUrl`, `token`, `apiKey`
 * (the same values as `$FLOWGATE_URL`, `$TOKEN`, `$API_KEY`). `console.log` prints a value that is not a
 * string as JSON, so the ```json block after a ts block is matched like a sh block's. A line ending
 * `// → value` asserts its expression (or its `console.log` argument) against the JSON value shown.
 */

/** Where the client's package name points while the docs run: its sources, Node entry. */
export const SPECIFIERS: Readonly<Record<string, string>> = {
  '@flowgate/client': resolve(ROOT, 'client/src/index.node.ts'),
  '@flowgate/client/webhooks': resolve(ROOT, 'client/src/webhooks.ts'),
};

/** The runnable ```ts blocks of a guide (not marked `<!-- not-runnable -->`), each with the ```json block right after it. */
export function tsExamples(guide: string, markdown = readFileSync(resolve(ROOT, guide), 'utf8')): Example[] {
  const blocks = fencedBlocks(markdown);
  const lines = markdown.split('\n');
  const found: Example[] = [];
  blocks.forEach((block, index) => {
    if (block.lang !== 'ts' || block.notRunnable) return;
    const next = blocks[index + 1];
    const closing = block.line + block.code.split('\n').length;
    const adjacent = next?.lang === 'json' && lines.slice(closing + 1, next.line - 1).every((line) => line.trim() === '');
    found.push({ guide, line: block.line, code: block.code, ...(adjacent && { expected: next.code }) });
  });
  return found;
}

/** The marker printed before each block, so the runner can tell which block printed what. */
export const blockMarker = (line: number) => `__flowgate_ts_block ${line}__`;
/** The marker printed after a block that returned. */
export const blockDone = (line: number) => `__flowgate_ts_done ${line}__`;
/** The line a failing program prints on stderr before the error: the block that threw. */
export const FAILED = '__flowgate_ts_failed';

const IMPORT = /^\s*import\s+(type\s+)?([\s\S]*?)\s+from\s+['"]([^'"]+)['"];?\s*$/;
const ARROW = /^(\s*)(?:console\.log\((.*)\)|(.*?));?\s*\/\/ → (.+)$/;

/**
 * The program for a guide's ts blocks: hoisted imports, the prelude, then each block in its own
 * `try { … }` that reports the block's line when it throws. Throws when a block's import is not of a
 * form it can hoist (`import { a, b as c } from 'x'`, `import * as x from 'x'`, `import x from 'x'`).
 */
export function tsProgram(runnable: readonly Example[], helpers = resolve(ROOT, 'test/docs/guides.ts')): string {
  const named = new Map<string, Set<string>>();
  const whole = new Set<string>();
  const bodies: string[] = [];
  for (const example of runnable) {
    const kept: string[] = [];
    // An import may span lines: gather from `import` to the line holding `from '…'`.
    const lines = example.code.split('\n');
    for (let i = 0; i < lines.length; i++) {
      if (!/^\s*import\s/.test(lines[i]!)) {
        kept.push(assertArrow(lines[i]!, `${example.guide}:${example.line + 1 + i}`));
        continue;
      }
      let statement = lines[i]!;
      while (!/\sfrom\s+['"][^'"]+['"];?\s*$/.test(statement) && i + 1 < lines.length) statement += `\n${lines[++i]!}`;
      kept.push('');
      const parsed = IMPORT.exec(statement);
      if (!parsed) throw new Error(`${example.guide}:${example.line}: cannot hoist ${JSON.stringify(statement)}`);
      const [, typeOnly, clause, from] = parsed;
      if (typeOnly) continue; // types are erased: nothing to run
      const specifier = SPECIFIERS[from!] ?? from!;
      const braces = /^\{([\s\S]*)\}$/.exec(clause!.trim());
      if (braces) {
        const names = named.get(specifier) ?? new Set<string>();
        for (const name of braces[1]!.split(',').map((part) => part.trim()).filter(Boolean)) if (!name.startsWith('type ')) names.add(name);
        named.set(specifier, names);
      } else whole.add(`import ${clause!.trim()} from ${JSON.stringify(specifier)};`);
    }
    bodies.push([
      `await __next(); __at = ${example.line}; process.stdout.write(${JSON.stringify(`\n${blockMarker(example.line)}\n`)});`,
      'try {',
      ...kept,
      `} catch (error) { __fail(${example.line}, error); }`,
      `process.stdout.write(${JSON.stringify(`\n${blockDone(example.line)}\n`)});`,
    ].join('\n'));
  }
  const client = SPECIFIERS['@flowgate/client']!;
  const clientNames = named.get(client) ?? new Set<string>();
  clientNames.add('createClient as __createClient');
  named.set(client, clientNames);
  return [
    ...[...named].map(([specifier, names]) => `import { ${[...names].join(', ')} } from ${JSON.stringify(specifier)};`),
    ...whole,
    `import { mismatch as __mismatch } from ${JSON.stringify(helpers)};`,
    'import { format as __format } from "node:util";',
    'import { createInterface as __createInterface } from "node:readline";',
    'const baseUrl = process.env.FLOWGATE_URL!;',
    'const token = process.env.TOKEN!;',
    'const apiKey = process.env.API_KEY!;',
    'const flowgate = __createClient({ baseUrl, token });',
    'let __at = 0;',
    'console.log = (...values: unknown[]) => { process.stdout.write(values.map((v) => (typeof v === "string" ? v : JSON.stringify(v) ?? __format(v))).join(" ") + "\\n"); };',
    'function __fail(line: number, error: unknown): never {',
    `  process.stderr.write(\`\\n${FAILED} \${line}\\n\${error instanceof Error ? (error.stack ?? error.message) : __format(error)}\\n\`);`,
    '  process.exit(1);',
    '}',
    'function __expect(at: string, actual: unknown, shown: string): void {',
    '  const wrong = __mismatch(JSON.parse(shown), JSON.parse(JSON.stringify(actual) ?? "null"));',
    '  if (wrong) throw new Error(`${at} shows // → ${shown}, but ${wrong}`);',
    '}',
    'process.on("unhandledRejection", (error) => __fail(__at, error));',
    '// Each block waits for a line on stdin: the runner interleaves the ts blocks with the sh ones.',
    'const __go = __createInterface({ input: process.stdin })[Symbol.asyncIterator]();',
    'async function __next(): Promise<void> { if ((await __go.next()).done) process.exit(0); }',
    ...bodies,
    '',
  ].join('\n');
}

/** A line `expr; // → value` or `console.log(expr); // → value` becomes a check of `expr` against `value`. */
function assertArrow(line: string, at: string): string {
  const arrow = ARROW.exec(line);
  if (!arrow) return line;
  const [, indent, logged, bare, shown] = arrow;
  try {
    JSON.parse(shown!);
  } catch {
    throw new Error(`${at}: the value after // → is not JSON: ${shown}`);
  }
  const declared = logged === undefined ? /^(?:const|let|var)\s+(\w+)\s*=/.exec(bare!) : null;
  if (declared) return `${indent}${bare!}; __expect(${JSON.stringify(at)}, ${declared[1]!}, ${JSON.stringify(shown)});`;
  const expression = logged ?? bare!;
  return `${indent}{ const __value = ${expression}; ${logged === undefined ? '' : 'console.log(__value); '}__expect(${JSON.stringify(at)}, __value, ${JSON.stringify(shown)}); }`;
}
