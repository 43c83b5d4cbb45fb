import { spawn } from 'node:child_process';
import { appendFile, cp, mkdtemp, readdir, readFile, rm, stat, unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DataDirError, openDataDir, type OpenDataDirOptions } from '../../local/data-dir.js';
import { MIGRATION_DIR, MIGRATIONS } from '../../local/layout-migrations.js';
import { startLocalStack } from '../../local/stack.js';
import { call } from '../support/local-stack.js';
import { testMigration, writeLayoutOneData } from '../support/test-migration.js';

/**
 * The layout migration runner (`local/layout-migrations.ts`) with a test-only migration from
 * layout 1 to 2 injected: it runs once, and a crash at any point leaves a directory that a Flowgate
 * of layout 1 opens as it was (before the commit) or refuses as newer (after it), and that the next
 * start of layout 2 finishes.
 */
const ROOT = resolve(import.meta.dirname, '../..');
let root: string;
let counter = 0;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'flowgate-migrations-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

/** A layout 1 directory, as `openDataDir` makes it, with the data `testMigration` reads. */
async function layoutOne(): Promise<string> {
  const dir = join(root, `dir-${++counter}`);
  await (await openDataDir(dir)).release();
  await writeLayoutOneData(dir);
  return dir;
}

/** Every file and its text, but the lock, the pid file (a killed process leaves it) and the migration's own work folder. */
async function snapshot(dir: string): Promise<Record<string, string>> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  const files = entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name).slice(dir.length + 1)).filter((name) => !/^(lock|migration)\//.test(name) && name !== 'flowgate.pid').sort();
  return Object.fromEntries(await Promise.all(files.map(async (name) => [name, await readFile(join(dir, name), 'utf8')])));
}

const layoutOf = async (dir: string) => (JSON.parse(await readFile(join(dir, 'layout.json'), 'utf8')) as { layout: number }).layout;
const exists = (path: string) => stat(path).then(() => true, () => false);

/** Opens and releases; answers what it opened, or the error it refused with. */
async function opening(dir: string, options: OpenDataDirOptions = {}) {
  try {
    const opened = await openDataDir(dir, options);
    await opened.release();
    return opened;
  } catch (error) {
    return error as Error;
  }
}
const asLayoutTwo = (migration = testMigration(), onMigrationStep?: OpenDataDirOptions['onMigrationStep']) => ({ layoutVersion: 2, migrations: [migration], onMigrationStep });
const newer = (dir: string) => `The data directory ${dir} was written by a newer Flowgate (layout 2; this one reads layout 1); update Flowgate, or choose another directory with FLOWGATE_DATA_DIR`;

/** What `testMigration` makes of a layout 1 directory's files. */
function migratedFrom(before: Record<string, string>): Record<string, string> {
  const { 'legacy.json': _removed, ...kept } = before;
  return {
    ...kept,
    'layout.json': '{\n  "layout": 2\n}\n',
    'dynamodb/table.txt': '{"row":"alpha"}\n{"row":"beta"}\n',
    'objects/notes.txt': `${before['objects/notes.txt']}migrated to layout 2\n`,
    'search/index.txt': 'alpha beta',
  };
}

/** The steps a clean run passes, from a directory of its own. */
let steps: string[];
beforeAll(async () => {
  const dir = await layoutOne();
  steps = [];
  await opening(dir, asLayoutTwo(testMigration(), (step) => void steps.push(step)));
});

/** A crash injected at `step`: the hook throws there, and nothing after it runs. */
const crashAt = (step: string) => (passed: string) => {
  if (passed === step) throw new Error(`crash at ${step}`);
};

describe('layout migrations', () => {
  it('the list is in order, one step a layout (empty while layout 1 is the only one)', () => {
    expect(MIGRATIONS.map((m) => m.from)).toEqual(MIGRATIONS.map((_, i) => i + 1));
  });

  it('a start of a newer Flowgate migrates once: the new layout, the migrated data, its work folder gone; the next start runs nothing', async () => {
    const dir = await layoutOne();
    const before = await snapshot(dir);
    expect(Object.keys(before)).toEqual(['dynamodb/table.txt', 'layout.json', 'legacy.json', 'objects/notes.txt', 'secrets.json']);
    const migration = testMigration();
    expect(await opening(dir, asLayoutTwo(migration))).toMatchObject({ created: false, migrated: { from: 1, to: 2 } });
    expect(migration.runs).toBe(1);
    expect(await layoutOf(dir)).toBe(2);
    const migrated = await snapshot(dir);
    expect(migrated).toEqual(migratedFrom(before));
    expect(migrated['objects/notes.txt']).toBe('written by layout 1\nmigrated to layout 2\n');
    expect(migrated).not.toHaveProperty('legacy.json');
    expect(await exists(join(dir, MIGRATION_DIR))).toBe(false);
    // search-indexes: layout 1's folder of the search indexes (LanceDB), made at every open.
    expect(steps).toEqual(['copied', 'migrated 1', 'synced', 'journal written', 'layout written', 'moved legacy.json', 'moved dynamodb', 'moved objects', 'moved search', 'moved search-indexes', 'moved secrets.json', 'done']);

    const again = await opening(dir, asLayoutTwo(migration));
    expect(again).not.toHaveProperty('migrated');
    expect(migration.runs).toBe(1);
    expect(await snapshot(dir)).toEqual(migrated);
  });

  it('a migrated directory is refused by a Flowgate that reads only layout 1, which leaves it as it was', async () => {
    const dir = await layoutOne();
    await opening(dir, asLayoutTwo());
    const migrated = await snapshot(dir);
    const error = await opening(dir);
    expect(error).toBeInstanceOf(DataDirError);
    expect((error as Error).message).toBe(newer(dir));
    expect(await snapshot(dir)).toEqual(migrated);
  });

  it('a crash at each point before the commit leaves layout 1 and its data as they were: layout 1 opens it, and the next start migrates it once', async () => {
    const beforeCommit = steps.slice(0, steps.indexOf('layout written'));
    expect(beforeCommit).toEqual(['copied', 'migrated 1', 'synced', 'journal written']);
    for (const step of beforeCommit) {
      const dir = await layoutOne();
      const before = await snapshot(dir);
      const stopped = await opening(dir, asLayoutTwo(testMigration(), crashAt(step)));
      expect((stopped as Error).message, step).toBe(`The data directory ${dir} cannot be migrated to layout 2: crash at ${step}; it was left as it was (layout 1), and the next start tries again`);
      expect(await layoutOf(dir), step).toBe(1);
      expect(await snapshot(dir), step).toEqual(before);
      // Layout 1 opens it as it was.
      expect(await opening(dir), step).toMatchObject({ created: false });
      expect(await snapshot(dir), step).toEqual(before);
      // The next start of layout 2 migrates it, on a fresh copy: appended once, not twice.
      const migration = testMigration();
      expect(await opening(dir, asLayoutTwo(migration)), step).toMatchObject({ migrated: { from: 1, to: 2 } });
      expect(migration.runs).toBe(1);
      expect(await snapshot(dir), step).toEqual(migratedFrom(before));
      expect(await exists(join(dir, MIGRATION_DIR))).toBe(false);
    }
  });

  it('what layout 1 writes after a crashed migration is what the next migration starts from, not the copy the crash left', async () => {
    const dir = await layoutOne();
    await opening(dir, asLayoutTwo(testMigration(), crashAt('journal written')));
    expect(await exists(join(dir, MIGRATION_DIR, 'journal.json'))).toBe(true);
    await appendFile(join(dir, 'objects/notes.txt'), 'written by layout 1 after the crash\n');
    expect(await opening(dir, asLayoutTwo())).toMatchObject({ migrated: { from: 1, to: 2 } });
    expect((await snapshot(dir))['objects/notes.txt']).toBe('written by layout 1\nwritten by layout 1 after the crash\nmigrated to layout 2\n');
  });

  it('a crash at each point after the commit leaves layout 2: layout 1 refuses it, and the next start finishes it without migrating again', async () => {
    const afterCommit = steps.slice(steps.indexOf('layout written'));
    for (const step of afterCommit) {
      const dir = await layoutOne();
      const before = await snapshot(dir);
      expect(await opening(dir, asLayoutTwo(testMigration(), crashAt(step))), step).toBeInstanceOf(Error);
      expect(await layoutOf(dir), step).toBe(2);
      const refused = await opening(dir);
      expect((refused as Error).message, step).toBe(newer(dir));
      const migration = testMigration();
      expect(await opening(dir, asLayoutTwo(migration)), step).toMatchObject({ migrated: { from: 1, to: 2 } });
      expect(migration.runs, step).toBe(0);
      expect(await snapshot(dir), step).toEqual(migratedFrom(before));
      expect(await exists(join(dir, MIGRATION_DIR)), step).toBe(false);
    }
  });

  it('a migration that fails is one line saying the directory was left as it was; a missing step is refused the same way', async () => {
    const dir = await layoutOne();
    const before = await snapshot(dir);
    const failed = await opening(dir, asLayoutTwo(testMigration({ fail: new Error('disk on fire\nstack trace') })));
    expect(failed).toBeInstanceOf(DataDirError);
    expect((failed as Error).message).toBe(`The data directory ${dir} cannot be migrated to layout 2: the migration from layout 1 to 2 (test-only: rows as JSON, a search index) failed: disk on fire; it was left as it was (layout 1), and the next start tries again`);
    expect(await snapshot(dir)).toEqual(before);
    const missing = await opening(dir, { layoutVersion: 3, migrations: [testMigration()] });
    expect((missing as Error).message).toBe(`The data directory ${dir} cannot be migrated to layout 3: this Flowgate has no migration from layout 2 to 3; it was left as it was (layout 1), and the next start tries again`);
    expect(await snapshot(dir)).toEqual(before);
  });
});

/** Runs `migrate-in-child.ts` on `dir` until it prints that it reached `point`, then kills it with SIGKILL. */
async function killAt(dir: string, point: string): Promise<void> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/support/migrate-in-child.ts', dir, point], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const exited = new Promise((done) => child.once('exit', done));
  for (const deadline = Date.now() + 60_000; !output.includes(`at ${point}`); await new Promise((r) => setTimeout(r, 20))) {
    if (Date.now() > deadline || child.exitCode !== null) {
      child.kill('SIGKILL');
      throw new Error(`the migration did not reach ${point}:\n${output}`);
    }
  }
  child.kill('SIGKILL');
  await exited;
}

describe('a migration killed with SIGKILL', () => {
  it('midway through its own writes: layout 1 and its data as they were, layout 1 opens it, the next start migrates it', async () => {
    const dir = await layoutOne();
    const before = await snapshot(dir);
    await killAt(dir, 'midway');
    // Its copy was half rewritten; the directory's own data was not.
    expect(await readFile(join(dir, MIGRATION_DIR, 'data/dynamodb/table.txt'), 'utf8')).toContain('{"row"');
    expect(await layoutOf(dir)).toBe(1);
    expect(await snapshot(dir)).toEqual(before);
    expect(await opening(dir)).toMatchObject({ created: false });
    expect(await opening(dir, asLayoutTwo())).toMatchObject({ migrated: { from: 1, to: 2 } });
    expect(await snapshot(dir)).toEqual(migratedFrom(before));
  });

  it('while it moves the migrated data in: layout 2, refused by layout 1, finished by the next start', async () => {
    const dir = await layoutOne();
    const before = await snapshot(dir);
    await killAt(dir, 'moved dynamodb');
    expect(await layoutOf(dir)).toBe(2);
    expect((await opening(dir) as Error).message).toBe(newer(dir));
    const migration = testMigration();
    expect(await opening(dir, asLayoutTwo(migration))).toMatchObject({ migrated: { from: 1, to: 2 } });
    expect(migration.runs).toBe(0);
    expect(await snapshot(dir)).toEqual(migratedFrom(before));
  });
});

describe('the 1.0.0 data directory after a migration that crashed', () => {
  it('still opens with layout 1, its tables as they were, though the migration had wrecked its copy of them', async () => {
    const dir = join(root, 'fixture');
    await cp(resolve(ROOT, 'test/fixtures/data-dirs/1.0.0'), dir, { recursive: true });
    const wrecking = { from: 1, description: 'test-only: removes the tables\' CURRENT file, then fails', async migrate(copy: string) {
      await unlink(join(copy, 'dynamodb/CURRENT'));
      throw new Error('crash');
    } };
    expect(await opening(dir, { layoutVersion: 2, migrations: [wrecking] })).toBeInstanceOf(DataDirError);
    expect(await exists(join(dir, MIGRATION_DIR, 'data/dynamodb'))).toBe(true);
    const stack = await startLocalStack({ port: 0, dataDir: dir });
    try {
      const manifest = JSON.parse(await readFile(resolve(ROOT, 'test/fixtures/data-dirs/1.0.0.manifest.json'), 'utf8')) as { subject: string };
      const res = await call(stack, 'GET', '/storage/kv/kept/keys/greeting', { token: await stack.token(manifest.subject) });
      expect([res.status, res.text]).toEqual([200, 'hello from 1.0.0']);
    } finally {
      await stack.stop();
    }
  });
});
