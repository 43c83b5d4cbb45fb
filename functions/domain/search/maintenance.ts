/**
 * Search indexes' background maintenance: the job a write (or a purge, or a deletion) schedules,
 * as the queue carries it, and what running one does. Jobs are idempotent: one run twice, or for a
 * generation no longer current, does no harm.
 */
import { AppError } from '../../shared/errors.js';
import { isPlainObject } from '../../shared/json.js';
import type { MaintenanceJob, SearchEngine } from './types.js';

/** The queue's message: `{"account", "index", "generation", "kind"}`. */
export const encodeMaintenanceJob = (job: MaintenanceJob): string =>
  JSON.stringify({ account: job.accountId, index: job.name, generation: job.generation, kind: job.kind });

export function decodeMaintenanceJob(body: string): MaintenanceJob {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    throw new AppError('validation_error', 'maintenance job is not JSON');
  }
  if (!isPlainObject(value)) throw new AppError('validation_error', 'maintenance job is not an object');
  const { account, index, generation, kind } = value;
  if (typeof account !== 'string' || account === '' || typeof index !== 'string' || index === ''
    || typeof generation !== 'number' || !Number.isSafeInteger(generation) || generation < 0 || (kind !== 'index' && kind !== 'sweep')) {
    throw new AppError('validation_error', 'maintenance job needs account, index, generation and kind (index or sweep)');
  }
  return { accountId: account, name: index, generation, kind };
}

export type MaintenanceOutcome = { kind: 'index'; indexed: boolean } | { kind: 'sweep'; dropped: number };

/**
 * Runs one job: `index` brings the generation's full-text index up to date if it is still the
 * index's current one (a purged or deleted generation is the sweep's); `sweep` drops the index's
 * generations its catalog record no longer names.
 */
export async function runMaintenance(engine: Pick<SearchEngine, 'getIndex' | 'indexNow' | 'sweep'>, job: MaintenanceJob): Promise<MaintenanceOutcome> {
  if (job.kind === 'sweep') return { kind: 'sweep', dropped: (await engine.sweep(job)).length };
  const record = await engine.getIndex(job);
  if (!record || record.generation !== job.generation) return { kind: 'index', indexed: false };
  await engine.indexNow(record);
  return { kind: 'index', indexed: true };
}
