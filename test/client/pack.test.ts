import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useLocalStack } from '../support/local-stack.js';

/**
 * `npm pack` of client/ installs into an empty folder, and a script there, run with node, works
 * against a local stack: what a user of the published package gets, nothing of the repository.
 */
const stack = useLocalStack();
const CLIENT = resolve(import.meta.dirname, '../../client');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
let app = '';

const SCRIPT = `
import { createClient, FlowgateError } from '@flowgate/client';
import { sign } from '@flowgate/client/webhooks';

const flowgate = createClient({ baseUrl: process.env.FLOWGATE_URL, token: process.env.TOKEN });
const key = 'reports/2026 Q1?draft=1#100%-Zoë';
await flowgate.kv.createBucket('packed');
await flowgate.kv.put('packed', key, 'from the packed client');
const keys = [];
for await (const k of flowgate.kv.keys('packed')) keys.push(k);
await flowgate.objects.createStore('packed-files');
const big = new Uint8Array(6 * 1024 * 1024).fill(7);
const uploaded = await flowgate.objects.upload('packed-files', key, big, { contentType: 'application/octet-stream' });
let missing;
try { await flowgate.kv.get('packed', 'absent'); } catch (error) { missing = error instanceof FlowgateError && error.error; }
const signed = await sign('github', 'a-secret', '{"zen":"hi"}');
console.log(JSON.stringify({
  value: await flowgate.kv.getString('packed', key), keys, size: uploaded.size, missing,
  signature: signed.headers['x-hub-signature-256'],
}));
`;

const TYPED = `
import { createClient, type Trigger } from '@flowgate/client';
import { sign } from '@flowgate/client/webhooks';
const flowgate = createClient({ baseUrl: 'http://localhost', apiKey: 'k' });
export const trigger: Promise<Trigger> = flowgate.triggers.create({ flow: 'echo' });
export const headers: Promise<Record<string, string>> = sign('stripe', 'whsec_x', '{}').then((s) => s.headers);
`;

beforeAll(() => {
  app = mkdtempSync(join(tmpdir(), 'flowgate-client-pack-'));
  // `prepack` builds the package first.
  const packed = JSON.parse(execFileSync(npm, ['pack', '--json', '--pack-destination', app], { cwd: CLIENT, encoding: 'utf8' }));
  const tarball = join(app, packed[0].filename);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'an-app', private: true, type: 'module' }));
  // jose, its one dependency, comes from npm's cache where `npm ci` left it.
  execFileSync(npm, ['install', tarball, '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts'], { cwd: app, encoding: 'utf8' });
}, 300_000);
afterAll(() => {
  if (app) rmSync(app, { recursive: true, force: true });
});

describe('the packed package', () => {
  it('holds the built entries and nothing of the source', () => {
    const files = readdirSync(join(app, 'node_modules/@flowgate/client'), { recursive: true }).map(String);
    expect(files).toEqual(expect.arrayContaining(['package.json', join('dist', 'index.js'), join('dist', 'index.d.ts'), join('dist', 'webhooks.js')]));
    expect(files.filter((f) => f.startsWith('src') || f.endsWith('.ts') && !f.endsWith('.d.ts'))).toEqual([]);
  });

  it('has ESM and declarations for each entry it exports', () => {
    const installed = join(app, 'node_modules/@flowgate/client');
    const manifest = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8'));
    expect(manifest).toMatchObject({ name: '@flowgate/client', version: '1.0.0', type: 'module' });
    for (const conditions of Object.values(manifest.exports) as (string | Record<string, string>)[]) {
      for (const file of typeof conditions === 'string' ? [conditions] : Object.values(conditions)) expect(existsSync(join(installed, file)), file).toBe(true);
    }
  });

  it('its browser entry loads no node: module, in itself or any chunk it imports', () => {
    const installed = join(app, 'node_modules/@flowgate/client');
    const manifest = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8'));
    const seen = new Set<string>();
    const nodeImports: string[] = [];
    const visit = (file: string) => {
      if (seen.has(file)) return;
      seen.add(file);
      for (const [, specifier] of readFileSync(file, 'utf8').matchAll(/(?:\bfrom\s*|\bimport\s*\(?\s*)["']([^"']+)["']/g)) {
        if (specifier!.startsWith('.')) visit(resolve(dirname(file), specifier!));
        else if (specifier!.startsWith('node:') || ['fs', 'crypto', 'buffer', 'path', 'http', 'https', 'stream'].includes(specifier!)) nodeImports.push(`${file}: ${specifier}`);
      }
    };
    visit(join(installed, manifest.exports['.'].default));
    expect(seen.size).toBeGreaterThan(1);
    expect(nodeImports).toEqual([]);
    // The scan finds a node: import where there is one: the Node entry's.
    expect(readFileSync(join(installed, manifest.exports['.'].node), 'utf8')).toMatch(/from\s*["']node:fs\/promises["']/);
  });

  it('a script run with node in an empty folder talks to the local stack', async () => {
    writeFileSync(join(app, 'script.mjs'), SCRIPT);
    const token = await stack.token(`packed-${Date.now()}`);
    // Not spawnSync: the stack answers from this process, which must stay free to.
    const run = await new Promise<{ code: number; stdout: string; stderr: string }>((done) => {
      execFile(process.execPath, ['script.mjs'], { cwd: app, encoding: 'utf8', env: { ...process.env, FLOWGATE_URL: stack.baseUrl, TOKEN: token } }, (error, stdout, stderr) =>
        done({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }));
    });
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({
      value: 'from the packed client',
      keys: ['reports/2026 Q1?draft=1#100%-Zoë'],
      size: 6 * 1024 * 1024,
      missing: 'not_found',
      signature: expect.stringMatching(/^sha256=[0-9a-f]{64}$/),
    });
  });

  it('its declarations type an app that imports it by name', () => {
    writeFileSync(join(app, 'typed.ts'), TYPED);
    const result = spawnSync(process.execPath, [tsc, '--strict', '--noEmit', '--target', 'es2022', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--lib', 'es2023,dom', 'typed.ts'], { cwd: app, encoding: 'utf8' });
    expect(result.status, result.stdout).toBe(0);
  });
});
