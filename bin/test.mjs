// `npm test`: the two type checks run beside the test suite rather than before it. Vitest keeps
// about 1.3 of the 2 cores busy on average (its test files wait on engines, browsers and child
// processes), and a type check is one single-threaded minute that fits in the rest. The tests run
// the TypeScript themselves, so neither waits for the other; the run fails if any of the three does.
// Arguments go to vitest: `npm test -- test/e2e/kv.test.ts`.
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);
const tsc = require.resolve('typescript/bin/tsc');
// vitest's package exports name no bin file: its `vitest.mjs` sits beside its package.json.
const vitest = join(dirname(require.resolve('vitest/package.json')), 'vitest.mjs');

/** Runs `node <args>`; a type check's output is kept and printed once it has finished, so it never interleaves with the tests'. */
function run(name, args, quiet) {
  return new Promise((done) => {
    const child = spawn(process.execPath, args, { stdio: quiet ? ['ignore', 'pipe', 'pipe'] : 'inherit' });
    let output = '';
    if (quiet) for (const stream of [child.stdout, child.stderr]) stream.on('data', (chunk) => (output += chunk));
    child.on('exit', (code, signal) => done({ name, code: code ?? 1, signal, output }));
  });
}

const results = await Promise.all([
  run('tsc --noEmit', [tsc, '--noEmit'], true),
  run('tsc --noEmit -p console', [tsc, '--noEmit', '-p', 'console'], true),
  run('vitest run', [vitest, 'run', ...process.argv.slice(2)], false),
]);
for (const { name, code, signal, output } of results) {
  if (output.trim()) process.stdout.write(`\n${name}:\n${output}`);
  if (code !== 0) console.error(`${name} failed (${signal ?? `exit code ${code}`})`);
}
process.exit(results.some((result) => result.code !== 0) ? 1 : 0);
