// Links every ES module file given on the command line, with everything each imports, without
// running any of them (node --experimental-vm-modules): an import of a name its module does not
// export fails here as it would when a function first loads that file. Node's built-ins link to
// modules of their real exports. Prints one JSON line: the files that failed, with the error.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, resolve } from 'node:path';
import vm from 'node:vm';

const require = createRequire(import.meta.url);
const cache = new Map();
const context = vm.createContext({});

function builtin(specifier) {
  const real = require(specifier);
  const names = [...new Set(['default', ...Object.keys(real)])];
  return new vm.SyntheticModule(names, function () {
    for (const name of names) this.setExport(name, name === 'default' ? real : real[name]);
  }, { identifier: specifier, context });
}

function load(file) {
  let module = cache.get(file);
  if (!module) {
    module = new vm.SourceTextModule(readFileSync(file, 'utf8'), { identifier: file, context });
    cache.set(file, module);
  }
  return module;
}

async function linker(specifier, referencing) {
  if (specifier.startsWith('node:') || !/^[./]/.test(specifier)) {
    const key = specifier.startsWith('node:') ? specifier : `node:${specifier}`;
    if (!cache.has(key)) cache.set(key, builtin(key));
    return cache.get(key);
  }
  return load(resolve(dirname(referencing.identifier), specifier));
}

const failures = [];
for (const file of process.argv.slice(2)) {
  try {
    const module = load(resolve(file));
    // A file another file imports is linked with it.
    if (module.status === 'unlinked') await module.link(linker);
  } catch (error) {
    failures.push({ file, error: String(error?.message ?? error) });
  }
}
process.stdout.write(`${JSON.stringify(failures)}\n`);
