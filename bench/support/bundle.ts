import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import type { FunctionSpec } from '../../functions/manifest.js';

/**
 * Bundles each function as the CDK stack deploys it and returns the path of each `index.mjs`.
 * Rather than copy the esbuild options of lib/constructs/esm-bundle.ts, this builds the
 * construct itself (see bundle-child.ts): the bundles cannot drift from
 * what `cdk deploy` ships. A child process keeps aws-cdk-lib and CDK's console output out of the bench.
 */
export async function bundleLikeCdk(outdir: string, functions: { name: string; spec: FunctionSpec }[]): Promise<Record<string, string>> {
  const script = resolve(import.meta.dirname, 'bundle-child.ts');
  try {
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', script, JSON.stringify({ outdir, functions })], {
      cwd: resolve(import.meta.dirname, '../..'),
      maxBuffer: 16 * 1024 * 1024,
    });
    return JSON.parse(stdout) as Record<string, string>;
  } catch (error) {
    const { stderr } = error as { stderr?: string };
    throw new Error(`bundling with the CDK construct failed:\n${stderr ?? error}`);
  }
}
