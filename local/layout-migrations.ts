import { cp, mkdir, open, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * One step of a data directory's layout, from `from` to `from + 1` (`data-dir.ts`, `LAYOUT_VERSION`):
 * a table re-keyed, an index added (dynalite cannot add one to a table: the migration writes a new
 * table), files moved. What a later Flowgate needs to read what an earlier one wrote.
 */
export interface LayoutMigration {
  /** The layout it reads; it leaves the directory at `from + 1`. */
  from: number;
  /** One line: what it changes, for messages. */
  description: string;
  /**
   * Rewrites `dir`, a complete copy of the data directory's data (tables, objects, secrets; never
   * the lock, the pid file or `layout.json`) made for this run, with nothing else using it. It may
   * change, add or remove anything in it. It need not be idempotent: a run that did not finish is
   * thrown away with its copy, and the next start runs every step again on a fresh copy.
   */
  migrate(dir: string): Promise<void>;
}

/** Every layout change, in order. Empty: layout 1 is the first. */
export const MIGRATIONS: readonly LayoutMigration[] = [];

/** Where a migration works, inside the data directory (same file system, so its results move in by rename). */
export const MIGRATION_DIR = 'migration';
/** The migrated copy. */
const STAGED = 'data';
/** The entries a committed migration moved out of the way, removed once every one is in place. */
const REPLACED = 'replaced';
/**
 * Written once the copy is migrated and on disk, before `layout.json` changes: what replaces what.
 * It only counts when `layout.json` says its `to` (the commit); without that it is a run that did not finish.
 */
const JOURNAL = 'journal.json';

interface Journal {
  from: number;
  to: number;
  /** Top-level entries of the migrated copy, each to be put in place of the directory's own. */
  entries: string[];
  /** Top-level entries the migrated copy no longer has, each to be moved away. */
  removed: string[];
}

/**
 * A point in a migration where a test may stop it as a crash would (throwing from `onStep` stops it
 * there and cleans nothing up): `copied`, `migrated <n>` after each step, `synced`, `journal written`,
 * `layout written` (the commit), `moved <entry>` for each entry put in place or moved away, `done`.
 */
export type MigrationStepHook = (step: string) => void | Promise<void>;

export interface MigrationOptions {
  /** The directory's layout now (from `layout.json`). */
  layout: number;
  /** The layout to reach: this code's. */
  target: number;
  migrations: readonly LayoutMigration[];
  /** Writes `layout.json` whole or not at all, made durable. */
  writeLayout(layout: number): Promise<void>;
  onStep?: MigrationStepHook;
}

/** A migration that stopped before its commit: the directory's own files are as they were. */
export class MigrationError extends Error {}

const exists = (path: string) => stat(path).then(() => true, () => false);

/** The data a migration copies: everything but what belongs to the running process and the layout file. */
export const isData = (name: string, excluded: ReadonlySet<string>) => !excluded.has(name) && name !== MIGRATION_DIR && !name.endsWith('.tmp');

/** fsyncs a file, or a directory's entries, so that a rename or write before it survives a power loss. */
async function sync(path: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

async function syncTree(path: string): Promise<void> {
  for (const entry of await readdir(path, { recursive: true, withFileTypes: true })) await sync(join(entry.parentPath, entry.name));
  await sync(path);
}

/**
 * What an earlier start left of a migration, dealt with before anything else reads the directory:
 * a committed one (its journal's `to` is the layout now) is finished, one that was not is thrown
 * away, its copy with it (the directory's own data was never touched). Returns the layouts of a
 * committed one it finished.
 */
export async function finishInterrupted(dir: string, layout: number, onStep?: MigrationStepHook): Promise<{ from: number; to: number } | undefined> {
  const work = join(dir, MIGRATION_DIR);
  if (!(await exists(work))) return undefined;
  const journal = await readFile(join(work, JOURNAL), 'utf8').then((text) => JSON.parse(text) as Journal, () => undefined);
  if (journal?.to !== layout) {
    await rm(work, { recursive: true, force: true });
    return undefined;
  }
  await putInPlace(dir, journal, onStep);
  return { from: journal.from, to: journal.to };
}

/**
 * After the commit: moves the migrated entries in and the replaced ones out. Each move is one
 * rename and each is checked before it is made, so a crash between any two leaves a state this
 * function, run again, carries on from; then the work folder goes.
 */
async function putInPlace(dir: string, journal: Journal, onStep?: MigrationStepHook): Promise<void> {
  const work = join(dir, MIGRATION_DIR);
  const replaced = join(work, REPLACED);
  await mkdir(replaced, { recursive: true });
  for (const name of journal.removed) {
    if (await exists(join(dir, name))) {
      await rm(join(replaced, name), { recursive: true, force: true });
      await rename(join(dir, name), join(replaced, name));
    }
    await onStep?.(`moved ${name}`);
  }
  for (const name of journal.entries) {
    const staged = join(work, STAGED, name);
    // Gone from the copy: already in place.
    if (await exists(staged)) {
      if (await exists(join(dir, name))) {
        await rm(join(replaced, name), { recursive: true, force: true });
        await rename(join(dir, name), join(replaced, name));
      }
      await rename(staged, join(dir, name));
    }
    await onStep?.(`moved ${name}`);
  }
  await sync(dir);
  await onStep?.('done');
  await rm(work, { recursive: true, force: true });
}

/**
 * Brings a data directory (locked by this process, nothing else running on it) from `layout` to
 * `target`: copies its data into `migration/data`, runs each step there in order, makes the copy
 * durable, writes the journal, and then commits by writing `layout.json`. Until that write the
 * directory's own files are untouched, so a crash, a failing step or a full disk leaves a directory
 * any Flowgate of the old layout opens as it was (it ignores `migration/`), and the next start
 * throws the copy away and runs again. After it, the directory is of the new layout, which older
 * Flowgates refuse, and the next start finishes moving the copy's entries in (`finishInterrupted`).
 */
export async function migrate(dir: string, excluded: ReadonlySet<string>, options: MigrationOptions): Promise<void> {
  const journal = await stage(dir, excluded, options).catch((error: unknown) => {
    // A full disk while copying, say: nothing of the directory's own was touched either.
    throw error instanceof MigrationError ? error : new MigrationError((error as Error).message.split('\n')[0]);
  });
  await options.writeLayout(options.target);
  await options.onStep?.('layout written');
  await putInPlace(dir, journal, options.onStep);
}

/** Everything before the commit: the copy, migrated, durable, and the journal that names its entries. */
async function stage(dir: string, excluded: ReadonlySet<string>, options: MigrationOptions): Promise<Journal> {
  const { layout, target, migrations, onStep } = options;
  const steps: LayoutMigration[] = [];
  for (let from = layout; from < target; from++) {
    const step = migrations.find((m) => m.from === from);
    if (!step) throw new MigrationError(`this Flowgate has no migration from layout ${from} to ${from + 1}`);
    steps.push(step);
  }
  const work = join(dir, MIGRATION_DIR);
  const staged = join(work, STAGED);
  await rm(work, { recursive: true, force: true });
  await mkdir(staged, { recursive: true, mode: 0o700 });
  const before = (await readdir(dir)).filter((name) => isData(name, excluded));
  for (const name of before) await cp(join(dir, name), join(staged, name), { recursive: true, preserveTimestamps: true });
  await onStep?.('copied');
  for (const step of steps) {
    try {
      await step.migrate(staged);
    } catch (error) {
      throw new MigrationError(`the migration from layout ${step.from} to ${step.from + 1} (${step.description}) failed: ${(error as Error).message.split('\n')[0]}`);
    }
    await onStep?.(`migrated ${step.from}`);
  }
  await syncTree(work);
  await onStep?.('synced');
  const entries = (await readdir(staged)).filter((name) => isData(name, excluded)).sort();
  const journal: Journal = { from: layout, to: target, entries, removed: before.filter((name) => !entries.includes(name)).sort() };
  const journalHandle = await open(join(work, JOURNAL), 'w', 0o600);
  try {
    await journalHandle.writeFile(`${JSON.stringify(journal, null, 2)}\n`);
    await journalHandle.sync();
  } finally {
    await journalHandle.close();
  }
  await sync(work);
  await onStep?.('journal written');
  return journal;
}
