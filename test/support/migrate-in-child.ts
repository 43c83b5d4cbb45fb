/**
 * `node --import tsx test/support/migrate-in-child.ts <dir> <point>`: opens `dir` with
 * `testMigration` (layout 1 → 2) and, at `point` (`midway` inside the migration, or a step of the
 * runner), prints `at <point>` and waits to be killed.
 */
import { openDataDir } from '../../local/data-dir.js';
import { testMigration } from './test-migration.js';

const [dir, point] = process.argv.slice(2) as [string, string];
const hang = () => {
  console.log(`at ${point}`);
  return new Promise<void>(() => undefined);
};
await openDataDir(dir, {
  layoutVersion: 2,
  migrations: [testMigration({ midway: point === 'midway' ? hang : undefined })],
  onMigrationStep: (step) => (step === point ? hang() : undefined),
});
console.log('migrated');
process.exit(0);
