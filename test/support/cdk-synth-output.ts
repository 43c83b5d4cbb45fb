import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { inject } from 'vitest';
import { FUNCTIONS, type FunctionName } from '../../functions/manifest.js';
import './cdk-synth-global.js';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CDK_CLI = createRequire(import.meta.url).resolve('aws-cdk/bin/cdk');

export type SynthResource = { Type: string; Properties: Record<string, any>; Metadata?: Record<string, string> };

export interface SynthOutput {
  /** The cloud assembly folder: the template, its validation report, an asset folder per bundle. */
  out: string;
  template: { Resources: Record<string, SynthResource> };
  /** The template's Lambda functions, the flows' own included. */
  functions(): SynthResource[];
  /** A function resource's `index.mjs`, its chunks beside it. */
  bundleOf(fn: SynthResource): string;
  /** The `index.mjs` `cdk deploy` would ship for one of functions/manifest.ts's functions. */
  bundleOfFunction(name: FunctionName): string;
  /** That function's resource in the template. */
  functionResource(name: FunctionName): SynthResource;
}

/**
 * `npx cdk synth` the way a fresh clone runs it (cdk.json's app command, real bundling with the
 * local esbuild and no Docker, cdk-nag), run once per test run and shared by every file that
 * needs the deployed bundles: bundling every function takes about 20 s of CPU, which three files
 * used to pay each. The first file to ask runs it into the run's folder (test/support/cdk-synth-global.ts);
 * the others, in whatever worker, wait for its result.
 */
let shared: Promise<SynthOutput> | undefined;
export const cdkSynthOutput = (): Promise<SynthOutput> => (shared ??= synthOnce());

async function synthOnce(): Promise<SynthOutput> {
  const dir = inject('cdkSynthDir');
  const out = join(dir, 'cdk.out');
  const result = join(dir, 'result.json');
  let ours = true;
  try {
    mkdirSync(join(dir, 'lock'));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    ours = false;
  }
  if (ours) {
    try {
      await run(process.execPath, [CDK_CLI, 'synth', '--quiet', '--output', out], {
        cwd: ROOT,
        timeout: 300_000,
        maxBuffer: 16 * 1024 * 1024,
        // No credentials and no Docker: bundling must not need either.
        env: { ...process.env, CDK_DISABLE_CLI_TELEMETRY: 'true', AWS_ACCESS_KEY_ID: '', AWS_SECRET_ACCESS_KEY: '', AWS_PROFILE: '', CDK_DOCKER: 'docker-is-not-available', AWS_EC2_METADATA_DISABLED: 'true' },
      });
      writeFileSync(result, JSON.stringify({ ok: true }));
    } catch (error) {
      const { stderr } = error as { stderr?: string };
      writeFileSync(result, JSON.stringify({ ok: false, error: `cdk synth failed: ${stderr || String(error)}` }));
    }
  } else {
    // Another worker is synthesizing: wait for its result (a condition, however loaded the machine).
    const deadline = Date.now() + 320_000;
    while (!existsSync(result)) {
      if (Date.now() > deadline) throw new Error('the shared cdk synth did not finish in 320 s');
      await new Promise((done) => setTimeout(done, 200));
    }
  }
  const outcome = JSON.parse(readFileSync(result, 'utf8')) as { ok: boolean; error?: string };
  if (!outcome.ok) throw new Error(outcome.error);

  const templates = readdirSync(out).filter((file) => file.endsWith('.template.json'));
  if (templates.length !== 1) throw new Error(`expected one template in ${out}, found ${templates.join(', ')}`);
  const template = JSON.parse(readFileSync(join(out, templates[0]!), 'utf8')) as SynthOutput['template'];
  const functions = () => Object.values(template.Resources).filter((resource) => resource.Type === 'AWS::Lambda::Function');
  const bundleOf = (fn: SynthResource) => join(out, fn.Metadata!['aws:asset:path']!, 'index.mjs');
  const functionResource = (name: FunctionName) => {
    // lib/constructs/service-function.ts describes each function by its name and entry.
    const description = `Flowgate ${name} (${FUNCTIONS[name].entry})`;
    const found = functions().find((fn) => fn.Properties.Description === description);
    if (!found) throw new Error(`no function described "${description}" in the template`);
    return found;
  };
  return { out, template, functions, bundleOf, bundleOfFunction: (name) => bundleOf(functionResource(name)), functionResource };
}
