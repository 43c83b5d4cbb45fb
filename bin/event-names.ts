import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import ts from 'typescript';
import { PACKAGED_EVENT_NAME_SOURCES, type PackagedNames } from '../functions/domain/webhooks/senders/event-names.js';

/**
 * `npm run docs:event-names`: reads each sender's event names out of the package that publishes
 * them (a union of string literals in its type declarations, so nothing of the package runs) and
 * writes `event-names.generated.ts`. The packages are devDependencies: no bundle carries them.
 */
const ROOT = resolve(import.meta.dirname, '..');
export const GENERATED = resolve(ROOT, 'functions/domain/webhooks/senders/event-names.generated.ts');

/** The string literals each source's `type` stands for, sorted, as the TypeScript checker reads them. */
function namesOf(sources: Readonly<Record<string, PackagedNames>>): Record<string, string[]> {
  // One file per source, in the project so its node_modules resolve: `<import>` and `type Names = <type>`.
  const files = new Map(Object.entries(sources).map(([id, source]) => [resolve(ROOT, `__event_names_${id}__.ts`), `${source.import}\nexport type Names = ${source.type};\n`]));
  const options: ts.CompilerOptions = { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, target: ts.ScriptTarget.ES2022, strict: true, noEmit: true, skipLibCheck: true, types: [] };
  const host = ts.createCompilerHost(options);
  const { readFile, fileExists, getSourceFile } = host;
  host.readFile = (name) => files.get(name) ?? readFile.call(host, name);
  host.fileExists = (name) => files.has(name) || fileExists.call(host, name);
  host.getSourceFile = (name, version, ...rest) => {
    const text = files.get(name);
    return text === undefined ? getSourceFile.call(host, name, version, ...rest) : ts.createSourceFile(name, text, version);
  };
  const program = ts.createProgram([...files.keys()], options, host);
  const checker = program.getTypeChecker();
  return Object.fromEntries(Object.keys(sources).map((id, index) => {
    const sourceFile = program.getSourceFile([...files.keys()][index]!)!;
    const problems = ts.getPreEmitDiagnostics(program, sourceFile).map((d) => ts.flattenDiagnosticMessageText(d.messageText, ' '));
    if (problems.length > 0) throw new Error(`event names of ${id}: ${problems.join('; ')}`);
    const alias = sourceFile.statements.find(ts.isTypeAliasDeclaration)!;
    const type = checker.getTypeAtLocation(alias.name);
    const names = (type.isUnion() ? type.types : [type]).map((member) => {
      if (!member.isStringLiteral()) throw new Error(`event names of ${id}: ${checker.typeToString(member)} is not a string literal`);
      return member.value;
    });
    return [id, [...new Set(names)].sort()];
  }));
}

/** The generated module's text. */
export function generatedEventNames(): string {
  const names = namesOf(PACKAGED_EVENT_NAME_SOURCES);
  const body = Object.entries(names).map(([id, list]) => `  ${id}: [\n${list.map((name) => `    ${JSON.stringify(name)},`).join('\n')}\n  ],`).join('\n');
  return `// Written by \`npm run docs:event-names\` (bin/event-names.ts) from the packages event-names.ts names: do not edit.
// test/domain/event-names.test.ts writes it again and compares, so it follows the packages' versions.
export const PACKAGED_EVENT_NAMES: Readonly<Record<string, readonly string[]>> = {
${body}
};
`;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  writeFileSync(GENERATED, generatedEventNames());
  console.log(`${GENERATED}: written`);
}
