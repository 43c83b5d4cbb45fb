import { AssetHashType, DockerImage, type ILocalBundling } from 'aws-cdk-lib';
import { Code } from 'aws-cdk-lib/aws-lambda';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { buildSync } from 'esbuild';
import { fileURLToPath } from 'node:url';
import { buildApiReference } from '../../console/api-reference.js';
import { buildConsole } from '../../console/build.js';
import { API_REFERENCE_FILES_NAME, CONSOLE_FILES_NAME } from '../../functions/console/assets.js';
import { FLOW_DEFINITIONS_FILE } from '../../functions/domain/flows/flow-definitions.js';
import type { EsmBundleOptions } from './esm-chunks.js';

let bundler: string | undefined;
/**
 * esm-bundle-child.ts and what it imports as one ES module for a plain `node` (esbuild left an
 * import, resolved from the project root): made once per process, in milliseconds.
 */
const bundlerCode = () => (bundler ??= buildSync({
  entryPoints: [fileURLToPath(new URL('./esm-bundle-child.ts', import.meta.url))],
  bundle: true,
  write: false,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  packages: 'external',
  logLevel: 'warning',
}).outputFiles[0]!.text);

/**
 * The bundle is ESM (the handlers are ESM and `jose` ships ESM only). esbuild turns CommonJS
 * dependencies' `require()` of Node built-ins into calls of a global `require`, which ESM lacks:
 * the banner provides one, in every file of the bundle.
 */
export const ESM_REQUIRE_SHIM =
  "import { createRequire as __flowgateCreateRequire } from 'node:module'; const require = __flowgateCreateRequire(import.meta.url);";

/** Stands in for the SDK's default credential chain in every bundle (see the file for why). */
export const LAMBDA_CREDENTIALS = 'functions/adapters/aws/lambda-credentials.ts';

/**
 * One handler's code as Lambda receives it, bundled by the local esbuild (no Docker):
 *
 * - ESM for Node.js 22, minified, without source maps (`--enable-source-maps` costs cold-start
 *   time and the maps double the asset), preferring packages' ESM builds, which tree-shake better;
 * - everything bundled, the AWS SDK included: the version is the one pinned in package-lock.json
 *   and tested, and a tree-shaken, minified client loads faster than the runtime's full packages;
 * - split into chunks: `index.mjs` and the one chunk it imports are what Lambda loads at init, and
 *   each `import()` (a client that only some requests need) becomes a chunk loaded on first use.
 *   Without splitting esbuild inlines such modules, which then cost their size, untree-shaken,
 *   in the one file; NodejsFunction cannot split (it fixes `--outfile`), hence this bundling.
 *   esm-chunks.ts keeps init to those two files and to what the entry alone needs;
 * - `@aws-sdk/credential-provider-node` replaced with the environment alone: Lambda hands the
 *   role's credentials over in the environment, and the chain's other links (files, SSO, STS,
 *   instance metadata) never run there.
 *
 * bench/cold-start.bench.ts measures the result; bench/README.md says what each choice was worth.
 */
export function esmBundle(projectRoot: string, entry: string, options: { withConsole?: boolean; flowDefinitions?: Readonly<Record<string, unknown>>; external?: readonly string[] } = {}): Code {
  return Code.fromAsset(projectRoot, {
    assetHashType: AssetHashType.OUTPUT,
    bundling: {
      // Required by the type, never pulled: local bundling either succeeds or throws.
      image: DockerImage.fromRegistry('public.ecr.aws/docker/library/node:22'),
      local: new EsbuildBundling(projectRoot, entry, options.withConsole ?? false, options.flowDefinitions, options.external ?? []),
    },
  });
}

/**
 * esbuild's options for one entry. Its fields are what the CDK's bundling cache is keyed on
 * within a synth (the key is the options serialised), so two entries never share a bundle.
 */
export class EsbuildBundling implements ILocalBundling {
  constructor(readonly projectRoot: string, readonly entry: string, readonly withConsole: boolean, readonly flowDefinitions?: Readonly<Record<string, unknown>>, readonly external: readonly string[] = []) {}

  tryBundle(outputDir: string): boolean {
    const options: EsmBundleOptions = {
      projectRoot: this.projectRoot,
      entry: this.entry,
      outdir: outputDir,
      external: this.external,
      banner: ESM_REQUIRE_SHIM,
      // Resolved from the working directory, `projectRoot`.
      alias: { '@aws-sdk/credential-provider-node': `./${LAMBDA_CREDENTIALS}` },
    };
    // esbuild runs plugins only asynchronously, and the CDK asks for the bundle synchronously;
    // the child's output goes to stderr, as CDK's own progress does.
    execFileSync(process.execPath, ['--input-type=module', '-e', bundlerCode()], { cwd: this.projectRoot, input: JSON.stringify(options), stdio: ['pipe', 2, 'inherit'] });
    // The console's files, read by the function on its first console request, never at init.
    if (this.withConsole) writeFileSync(join(outputDir, CONSOLE_FILES_NAME), JSON.stringify(buildConsole()));
    // The API reference page (Scalar's bundle, about 4.3 MB): beside the code, read by its first request, never at init.
    if (this.withConsole) writeFileSync(join(outputDir, API_REFERENCE_FILES_NAME), JSON.stringify(buildApiReference()));
    // The flows' definitions, read by the function on its first GET /flows/{name}, never at init.
    if (this.flowDefinitions) writeFileSync(join(outputDir, FLOW_DEFINITIONS_FILE), JSON.stringify(this.flowDefinitions));
    return true;
  }
}
