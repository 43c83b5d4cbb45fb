import { appendFile, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { LayoutMigration } from '../../local/layout-migrations.js';

/**
 * A layout 1 → 2 migration that exists only in tests, shaped like a real one: it rewrites a file
 * (`dynamodb/table.txt`, rows as text to rows as JSON), appends to another (so running it twice on
 * the same data would show), adds a top-level entry (`search/`, as a new table would) and removes
 * one (`legacy.json`). `midway` runs between its first write and the rest: where a test kills it.
 */
export function testMigration(options: { midway?: () => Promise<void>; fail?: Error } = {}): LayoutMigration & { runs: number } {
  const migration = {
    from: 1,
    description: 'test-only: rows as JSON, a search index',
    runs: 0,
    async migrate(dir: string) {
      migration.runs++;
      const rows = (await readFile(join(dir, 'dynamodb/table.txt'), 'utf8')).trim().split('\n');
      await writeFile(join(dir, 'dynamodb/table.txt'), `${rows.map((row) => JSON.stringify({ row })).join('\n')}\n`);
      await options.midway?.();
      if (options.fail) throw options.fail;
      await appendFile(join(dir, 'objects/notes.txt'), 'migrated to layout 2\n');
      await mkdir(join(dir, 'search'));
      await writeFile(join(dir, 'search/index.txt'), rows.join(' '));
      await rm(join(dir, 'legacy.json'));
    },
  };
  return migration;
}

/** The data a layout 1 directory holds for `testMigration`, beside what `openDataDir` made. */
export async function writeLayoutOneData(dir: string): Promise<void> {
  await writeFile(join(dir, 'dynamodb/table.txt'), 'alpha\nbeta\n');
  await writeFile(join(dir, 'objects/notes.txt'), 'written by layout 1\n');
  await writeFile(join(dir, 'legacy.json'), '{"old": true}\n');
}
