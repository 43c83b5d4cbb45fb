import { readFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { build, formatMessages, type BuildOptions, type Metafile, type Plugin } from 'esbuild';

/**
 * One handler bundled into ESM chunks so that its init loads two files, `index.mjs` and one chunk
 * holding what the entry needs, while each `import()` still becomes a chunk loaded on first use.
 * esbuild's own split needs two corrections for that:
 *
 * 1. **Lazy modules come after the entry.** esbuild puts each module in the chunk of the exact set
 *    of entry points that reach it, and every `import()` target is an entry point. It does not
 *    know that a lazy chunk only ever runs after `index.mjs` has loaded, so a module that the entry
 *    and some lazy modules both import (the logger, the errors, a piece of the SDK) lands in a
 *    chunk of its own for each distinct set: the receiver's init was 22 files of 222 bytes and up,
 *    each a module for Node.js to resolve, read, compile and link. Here every lazy module is
 *    reached through a small wrapper that imports the entry first and then re-exports the module:
 *    each lazy entry point now reaches everything the entry reaches, those modules share one set
 *    of entry points and so one chunk. The wrappers re-export exactly what esbuild's own split
 *    gave each lazy chunk, so `import()` returns the same names (`default` of CommonJS included).
 *
 * 2. **A barrel file does not drag lazy code into init.** esbuild also places a module by which
 *    entry points *reach* it, not which use it: when the entry imports one name from a barrel
 *    (`@aws-sdk/core/protocols` for the DynamoDB client's JSON protocol) and a lazy module uses
 *    another (the S3 client's XML protocol), every module the barrel re-exports and anyone uses
 *    is loaded at init: 40 KB of S3 code (and Node.js's web streams) in the objects function's
 *    init. So the re-exports of modules that the entry alone does not keep (a build with every
 *    `import()` left out says which) are cut from the barrel at init, and lazy modules import
 *    the barrel through a view that adds them back: still one instance of every module.
 *
 * What runs at init is what the entry alone needs, as before, and the entry module is evaluated
 * once; a lazy chunk imports what init already loaded. bench/README.md has the figures.
 */
export interface EsmBundleOptions {
  /** Repository root: `entry` is relative to it, and the alias below is resolved from it. */
  projectRoot: string;
  entry: string;
  outdir: string;
  /** Packages left as imports (native modules, a `.node` binary esbuild cannot bundle). */
  external: readonly string[];
  /** The bundle's first line, in every file. */
  banner: string;
  alias: Record<string, string>;
}

/** Marks a resolution this file's plugins asked for themselves, so that they do not redirect it again. */
const PLAIN = Symbol('plain');
const LAZY_WRAPPER = 'flowgate-lazy';
const LAZY_BARREL = 'flowgate-lazy-barrel';
/** Builds that settle what the cuts take before giving them up (one or two in every function today). */
const MAX_SETTLING_BUILDS = 30;

/** Writes the bundle into `options.outdir`; returns esbuild's metafile of it. */
export async function bundleEsm(options: EsmBundleOptions): Promise<Metafile> {
  const entry = resolve(options.projectRoot, options.entry);
  const base: BuildOptions = {
    absWorkingDir: options.projectRoot,
    entryPoints: { index: entry },
    outdir: options.outdir,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node22',
    mainFields: ['module', 'main'],
    banner: { js: options.banner },
    minify: true,
    sourcemap: false,
    alias: options.alias,
    logLevel: 'warning',
    external: [...options.external],
  };
  const dryRun = { write: false, metafile: true, logLevel: 'silent' } as const;
  const absolute = (path: string) => resolve(options.projectRoot, path);
  const { metafile: split } = await build({ ...base, ...dryRun });
  // Plugins' filters are matched in esbuild itself, while a callback is a round trip to this process:
  // each filter below names exactly the specifiers its callback may act on, as esbuild's own split met them.
  const records = Object.values(split.inputs).flatMap((input) => input.imports.filter((i) => !i.external));
  const dynamicSpecifiers = exactly(records.filter((i) => i.kind === 'dynamic-import').map((i) => i.original!));
  const { metafile: alone } = await build({ ...base, ...dryRun, plugins: [dynamicImportsLeftOut(dynamicSpecifiers)] });
  const atInit = new Set(Object.values(alone.outputs).flatMap((output) => Object.keys(output.inputs)).map(absolute));
  const cuts = barrelCuts(split, entry, atInit, absolute);
  const specifierPath = (from: string, specifier: string) => {
    const record = split.inputs[relative(options.projectRoot, from)]?.imports.find((i) => i.original === specifier && !i.external);
    return record && absolute(record.path);
  };
  const wrappers = lazyModulesAfterEntry(entry, lazyExports(split, entry, absolute), dynamicSpecifiers);
  /** The specifiers that name a barrel now cut, and the barrels themselves (a view imports its barrel by path). */
  const barrelSpecifiers = () => exactly([...records.filter((i) => cuts.has(absolute(i.path))).map((i) => i.original!), ...cuts.keys()]);
  // A cut takes names that other modules at init may still name: a barrel re-exporting one by
  // name, whose re-export is then cut too (lazy modules get it from its view), or an import the
  // entry's tree shaking drops, for which the name goes back. esbuild says which, build by build.
  settleKnownNames(cuts, atInit, specifierPath);
  // Silent, as a failed attempt writes nothing and its errors are handled below; the warnings of
  // the one that succeeds are shown.
  for (let attempt = 0; cuts.size > 0; attempt++) {
    try {
      const plugins = [wrappers, barrelsCutAtInit(cuts, atInit, barrelSpecifiers())];
      const result = await build({ ...base, metafile: true, logLevel: 'silent', logOverride: { 'import-is-undefined': 'error' }, plugins });
      for (const warning of await formatMessages(result.warnings, { kind: 'warning', color: false })) console.warn(warning);
      return result.metafile;
    } catch (error) {
      const messages = (error as { errors?: { text: string; location?: { file: string } | null }[] }).errors ?? [];
      // esbuild reports a name once per importing statement, and a re-export may be met twice.
      const missing = [...new Map(messages.map((message) => [`${message.text} ${message.location?.file}`, message])).values()]
        .map((message) => missingExport(message.text, message.location?.file));
      const settled = missing.every(Boolean) && missing.map((m) => {
        const [barrel, importer] = [absolute(m!.barrel), m!.importer && absolute(m!.importer)];
        return (importer !== undefined && atInit.has(importer) && cutReExport(cuts, importer, barrel, m!.name, specifierPath)) || putBack(cuts, barrel, m!.name, specifierPath);
      }).some(Boolean);
      // Some other error, or one that changes nothing: the split without the cuts is correct, only larger at init.
      if (attempt >= MAX_SETTLING_BUILDS || !settled) {
        console.warn(`bundling ${options.entry}: cutting lazy re-exports out of barrel files failed, bundled without: ${messages[0]?.text ?? error}`);
        break;
      }
    }
  }
  return (await build({ ...base, metafile: true, plugins: [wrappers] })).metafile;
}

/** The barrel, the name and the importing file of esbuild's "No matching export" error, or of its "will always be undefined" warning. */
function missingExport(text: string, importer: string | undefined): { barrel: string; name: string; importer?: string } | undefined {
  const unmatched = /^No matching export in "(?:[\w-]+:)?([^"]+)" for import "([^"]+)"/.exec(text);
  if (unmatched) return { barrel: unmatched[1]!, name: unmatched[2]!, importer };
  const undefinedImport = /^Import "([^"]+)" will always be undefined because there is no matching export in "(?:[\w-]+:)?([^"]+)"/.exec(text);
  return undefinedImport ? { barrel: undefinedImport[2]!, name: undefinedImport[1]!, importer } : undefined;
}

/**
 * Cuts `name` out of `importer`'s re-export of it from `barrel` (`export { a, name as b } from …`),
 * for its view to add back. False when `importer` has no such re-export.
 */
function cutReExport(cuts: Map<string, BarrelCut>, importer: string, barrel: string, name: string, specifierPath: (from: string, specifier: string) => string | undefined): boolean {
  if (!/\.m?js$/.test(importer)) return false;
  const cut = cuts.get(importer) ?? { atInit: readFileSync(importer, 'utf8'), cut: [] };
  if (cut.cut.length === 0 && /\bexport\s+default\b|\bas\s+default\b/.test(cut.atInit)) return false;
  let found = false;
  const atInit = cut.atInit.replace(RE_EXPORT, (statement, _quote, specifier: string) => {
    const list = /^export\s*\{([^}]*)\}/.exec(statement)?.[1];
    if (found || list === undefined || specifierPath(importer, specifier) !== barrel) return statement;
    const items = list.split(',').map((item) => item.trim()).filter(Boolean);
    const kept = items.filter((item) => item.split(/\s+as\s+/)[0]!.trim() !== name);
    if (kept.length === items.length) return statement;
    found = true;
    cut.cut.push(`export { ${items.filter((item) => !kept.includes(item)).join(', ')} } from ${JSON.stringify(specifier)};`);
    return kept.length > 0 ? `export { ${kept.join(', ')} } from ${JSON.stringify(specifier)};` : '';
  });
  if (!found) return false;
  cut.atInit = atInit;
  cuts.set(importer, cut);
  return true;
}

/**
 * What esbuild would otherwise report on a first build, settled from the sources, which saves a
 * build per bundle: a barrel at init re-exporting by name what another barrel's cut took
 * (`httpAuthSchemes/index.js` re-exports `aws_sdk/index.js`'s SigV4a signer) has that re-export
 * cut too; a module at init importing a cut name its tree shaking drops has the name put back.
 */
function settleKnownNames(cuts: Map<string, BarrelCut>, atInit: Set<string>, specifierPath: (from: string, specifier: string) => string | undefined): void {
  const cutNames = (barrel: string) => (cuts.get(barrel)?.cut ?? []).flatMap((statement) => exportedNames(statement) ?? []);
  for (let changed = true; changed;) {
    changed = false;
    for (const importer of atInit) {
      if (!/\.m?js$/.test(importer) || importer.includes('/functions/')) continue;
      const source = cuts.get(importer)?.atInit ?? readFileSync(importer, 'utf8');
      for (const [statement, , specifier] of source.matchAll(RE_EXPORT)) {
        const barrel = specifierPath(importer, specifier!);
        if (!barrel || !cuts.has(barrel)) continue;
        const taken = cutNames(barrel);
        for (const name of exportedNames(statement) === undefined ? [] : importedNames(statement)) {
          if (taken.includes(name) && cutReExport(cuts, importer, barrel, name, specifierPath)) changed = true;
        }
      }
      // An import of a cut name by a module at init, dropped by tree shaking there: the name goes back.
      for (const [, list, , specifier] of source.matchAll(NAMED_IMPORT)) {
        const barrel = specifierPath(importer, specifier!);
        if (!barrel || !cuts.has(barrel)) continue;
        const taken = cutNames(barrel);
        for (const name of importedNames(`export {${list}}`)) if (taken.includes(name) && putBack(cuts, barrel, name, specifierPath)) changed = true;
      }
    }
  }
}

const NAMED_IMPORT = /import\s*\{([^}]*)\}\s*from\s*(["'])([^"']+)\2/g;

/** The names `export { a, b as c } from "x"` takes from "x" (a, b). */
function importedNames(statement: string): string[] {
  const list = /^export\s*\{([^}]*)\}/.exec(statement)?.[1] ?? '';
  return list.split(',').map((item) => item.trim().split(/\s+as\s+/)[0]!.trim()).filter(Boolean);
}

/**
 * Puts back the cut re-exports that may give `barrel` the export `name`: its own that name it, or
 * every `export *` (whose names this does not know), looking through the barrels it re-exports
 * with `*` (`lib-dynamodb`'s index re-exports its commands' index). False when none was cut.
 */
function putBack(cuts: Map<string, BarrelCut>, barrel: string, name: string, specifierPath: (from: string, specifier: string) => string | undefined, seen = new Set<string>()): boolean {
  if (seen.has(barrel)) return false;
  seen.add(barrel);
  let putBackAny = false;
  const cut = cuts.get(barrel);
  if (cut) {
    const back = cut.cut.filter((statement) => exportedNames(statement)?.includes(name) ?? true);
    cut.atInit = `${cut.atInit}\n${back.join('\n')}`;
    cut.cut = cut.cut.filter((statement) => !back.includes(statement));
    if (cut.cut.length === 0) cuts.delete(barrel);
    putBackAny = back.length > 0;
  }
  const source = cut?.atInit ?? (/\.m?js$/.test(barrel) ? readFileSync(barrel, 'utf8') : '');
  for (const [, , specifier] of source.matchAll(STAR_RE_EXPORT)) {
    const target = specifierPath(barrel, specifier!);
    if (target && putBack(cuts, target, name, specifierPath, seen)) putBackAny = true;
  }
  return putBackAny;
}

/** The names `export { a, b as c } from "x"` exports (a, c); undefined for `export *`. */
function exportedNames(statement: string): string[] | undefined {
  const list = /^export\s*\{([^}]*)\}/.exec(statement)?.[1];
  return list?.split(',').map((item) => item.trim().split(/\s+as\s+/).pop()!.trim()).filter(Boolean);
}

const dynamicImportsLeftOut = (specifiers: RegExp): Plugin => ({
  name: 'dynamic-imports-left-out',
  setup(pluginBuild) {
    pluginBuild.onResolve({ filter: specifiers }, (args) => (args.kind === 'dynamic-import' ? { path: args.path, external: true } : undefined));
  },
});

/** A filter matching exactly these strings (none, if empty). */
function exactly(strings: Iterable<string>): RegExp {
  const alternatives = [...new Set(strings)].map((text) => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&'));
  return alternatives.length > 0 ? new RegExp(`^(?:${alternatives.join('|')})$`) : /$^/;
}

/** What each `import()` target exports, by its absolute path, as esbuild's own split made it. */
function lazyExports(metafile: Metafile, entry: string, absolute: (path: string) => string): Map<string, string[]> {
  const exports = new Map<string, string[]>();
  for (const output of Object.values(metafile.outputs)) {
    if (output.entryPoint && absolute(output.entryPoint) !== entry) exports.set(absolute(output.entryPoint), output.exports);
  }
  return exports;
}

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;
const exportName = (name: string) => (IDENTIFIER.test(name) ? name : JSON.stringify(name));

function lazyModulesAfterEntry(entry: string, exportsOf: Map<string, string[]>, specifiers: RegExp): Plugin {
  return {
    name: 'lazy-modules-after-entry',
    setup(pluginBuild) {
      pluginBuild.onResolve({ filter: specifiers }, async (args) => {
        if (args.kind !== 'dynamic-import' || args.pluginData === PLAIN) return undefined;
        const resolved = await pluginBuild.resolve(args.path, { kind: args.kind, importer: args.importer, resolveDir: args.resolveDir, pluginData: PLAIN });
        // Node built-ins and externals stay imports; a target esbuild's own split did not make a chunk stays as it was.
        if (resolved.errors.length > 0 || resolved.external || resolved.namespace !== 'file' || !exportsOf.has(resolved.path)) return undefined;
        return { path: resolved.path, namespace: LAZY_WRAPPER };
      });
      pluginBuild.onLoad({ filter: /.*/, namespace: LAZY_WRAPPER }, (args) => ({
        contents: `import ${JSON.stringify(entry)};\nexport { ${exportsOf.get(args.path)!.map(exportName).join(', ')} } from ${JSON.stringify(args.path)};\n`,
        resolveDir: dirname(args.path),
        loader: 'js',
      }));
    },
  };
}

/** `export * from "x"`, `export * as n from "x"`, `export { a, b as c } from "x"`: a re-export, and its specifier. */
const STAR_RE_EXPORT = /export\s*\*\s*from\s*(["'])([^"']+)\1/g;
const RE_EXPORT = /export\s*(?:\*(?:\s*as\s+[\w$]+)?|\{[^}]*\})\s*from\s*(["'])([^"']+)\1\s*;?/g;

/** A barrel's source with some re-exports cut, and those re-exports. */
interface BarrelCut {
  /** The barrel's source as init has it. */
  atInit: string;
  /** The re-exports cut out of it, which the view lazy modules import adds back. */
  cut: string[];
}

/**
 * For each module the entry alone keeps: its re-exports of modules the entry alone does not keep
 * (reached from the entry through import statements, but left out by a build of the entry with
 * every `import()` left out). Those include modules nothing uses: esbuild places a module by the
 * imports that reach it, even through a module its tree shaking dropped. A module with a default
 * export is left whole (the lazy view re-exports with `*`).
 */
function barrelCuts(split: Metafile, entry: string, atInit: Set<string>, absolute: (path: string) => string): Map<string, BarrelCut> {
  const imports = new Map(Object.entries(split.inputs).map(([path, input]) => [absolute(path), input.imports.filter((i) => i.kind === 'import-statement' && !i.external)]));
  const reached = new Set([entry]);
  for (const path of reached) for (const i of imports.get(path) ?? []) reached.add(absolute(i.path));
  const dragged = new Set([...reached].filter((path) => !atInit.has(path)));
  const cuts = new Map<string, BarrelCut>();
  for (const path of atInit) {
    const specifiers = new Set((imports.get(path) ?? []).filter((i) => dragged.has(absolute(i.path))).map((i) => i.original));
    if (specifiers.size === 0 || !/\.m?js$/.test(path)) continue;
    const source = readFileSync(path, 'utf8');
    if (/\bexport\s+default\b|\bas\s+default\b/.test(source)) continue;
    const cut: string[] = [];
    const kept = source.replace(RE_EXPORT, (statement, _quote, specifier: string) => {
      if (!specifiers.has(specifier)) return statement;
      cut.push(statement);
      return '';
    });
    if (cut.length > 0) cuts.set(path, { atInit: kept, cut });
  }
  return cuts;
}

function barrelsCutAtInit(cuts: Map<string, BarrelCut>, atInit: Set<string>, specifiers: RegExp): Plugin {
  return {
    name: 'barrels-cut-at-init',
    setup(pluginBuild) {
      if (cuts.size === 0) return;
      // A module the entry alone does not keep is only ever run by lazy code: it sees the whole barrel.
      pluginBuild.onResolve({ filter: specifiers }, async (args) => {
        if (args.kind !== 'import-statement' || args.pluginData === PLAIN) return undefined;
        if (args.namespace === 'file' && atInit.has(args.importer)) return undefined;
        const resolved = await pluginBuild.resolve(args.path, { kind: args.kind, importer: args.importer, resolveDir: args.resolveDir, pluginData: PLAIN });
        if (resolved.errors.length > 0 || resolved.namespace !== 'file' || !cuts.has(resolved.path)) return undefined;
        // A view re-exports the barrel as init has it: that one import is the barrel itself.
        if (args.namespace === LAZY_BARREL && resolved.path === args.importer) return undefined;
        return { path: resolved.path, namespace: LAZY_BARREL, sideEffects: false };
      });
      pluginBuild.onLoad({ filter: exactly(cuts.keys()), namespace: 'file' }, (args) => {
        const cut = cuts.get(args.path);
        return cut && { contents: cut.atInit, loader: 'js', resolveDir: dirname(args.path) };
      });
      // The barrel as init has it, plus what was cut: the same instance of each module behind it.
      pluginBuild.onLoad({ filter: /.*/, namespace: LAZY_BARREL }, (args) => ({
        contents: `export * from ${JSON.stringify(args.path)};\n${cuts.get(args.path)!.cut.join('\n')}\n`,
        loader: 'js',
        resolveDir: dirname(args.path),
      }));
    },
  };
}
