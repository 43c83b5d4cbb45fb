/**
 * Bundles handlers exactly as `cdk synth` does, by building the stack's own `ServiceFunction`
 * construct in a throwaway CDK app: its code asset runs the local esbuild with the options of
 * lib/constructs/esm-bundle.ts (ESM split into chunks, node22, minified, the require banner,
 * module-first main fields, nothing external, the environment-only credential provider) as the
 * construct is created. Input: JSON `{ outdir, functions: [{ name, spec }] }` as argv[2].
 * Output on stdout: JSON `{ [name]: <path of index.mjs> }`, whose chunks lie beside it. CDK's own
 * progress goes to stderr.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import type { Asset } from 'aws-cdk-lib/aws-s3-assets';
import type { FunctionSpec } from '../../functions/manifest.js';
import { ServiceFunction } from '../../lib/constructs/service-function.js';
import { flowFile, listFlowNames } from '../../lib/flow-files.js';

const { outdir, functions } = JSON.parse(process.argv[2]!) as { outdir: string; functions: { name: string; spec: FunctionSpec }[] };
const app = new App({ outdir });
const stack = new Stack(app, 'Bench');
const projectRoot = resolve(import.meta.dirname, '../..');
const bundles: Record<string, string> = {};
// The repository's flows, as the stack hands them to a function that serves them (GET /flows/{name}).
const flowsDir = resolve(projectRoot, 'flows');
const flowDefinitions = Object.fromEntries(listFlowNames(flowsDir).map((flow) => [flow, JSON.parse(readFileSync(flowFile(flowsDir, flow), 'utf8')) as unknown]));
for (const { name, spec } of functions) {
  const fn = new ServiceFunction(stack, name, { name, spec, projectRoot, ...(spec.readsFlowNames && { flowDefinitions }) });
  const asset = fn.function.node.findChild('Code') as Asset;
  bundles[name] = join(outdir, asset.assetPath, 'index.mjs');
}
process.stdout.write(JSON.stringify(bundles));
