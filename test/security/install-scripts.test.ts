/**
 * `npm ci` runs a dependency's install script only when `allowScripts` in package.json names it
 * (npm 11.16+ warns about any other, npm 12 skips it): the list is reviewed, so it must name every
 * dependency the lockfile says has one, and nothing else (an entry left over would approve a
 * package that is no longer reviewed).
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const manifest = JSON.parse(readFileSync(resolve(ROOT, 'package.json'), 'utf8')) as { allowScripts?: Record<string, boolean> };
const lock = JSON.parse(readFileSync(resolve(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, { hasInstallScript?: boolean }> };

/** `node_modules/a/node_modules/@b/c` is `@b/c`. */
const nameOf = (path: string) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length);

describe('install scripts', () => {
  it('allowScripts names exactly the dependencies whose install scripts the lockfile records', () => {
    // The root's own postinstall (patch-package) is the project's, not a dependency's.
    const withScripts = Object.entries(lock.packages).filter(([path, entry]) => path !== '' && entry.hasInstallScript).map(([path]) => nameOf(path));
    const allowed = Object.keys(manifest.allowScripts ?? {}).map((entry) => entry.replace(/(?<=.)@[^@]+$/, ''));
    expect([...new Set(allowed)].sort()).toEqual([...new Set(withScripts)].sort());
    expect(Object.values(manifest.allowScripts ?? {}).every((allowedToRun) => allowedToRun === true)).toBe(true);
  });
});
