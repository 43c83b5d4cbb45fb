/**
 * The import graph of the TypeScript under a folder, read from the files' own import and export
 * declarations (`import type` and `export … from` included, and `import('…')` with a literal
 * specifier), and its circles: groups of files that reach each other through their imports.
 * `import type` counts: a circle of types still means that neither file can be read first.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

/** Each file (relative to `root`, with `/`) and the files of the same tree it imports. */
export type ImportGraph = Map<string, Set<string>>;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : sourceFiles(path);
    return /\.ts$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** The file a relative specifier names (`./x.js` is `./x.ts`, a folder its `index.ts`); undefined for a package or a file outside the tree. */
function resolveSpecifier(from: string, specifier: string, files: ReadonlySet<string>): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  const base = resolve(dirname(from), specifier);
  const candidates = [base, base.replace(/\.(m|c)?js$/, '.$1ts'), `${base}.ts`, join(base, 'index.ts')];
  return candidates.find((candidate) => files.has(candidate));
}

/** The import graph of every `.ts` file under `root` (declaration files left out). */
export function importGraph(root: string): ImportGraph {
  const files = new Set(sourceFiles(root));
  const name = (path: string) => relative(root, path).split('\\').join('/');
  const graph: ImportGraph = new Map();
  for (const file of files) {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    const targets = new Set<string>();
    for (const imported of importedFiles) {
      const target = resolveSpecifier(file, imported.fileName, files);
      if (target) targets.add(name(target));
    }
    graph.set(name(file), targets);
  }
  return graph;
}

/**
 * The circles of `graph`: each strongly connected group of two or more files, or one file that
 * imports itself, its files sorted (Tarjan's algorithm, iterative so a deep tree cannot overflow).
 */
export function importCircles(graph: ImportGraph): string[][] {
  const index = new Map<string, number>();
  const lowLink = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const circles: string[][] = [];
  let counter = 0;
  for (const start of graph.keys()) {
    if (index.has(start)) continue;
    const work: { file: string; next: Iterator<string> }[] = [];
    const visit = (file: string) => {
      index.set(file, counter);
      lowLink.set(file, counter++);
      stack.push(file);
      onStack.add(file);
      work.push({ file, next: (graph.get(file) ?? new Set()).values() });
    };
    visit(start);
    while (work.length > 0) {
      const frame = work[work.length - 1]!;
      const step = frame.next.next();
      if (!step.done) {
        const target = step.value;
        if (!index.has(target)) visit(target);
        else if (onStack.has(target)) lowLink.set(frame.file, Math.min(lowLink.get(frame.file)!, index.get(target)!));
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) lowLink.set(parent.file, Math.min(lowLink.get(parent.file)!, lowLink.get(frame.file)!));
      if (lowLink.get(frame.file) !== index.get(frame.file)) continue;
      const group: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        group.push(member);
      } while (member !== frame.file);
      if (group.length > 1 || graph.get(frame.file)?.has(frame.file)) circles.push(group.sort());
    }
  }
  return circles.sort((a, b) => a[0]!.localeCompare(b[0]!));
}

/** A circle as one line per import that ties it: `a.ts -> b.ts`. */
export function describeCircle(graph: ImportGraph, circle: readonly string[]): string {
  const members = new Set(circle);
  return circle.flatMap((file) => [...graph.get(file)!].filter((target) => members.has(target)).map((target) => `  ${file} -> ${target}`)).join('\n');
}
