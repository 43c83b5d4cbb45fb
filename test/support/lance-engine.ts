import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { LanceSearchEngine } from '../../functions/adapters/lance/lance-search-engine.js';
import type { IndexRecord, SearchPlan } from '../../functions/domain/search/types.js';

/**
 * The LanceDB adapter over a temporary directory of the test file's own (removed after it), with
 * one-field indexes made on demand: what the adapter tests need to show an engine behaviour and
 * the adapter's handling of it side by side.
 */
export function useLanceEngine(name: string) {
  const dir = mkdtempSync(join(tmpdir(), `flowgate-${name}-`));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const engine = new LanceSearchEngine({ uri: dir });
  let n = 0;
  /** A new index searching the one field `text`, holding `docs`. */
  async function index(docs: { id: string; text: string }[]): Promise<IndexRecord> {
    const record: IndexRecord = {
      accountId: `${name}-test`, name: `i${++n}`, generation: 1, createdAt: '', updatedAt: '',
      settings: { idField: 'id', searchable: [{ field: 'text', weight: 1 }], filterable: [], sortable: [], stored: null, maxDocuments: 1_000_000 },
    };
    await engine.saveIndex(record, { isNew: true });
    if (docs.length > 0) await engine.upsert(record, docs.map((doc) => ({ id: doc.id, doc })));
    return record;
  }
  const plan = (words: string[], extra: Partial<SearchPlan> = {}): SearchPlan => ({ words, match: 'all', prefix: false, typos: false, candidates: 1000, ...extra });
  const ids = async (record: IndexRecord, p: SearchPlan) => (await engine.search(record, p)).candidates.map((c) => c.id).sort();
  return { dir, engine, index, plan, ids };
}
