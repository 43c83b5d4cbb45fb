import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { createServer } from 'node:http';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { apiGatewayEvent } from '../../bench/support/api-gateway-events.js';
import { FLOW_DEFINITIONS_FILE } from '../../functions/domain/flows/flow-definitions.js';
import { FUNCTIONS } from '../../functions/manifest.js';
import { listFlowFunctions } from '../../lib/flow-functions.js';
import { listFlowNames } from '../../lib/flow-files.js';
import { invokeBundled } from '../support/bundled-function.js';
import { cdkSynthOutput, type SynthOutput } from '../support/cdk-synth-output.js';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** The ESM `require` shim lib/constructs/esm-bundle.ts puts at the top of every file of a bundle. */
const BANNER = "import { createRequire as __flowgateCreateRequire } from 'node:module';";

/**
 * `npx cdk synth` the way a fresh clone runs it: cdk.json's app command (tsx), real bundling with
 * the local esbuild (no Docker), and cdk-nag, which fails the synth on any unacknowledged finding.
 * The run's one synth, shared with the other files that run the deployed bundles.
 */
describe('cdk synth, offline', () => {
  let out: string;
  let template: SynthOutput['template'];
  let functions: SynthOutput['functions'];
  let bundleOf: SynthOutput['bundleOf'];

  beforeAll(async () => {
    ({ out, template, functions, bundleOf } = await cdkSynthOutput());
  }, 330_000);

  it('bundles every function, the AWS SDK included, into ESM files', () => {
    // The manifest's functions and the flows' own (flows/functions/*.ts).
    expect(functions()).toHaveLength(Object.keys(FUNCTIONS).length + listFlowFunctions(resolve(ROOT, 'flows')).length);
    for (const fn of functions()) {
      expect(fn.Properties.Handler).toBe('index.handler');
      const bundle = bundleOf(fn);
      expect(existsSync(bundle), bundle).toBe(true);
      // index.mjs and its chunks (those it imports, and those loaded on first use).
      const files = readdirSync(dirname(bundle)).filter((file) => file.endsWith('.mjs'));
      for (const file of files) {
        const code = readFileSync(join(dirname(bundle), file), 'utf8');
        expect(code.startsWith(BANNER), file).toBe(true);
        // The SDK is bundled (a pinned, tree-shaken copy), not imported from the runtime. A side-effect
        // import starts a statement: the S3 client's error text quotes `import "@aws-sdk/signature-v4-crt";`.
        expect(code).not.toMatch(/\bfrom\s*["']@aws-sdk\/|\bimport\s*\(\s*["']@aws-sdk\/|(?:^|[;}])\s*import\s*["']@aws-sdk\//m);
      }
    }
  });

  it('every bundle loads in a fresh Node.js process and exports its handler', async () => {
    for (const fn of functions()) {
      // Settings as the template gives them, with placeholders where CloudFormation fills them in: an
      // https origin, which every URL setting accepts (CONSOLE_COGNITO_DOMAIN takes nothing more).
      const settings = Object.fromEntries(Object.entries((fn.Properties.Environment?.Variables ?? {}) as Record<string, unknown>)
        .map(([name, value]) => [name, typeof value === 'string' ? value : `https://${name.toLowerCase().replace(/_/g, '-')}.placeholder.invalid`]));
      const { stdout } = await run(process.execPath, [
        '--input-type=module',
        '-e',
        `const m = await import(${JSON.stringify(pathToFileURL(bundleOf(fn)).href)}); console.log(typeof m.handler);`,
      ], { env: { PATH: process.env.PATH, AWS_REGION: 'us-east-1', AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true', ...settings }, timeout: 20_000 });
      expect(stdout.trim(), fn.Properties.Description).toBe('function');
    }
  }, 60_000);

  it('bundles the flows\' definitions into the triggers function, which answers GET /flows/{name} with what each state machine was made from', async () => {
    const triggers = functions().find((fn) => fn.Properties.Description === `Flowgate triggers (${FUNCTIONS.triggers.entry})`)!;
    // In the bundle, not the environment (4 KB for every variable together).
    expect(existsSync(join(dirname(bundleOf(triggers)), FLOW_DEFINITIONS_FILE))).toBe(true);
    expect(JSON.stringify(triggers.Properties.Environment.Variables)).not.toContain('StartAt');
    // Each flow's own state machine (its batch state machine, `-batch-<name>`, wraps the same states).
    const stateMachines = Object.values(template.Resources).filter((r) => r.Type === 'AWS::StepFunctions::StateMachine' && /-flow-/.test(String(r.Properties.StateMachineName)));
    expect(stateMachines).toHaveLength(listFlowNames(resolve(ROOT, 'flows')).length);

    // The function as deployed: the template's environment, the token issuer's JWKS served here.
    const { publicKey, privateKey } = await generateKeyPair('RS256');
    const jwks = JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid: 'synth', alg: 'RS256', use: 'sig' }] });
    const server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(jwks));
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    try {
      const issuer = 'https://issuer.example';
      const env: Record<string, string> = { AWS_REGION: 'us-east-1', AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' };
      for (const [name, value] of Object.entries(triggers.Properties.Environment.Variables as Record<string, unknown>)) {
        env[name] = typeof value === 'string' ? value : `https://${name.toLowerCase().replace(/_/g, '-')}.placeholder.invalid`;
      }
      Object.assign(env, { AUTH_JWKS_URL: `http://127.0.0.1:${(server.address() as { port: number }).port}/jwks`, AUTH_ISSUER: issuer, AUTH_AUDIENCE: 'console' });
      const token = await new SignJWT({}).setProtectedHeader({ alg: 'RS256', kid: 'synth' }).setIssuer(issuer).setAudience('console').setSubject('synth-user').setExpirationTime('5m').sign(privateKey);
      const get = (name: string) => invokeBundled(bundleOf(triggers), apiGatewayEvent({
        method: 'GET', routeKey: 'GET /flows/{name}', rawPath: `/flows/${name}`, pathParameters: { name }, headers: { authorization: `Bearer ${token}` },
      }), env);

      for (const stateMachine of stateMachines) {
        const name = String(stateMachine.Properties.StateMachineName).replace(/^.*-flow-/, '');
        const { result, logs } = await get(name);
        expect(result.statusCode, logs).toBe(200);
        // The text the state machine was created from, before CloudFormation fills in `${Function.<name>}`,
        // and how long a wait-mode delivery waits for it (test/domain/wait-budget.test.ts has the figures).
        expect(JSON.parse(result.body), name).toEqual({ data: { name, definition: JSON.parse(stateMachine.Properties.DefinitionString), wait_limit_seconds: expect.any(Number) } });
      }
      const missing = await get('no-such-flow');
      expect([missing.result.statusCode, JSON.parse(missing.result.body)]).toEqual([404, { error: 'not_found', message: expect.any(String) }]);
    } finally {
      server.close();
    }
  }, 60_000);

  // The template tests synthesize without CDK's built-in CloudFormation validation
  // (test/support/synth.ts), which only warns; this synth runs it, and cdk-nag, once.
  it('records no finding of cdk-nag or of the CloudFormation validation in the validation report', () => {
    const reportFile = resolve(out, 'validation-report.json');
    if (!existsSync(reportFile)) return;
    const report = JSON.parse(readFileSync(reportFile, 'utf8')) as { pluginReports: { pluginName?: string; summary?: { status?: string }; violations?: unknown[] }[] };
    for (const plugin of report.pluginReports) {
      expect(plugin.summary?.status, plugin.pluginName).not.toBe('failure');
      expect(plugin.violations ?? [], plugin.pluginName).toEqual([]);
    }
  });
});
