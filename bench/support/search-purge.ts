import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { LanceSearchEngine } from '../../functions/adapters/lance/lance-search-engine.js';
import type { IndexRecord } from '../../functions/domain/search/types.js';
import { median } from './timing.js';

/**
 * The search indexes' part of `npm run bench purge`: the purge's latency must not grow with the
 * index. One index of 100,000 documents and one of 10 are filled once (LanceDB in a temporary
 * directory, as the local stack keeps it); before each timed purge the catalog is pointed back at
 * the filled generation, which a purge leaves whole for the sweep, so every purge meets a full
 * index without filling it again (100,000 documents take about 16 s to write here). Each round
 * purges the 10-document index, the large one, then the small one again; the small purges are the
 * baseline. Timed is the engine's `purgeIndex`: what the search function adds (a catalog read and
 * a queue send for the sweep job) does not depend on the index's size either. The e2e test
 * (`test/e2e/search-scale.test.ts`) shows why on the tables: the old generation is left with every
 * document.
 */
const SIZES = [10, 100_000] as const;
const ROUNDS = 5;
const WARMUP_PURGES = 10;
const TARGET_RATIO = 2;
const BATCH = 1000;

export interface SearchPurgeRow {
  documents: number;
  purge_ms: number;
  samples_ms: number[];
  ratio: number;
}

export interface SearchPurgeResult {
  rows: SearchPurgeRow[];
  baseline_documents: number;
  target_ratio: number;
  target_met: boolean;
  fill_docs_per_second: number;
}

const recordOf = (name: string): IndexRecord => ({
  accountId: 'bench', name, generation: 1, createdAt: '', updatedAt: '',
  settings: { idField: 'id', searchable: [{ field: 't', weight: 1 }], filterable: [{ field: 'n', type: 'number' }], sortable: [], stored: null, maxDocuments: 1_000_000 },
});

export async function searchIndexPurges(): Promise<SearchPurgeResult> {
  const dir = await mkdtemp(join(tmpdir(), 'flowgate-purge-bench-search-'));
  try {
    const engine = new LanceSearchEngine({ uri: dir });
    const filled = new Map<number, IndexRecord>();
    let fillMs = 0;
    for (const size of SIZES) {
      const record = recordOf(`size-${size}`);
      await engine.saveIndex(record, { isNew: true });
      const started = performance.now();
      for (let from = 0; from < size; from += BATCH) {
        const docs = Array.from({ length: Math.min(BATCH, size - from) }, (_, i) => ({ id: String(from + i), doc: { id: String(from + i), t: `document ${(from + i) % 97}`, n: from + i } }));
        await engine.upsert(record, docs);
      }
      await engine.indexNow(record);
      fillMs += performance.now() - started;
      if ((await engine.stats(record)).documents !== size) throw new Error(`fill of the ${size}-document index incomplete`);
      filled.set(size, record);
    }
    /** Points the index back at its filled generation, then purges it; the purge's milliseconds. */
    const purge = async (size: number) => {
      const record = filled.get(size)!;
      await engine.saveIndex(record, { isNew: false });
      const started = performance.now();
      const next = await engine.purgeIndex(record, new Date().toISOString());
      const ms = performance.now() - started;
      if ((await engine.stats(next)).documents !== 0 || (await engine.stats(record)).documents !== size) throw new Error('a purge touched the old generation or kept documents');
      return ms;
    };
    for (let i = 0; i < WARMUP_PURGES; i++) await purge(SIZES[0]);
    const samples = new Map<number, number[]>(SIZES.map((size) => [size, []]));
    for (let round = 0; round < ROUNDS; round++) {
      for (const size of [SIZES[0], SIZES[1], SIZES[0]]) samples.get(size)!.push(await purge(size));
    }
    const baseline = median(samples.get(SIZES[0])!);
    const rows = SIZES.map((size) => ({ documents: size, purge_ms: median(samples.get(size)!), samples_ms: samples.get(size)!, ratio: median(samples.get(size)!) / baseline }));
    const largest = rows[rows.length - 1]!;
    const total = SIZES.reduce((sum, size) => sum + size, 0);
    return { rows, baseline_documents: SIZES[0], target_ratio: TARGET_RATIO, target_met: largest.ratio <= TARGET_RATIO, fill_docs_per_second: total / (fillMs / 1000) };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
