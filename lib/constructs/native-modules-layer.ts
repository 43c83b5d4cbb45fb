import { createHash } from 'node:crypto';
import { cpSync, existsSync, lstatSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { AssetHashType, DockerImage, type ILocalBundling } from 'aws-cdk-lib';
import { Code } from 'aws-cdk-lib/aws-lambda';

/**
 * A function's native modules (`nativeModules` in functions/manifest.ts: packages esbuild leaves
 * out of the bundle) as a Lambda layer, staged from this project's node_modules at synth: each
 * package, its platform binary package (an installed optional dependency) and the closure of
 * their runtime dependencies, at the same relative paths under `nodejs/node_modules`, which
 * Lambda mounts at `/opt/nodejs/node_modules` and resolves imports from (CommonJS and ESM alike).
 *
 * No Docker, no network: it copies what `npm ci` installed. So the binary shipped is the one the
 * lock installed for this machine (see the search function's `architecture`). Deterministic: the
 * asset hash is the closure's paths, versions and lock integrities, computed without reading the
 * files, so a synth stages the files once per closure and later synths reuse `cdk.out`'s copy.
 */

/** Staging itself; a change of how the layer is laid out must change every asset hash. */
const LAYOUT_VERSION = 1;

export interface StagedPackage {
  /** The package's directory relative to the project root (`node_modules/…`, nested ones too). */
  path: string;
  name: string;
  version: string;
}

interface PackageJson {
  name: string;
  version: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
}

const readPackage = (dir: string) => JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as PackageJson;

/** Node's lookup of `name` from a package in `fromDir`: its own node_modules, then each parent's. A link (the lock's stand-ins for unused optional packages) is not a package to ship. */
function resolvePackage(projectRoot: string, fromDir: string, name: string): string | undefined {
  for (let dir = fromDir; ; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', name);
    if (existsSync(join(candidate, 'package.json')) && !lstatSync(candidate).isSymbolicLink()) return candidate;
    if (dir === projectRoot || dirname(dir) === dir) return undefined;
  }
}

/**
 * The packages to ship for `roots`: each root (which must be installed), then every dependency,
 * installed optional dependency (the platform binary) and installed peer, transitively. Type
 * packages (`@types/…`, declared as dependencies by apache-arrow) hold nothing that runs.
 */
export function nativeModuleClosure(projectRoot: string, roots: readonly string[]): StagedPackage[] {
  const found = new Map<string, StagedPackage>();
  const visit = (dir: string) => {
    const path = relative(projectRoot, dir).split(sep).join('/');
    if (found.has(path)) return;
    const pkg = readPackage(dir);
    found.set(path, { path, name: pkg.name, version: pkg.version });
    for (const name of Object.keys(pkg.dependencies ?? {})) {
      if (name.startsWith('@types/')) continue;
      const resolved = resolvePackage(projectRoot, dir, name);
      if (!resolved) throw new Error(`${pkg.name} depends on ${name}, which is not installed: run npm ci`);
      visit(resolved);
    }
    for (const name of [...Object.keys(pkg.optionalDependencies ?? {}), ...Object.keys(pkg.peerDependencies ?? {})]) {
      const resolved = resolvePackage(projectRoot, dir, name);
      if (resolved) visit(resolved);
    }
  };
  for (const root of roots) {
    const dir = resolvePackage(projectRoot, projectRoot, root);
    if (!dir) throw new Error(`native module ${root} is not installed: run npm ci`);
    visit(dir);
  }
  return [...found.values()].sort((a, b) => a.path.localeCompare(b.path));
}

/** Copies the closure into `outDir/nodejs/node_modules/…` (each package without its own nested node_modules, which are packages of the closure in their turn, and without links). */
export function stageNativeModules(projectRoot: string, roots: readonly string[], outDir: string): StagedPackage[] {
  const packages = nativeModuleClosure(projectRoot, roots);
  for (const { path } of packages) {
    const source = join(projectRoot, path);
    const target = join(outDir, 'nodejs', path);
    mkdirSync(dirname(target), { recursive: true });
    cpSync(source, target, {
      recursive: true,
      filter: (file) => file === source || (file !== join(source, 'node_modules') && !lstatSync(file).isSymbolicLink()),
    });
  }
  return packages;
}

/** The layer's asset hash: the closure's paths, versions and the lock's integrity of each. */
export function nativeModulesHash(projectRoot: string, roots: readonly string[]): string {
  const lock = JSON.parse(readFileSync(join(projectRoot, 'package-lock.json'), 'utf8')) as { packages: Record<string, { integrity?: string }> };
  const lines = nativeModuleClosure(projectRoot, roots).map((p) => `${p.path}@${p.version}#${lock.packages[p.path]?.integrity ?? ''}`);
  return createHash('sha256').update([`layout ${LAYOUT_VERSION}`, ...lines].join('\n')).digest('hex');
}

/** The layer's code: staged by the local bundling (skipped, like every bundle, when a test synthesizes without bundling). */
export function nativeModulesLayerCode(projectRoot: string, roots: readonly string[]): Code {
  return Code.fromAsset(projectRoot, {
    assetHashType: AssetHashType.CUSTOM,
    assetHash: nativeModulesHash(projectRoot, roots),
    bundling: {
      // Required by the type, never pulled: local staging either succeeds or throws.
      image: DockerImage.fromRegistry('public.ecr.aws/docker/library/node:22'),
      local: new NativeModulesStaging(projectRoot, roots),
    },
  });
}

class NativeModulesStaging implements ILocalBundling {
  // Private fields: the CDK serialises the bundling options into the asset hash, and a checkout's absolute path must not change it.
  readonly #projectRoot: string;
  constructor(projectRoot: string, readonly roots: readonly string[]) {
    this.#projectRoot = projectRoot;
  }

  tryBundle(outputDir: string): boolean {
    stageNativeModules(this.#projectRoot, this.roots, outputDir);
    return true;
  }
}
