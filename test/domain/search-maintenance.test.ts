/**
 * Search maintenance jobs as the queue carries them, and what running one does, over a fake engine
 * port (the engine itself: test/handlers/search-engine.test.ts; the queue: test/handlers/search-maintenance-queue.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { decodeMaintenanceJob, encodeMaintenanceJob, runMaintenance } from '../../functions/domain/search/maintenance.js';
import type { IndexRecord, IndexRef } from '../../functions/domain/search/types.js';

const record: IndexRecord = {
  accountId: 'acct', name: 'books', generation: 7, createdAt: '', updatedAt: '',
  settings: { idField: 'id', searchable: [{ field: 't', weight: 1 }], filterable: [], sortable: [], stored: null, maxDocuments: 10 },
};

function fakeEngine(current: IndexRecord | undefined) {
  const calls: string[] = [];
  return {
    calls,
    getIndex: async (_ref: IndexRef) => current,
    indexNow: async (r: IndexRecord) => void calls.push(`index g${r.generation}`),
    sweep: async (ref: IndexRef) => (calls.push(`sweep ${ref.name}`), ['ix_old']),
  };
}

describe('maintenance jobs', () => {
  it('encodeMaintenanceJob writes {account, index, generation, kind}, and decodeMaintenanceJob reads it back', () => {
    const job = { accountId: 'acct', name: 'books', generation: 7, kind: 'index' as const };
    expect(JSON.parse(encodeMaintenanceJob(job))).toEqual({ account: 'acct', index: 'books', generation: 7, kind: 'index' });
    expect(decodeMaintenanceJob(encodeMaintenanceJob(job))).toEqual(job);
  });

  it.each([
    ['not JSON', '{'],
    ['an array', '[]'],
    ['no account', '{"index":"b","generation":1,"kind":"index"}'],
    ['a fractional generation', '{"account":"a","index":"b","generation":1.5,"kind":"index"}'],
    ['an unknown kind', '{"account":"a","index":"b","generation":1,"kind":"rebuild"}'],
  ])('decodeMaintenanceJob refuses %s with a validation error', (_what, body) => {
    expect(() => decodeMaintenanceJob(body)).toThrow(expect.objectContaining({ code: 'validation_error' }));
  });

  it('runMaintenance indexes the current generation', async () => {
    const engine = fakeEngine(record);
    expect(await runMaintenance(engine, { accountId: 'acct', name: 'books', generation: 7, kind: 'index' })).toEqual({ kind: 'index', indexed: true });
    expect(engine.calls).toEqual(['index g7']);
  });

  it('runMaintenance leaves a generation purged since (or an index deleted since) to the sweep', async () => {
    for (const current of [{ ...record, generation: 8 }, undefined]) {
      const engine = fakeEngine(current);
      expect(await runMaintenance(engine, { accountId: 'acct', name: 'books', generation: 7, kind: 'index' })).toEqual({ kind: 'index', indexed: false });
      expect(engine.calls).toEqual([]);
    }
  });

  it('runMaintenance sweeps the one index a sweep job names', async () => {
    const engine = fakeEngine(record);
    expect(await runMaintenance(engine, { accountId: 'acct', name: 'books', generation: 8, kind: 'sweep' })).toEqual({ kind: 'sweep', dropped: 1 });
    expect(engine.calls).toEqual(['sweep books']);
  });
});
