import { resolve } from 'node:path';
import { AssetHashType, DockerImage, type ILocalBundling } from 'aws-cdk-lib';
import { Code } from 'aws-cdk-lib/aws-lambda';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildSync } from 'esbuild';
import { buildApiReference } from '../../console/api-reference.js';
import { buildConsole } from '../../console/build.js';
import { API_REFERENCE_FILES_NAME, CONSOLE_FILES_NAME } from '../../functions/console/assets.js';
import { FLOW_DEFINITIONS_FILE } from '../../functions/domain/flows/flow-definitions.js';

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
 * - split into chunks: `index.mjs` and the chunks it imports are what Lambda loads at init, and
 *   each `import()` (a client that only some requests need) becomes a chunk loaded on first use.
 *   Without splitting esbuild inlines such modules, which then cost their size, untree-shaken,
 *   in the one file; NodejsFunction cannot split (it fixes `--outfile`), hence this bundling;
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
    buildSync({
      absWorkingDir: this.projectRoot,
      entryPoints: { index: resolve(this.projectRoot, this.entry) },
      outdir: outputDir,
      outExtension: { '.js': '.mjs' },
      bundle: true,
      splitting: true,
      format: 'esm',
      platform: 'node',
      target: 'node22',
      mainFields: ['module', 'main'],
      banner: { js: ESM_REQUIRE_SHIM },
      minify: true,
      sourcemap: false,
      // Resolved from the working directory, `projectRoot`.
      alias: { '@aws-sdk/credential-provider-node': `./${LAMBDA_CREDENTIALS}` },
      logLevel: 'warning',
      // Native modules (a `.node` binary esbuild cannot bundle) stay imports, resolved beside the bundle at run time.
      external: [...this.external],
    });
    // The console's files, read by the function on its first console request, never at init.
    if (this.withConsole) writeFileSync(join(outputDir, CONSOLE_FILES_NAME), JSON.stringify(buildConsole()));
    // The API reference page (Scalar's bundle, about 4.3 MB): beside the code, read by its first request, never at init.
    if (this.withConsole) writeFileSync(join(outputDir, API_REFERENCE_FILES_NAME), JSON.stringify(buildApiReference()));
    // The flows' definitions, read by the function on its first GET /flows/{name}, never at init.
    if (this.flowDefinitions) writeFileSync(join(outputDir, FLOW_DEFINITIONS_FILE), JSON.stringify(this.flowDefinitions));
    return true;
  }
}
