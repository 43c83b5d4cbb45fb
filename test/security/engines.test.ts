/**
 * `npm ci` warns (EBADENGINE) about a dependency whose `engines.node` does not accept the Node
 * running it. The project states in `package.json` the Node lines it supports; every installed
 * package must accept all of them, or be named below with why it is installed anyway (and the
 * docs say so: docs/api-reference.md, "Node versions"). A name left here after the package
 * accepts the range, or after it is gone, fails too, so the list cannot go stale.
 */
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import semver from 'semver';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const manifest = JSON.parse(readFileSync(resolve(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } };
const lock = JSON.parse(readFileSync(resolve(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, unknown> };

/**
 * Installed although its `engines.node` leaves out a line the project supports.
 * - aws-local-stepfunctions: the local stack's Step Functions engine (a devDependency, never
 *   deployed). 3.0.0 is the only version published and states `>=22.0.0`; it runs on Node 20, as
 *   the flow tests (test/e2e/flows*.test.ts, test/domain/flow-batch.test.ts) show on every run.
 */
const KNOWN_EXCEPTIONS: Record<string, string> = {
  'node_modules/aws-local-stepfunctions': '>=22.0.0',
};
/**
 * Scalar's packages (`@scalar/api-reference` and what it depends on) state `>=22`: only its prebuilt
 * browser bundle is used (console/api-reference.ts vendors it into the API reference page), so no
 * Scalar code runs on Node here. npm ci on Node 20 warns about each (docs/api-reference.md says so).
 */
const BROWSER_ONLY = 'node_modules/@scalar/';

/** Every package on disk (the lockfile also lists optional ones for other platforms), with its `engines.node`. */
function installedEngines(): [string, string][] {
  const found: [string, string][] = [];
  for (const path of Object.keys(lock.packages)) {
    if (path === '' || !existsSync(resolve(ROOT, path, 'package.json'))) continue;
    const { engines } = JSON.parse(readFileSync(resolve(ROOT, path, 'package.json'), 'utf8')) as { engines?: unknown };
    const node = engines && typeof engines === 'object' && !Array.isArray(engines) ? (engines as { node?: unknown }).node : undefined;
    if (typeof node === 'string') found.push([path, node]);
  }
  return found;
}

describe('engines', () => {
  const range = manifest.engines.node;

  it('package.json states a valid Node range that includes the Node running the tests', () => {
    expect(semver.validRange(range)).not.toBeNull();
    expect(semver.satisfies(process.versions.node, range)).toBe(true);
  });

  it("every installed package's engines.node accepts the whole of the project's range, but the known exceptions", () => {
    const engines = installedEngines();
    expect(engines.length).toBeGreaterThan(100);
    const refusing = engines.filter(([, node]) => !semver.validRange(node) || !semver.subset(range, node));
    expect(Object.fromEntries(refusing.filter(([path]) => !path.startsWith(BROWSER_ONLY)))).toEqual(KNOWN_EXCEPTIONS);
    expect(refusing.some(([path]) => path === `${BROWSER_ONLY}api-reference`)).toBe(true);
  });
});
