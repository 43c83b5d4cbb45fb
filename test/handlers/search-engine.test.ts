/**
 * The LanceDB adapter against the engine itself (embedded, in a temporary directory): each defect
 * of the engine the adapter works around, shown on the raw engine and handled by the adapter, so
 * the day the engine fixes one, this file says which work-around can go.
 */
import { describe, expect, it } from 'vitest';
import { useLanceEngine } from '../support/lance-engine.js';
import { LANCE_CPU_THREADS, loadLance } from '../../functions/adapters/lance/engine-environment.js';
import { isRetryableConflict, LanceSearchEngine } from '../../functions/adapters/lance/lance-search-engine.js';
import type { FullTextQuery } from '@lancedb/lancedb';
import type { IndexRecord } from '../../functions/domain/search/types.js';

const { dir, engine, index, plan, ids } = useLanceEngine('search-engine');
/** The generation's table, opened on the engine directly (seeing each later commit, as the adapter does). */
async function rawTable(record: IndexRecord) {
  const lance = await loadLance();
  const db = await lance.connect(dir, { readConsistencyInterval: 0 });
  const name = (await db.tableNames()).find((t) => t.includes(`_${record.name}_g`))!;
  return { lance, table: await db.openTable(name) };
}

describe('LanceDB search engine: the engine\'s defects, handled in the adapter', () => {
  it('lancedb#3568: a full-text index builds on this 2-CPU machine because LANCE_CPU_THREADS is set before the engine loads', async () => {
    await loadLance();
    expect(process.env.LANCE_CPU_THREADS).toBe(String(LANCE_CPU_THREADS));
    const record = await index(Array.from({ length: 2000 }, (_, i) => ({ id: `d${i}`, text: `document ${i} about topic ${i % 13}` })));
    // Without the variable this build never returns on ≤ 2 CPUs (the issue); with it, it takes well under a second.
    await engine.indexNow(record);
    expect((await engine.stats(record)).pendingDocuments).toBe(0);
    expect(await ids(record, plan(['topic', '7']))).toHaveLength(154);
  }, 60_000);

  it('all terms: the engine drops a word it has never seen from an AND query; the adapter checks every hit holds every word', async () => {
    const record = await index([{ id: 'a', text: 'red apple' }, { id: 'b', text: 'green apple' }]);
    await engine.indexNow(record);
    const { lance, table } = await rawTable(record);
    const raw = await table.query().fullTextSearch(new lance.MatchQuery('apple zzzunseen', 's0', { operator: lance.Operator.And })).select(['id', '_score']).toArray();
    expect(raw.map((row) => row.id).sort()).toEqual(['a', 'b']);
    expect(await ids(record, plan(['apple', 'zzzunseen']))).toEqual([]);
    expect(await ids(record, plan(['apple', 'red']))).toEqual(['a']);
  });

  it('all terms after 1,000 updates: every hit holds every word', async () => {
    const words = ['red', 'green', 'blue', 'cyan', 'magenta', 'yellow'];
    const text = (i: number, round: number) => `${words[(i + round) % 6]} ${words[(i * 5 + round * 2) % 6]}`;
    const record = await index(Array.from({ length: 300 }, (_, i) => ({ id: `d${i}`, text: text(i, 0) })));
    await engine.indexNow(record);
    for (let round = 1; round <= 100; round++) {
      await engine.upsert(record, Array.from({ length: 10 }, (_, k) => {
        const i = (round * 31 + k * 29) % 300;
        return { id: `d${i}`, doc: { id: `d${i}`, text: text(i, round) } };
      }));
      if (round % 25 === 0) await engine.indexNow(record);
    }
    for (const pair of [['red', 'blue'], ['green', 'cyan'], ['magenta', 'yellow']]) {
      const hits = (await engine.search(record, plan(pair))).candidates;
      for (const hit of hits) for (const word of pair) expect(String(hit.doc.text).split(' ')).toContain(word);
    }
  }, 120_000);

  // The engine's all-terms defect after writes, in LanceDB 0.31.0 (lance 8.0.0): a MatchQuery with
  // `operator: AND` holds rows without one of the words.
  // - Rows not yet in the full-text index (appends, and updates: a delete and an insert) are searched
  //   flat, and the flat search is given the query's text without its operator (lance's
  //   FlatMatchQueryExec, rust/lance/src/io/exec/fts.rs; the flat search came with
  //   lance-format/lance#3036 for lance-format/lance#3014): there any one word finds a row. No
  //   upstream issue names this yet (searched 2026-11-28).
  // - Once maintenance has indexed them (a new partition of the index), a partition that lacks one
  //   of the words answers with the others: lance-format/lance#7385, fixed upstream after lance 8.0.0.
  // The adapter never sends that query: it asks one MUST clause per word, which holds in both cases
  // (shown here, so an upgrade that breaks it fails this test), and checks every hit besides.
  it('all terms after writes: the engine\'s AND operator holds rows without a word, before maintenance (flat search, lance-format/lance#3014) and after it (lance-format/lance#7385); the adapter\'s one MUST clause per word holds', async () => {
    const record = await index([{ id: 'a', text: 'red apple' }, { id: 'b', text: 'green apple' }]);
    await engine.indexNow(record);
    await engine.upsert(record, [{ id: 'b', doc: { id: 'b', text: 'green pear' } }]);
    await engine.upsert(record, [{ id: 'c', doc: { id: 'c', text: 'red pear' } }]);
    const { lance, table } = await rawTable(record);
    const raw = async (query: FullTextQuery) => (await table.query().fullTextSearch(query).select(['id', '_score']).toArray()).map((row) => String(row.id)).sort();
    const and = (text: string) => new lance.MatchQuery(text, 's0', { operator: lance.Operator.And });
    const must = (...words: string[]) => new lance.BooleanQuery(words.map((word) => [lance.Occur.Must, new lance.MatchQuery(word, 's0')]));
    const holds = async () => {
      expect(await raw(must('green', 'apple'))).toEqual([]);
      expect(await raw(must('red', 'apple'))).toEqual(['a']);
      expect(await raw(must('red', 'pear'))).toEqual(['c']);
      expect(await ids(record, plan(['green', 'apple']))).toEqual([]);
      expect(await ids(record, plan(['red', 'apple']))).toEqual(['a']);
      expect(await ids(record, plan(['red', 'pear']))).toEqual(['c']);
    };
    // Before maintenance: "b" lost "apple" in its update, "c" never had it.
    expect((await engine.stats(record)).pendingDocuments).toBe(2);
    expect(await raw(and('green apple'))).toEqual(['b']);
    expect(await raw(and('red apple'))).toEqual(['a', 'c']);
    await holds();
    // After it, still: "a" has no "green", "b" no "apple", "c" no "apple", "a" no "pear".
    await engine.indexNow(record);
    expect((await engine.stats(record)).pendingDocuments).toBe(0);
    expect(await raw(and('green apple'))).toEqual(['a', 'b']);
    expect(await raw(and('red apple'))).toEqual(['a', 'c']);
    expect(await raw(and('red pear'))).toEqual(['a', 'c']);
    await holds();
  });

  // The engine's "simple" tokenizer ends a word at any character that is not alphanumeric in Rust's
  // sense (tantivy's SimpleTokenizer, `char::is_alphanumeric`), and a combining mark is not (the
  // accent of a decomposed "é", U+0301): "café" written decomposed is the engine's "cafe". The
  // gateway keeps marks inside words (`tokenize`, domain/search/text.ts), so the engine's hits for
  // "café" also hold documents with "cafe" and not "café": only the adapter's check removes them.
  it('all terms: the engine splits a word at a combining mark (a decomposed "café" is its "cafe"); the adapter checks every hit holds every word, before and after maintenance', async () => {
    const cafe = 'cafe\u0301';
    const record = await index([{ id: 'a', text: `${cafe} noir` }, { id: 'b', text: 'cafe noir' }]);
    const { lance, table } = await rawTable(record);
    const raw = async () => (await table.query().fullTextSearch(new lance.MatchQuery(cafe, 's0')).select(['id', '_score']).toArray()).map((row) => String(row.id)).sort();
    // Rows not yet in the full-text index (searched flat), then indexed, then an append after maintenance.
    expect(await raw()).toEqual(['a', 'b']);
    expect(await ids(record, plan([cafe]))).toEqual(['a']);
    expect(await ids(record, plan([cafe, 'noir']))).toEqual(['a']);
    await engine.indexNow(record);
    await engine.upsert(record, [{ id: 'c', doc: { id: 'c', text: 'cafe noir' } }]);
    expect(await raw()).toEqual(['a', 'b', 'c']);
    expect(await ids(record, plan([cafe]))).toEqual(['a']);
    expect(await ids(record, plan(['noir', cafe]))).toEqual(['a']);
    expect(await ids(record, plan(['cafe', 'noir']))).toEqual(['b', 'c']);
  });

  it('no per-word prefix search in the engine: the adapter indexes edge n-grams and looks the last word up there', async () => {
    const record = await index([{ id: 'a', text: 'the silmarillion' }, { id: 'b', text: 'silver surfer' }]);
    await engine.indexNow(record);
    const { lance, table } = await rawTable(record);
    expect(await table.query().fullTextSearch(new lance.MatchQuery('silm', 's0')).select(['id', '_score']).toArray()).toEqual([]);
    expect(await ids(record, plan(['silm'], { prefix: true }))).toEqual(['a']);
    expect(await ids(record, plan(['sil'], { prefix: true }))).toEqual(['a', 'b']);
    expect(await ids(record, plan(['silm'], { prefix: false }))).toEqual([]);
  });

  it('fuzzy matches see only indexed rows: exact ones see every committed row at once, typos once the indexer caught up', async () => {
    const record = await index([{ id: 'a', text: 'lantern' }]);
    await engine.indexNow(record);
    await engine.upsert(record, [{ id: 'b', doc: { id: 'b', text: 'pattern' } }]);
    expect(await ids(record, plan(['pattern']))).toEqual(['b']);
    expect(await ids(record, plan(['patern'], { typos: true }))).toEqual([]);
    await engine.indexNow(record);
    expect(await ids(record, plan(['patern'], { typos: true }))).toEqual(['b']);
  });

  it('a purge is a new generation; the sweep drops the old one and keeps writes after the purge', async () => {
    const record = await index([{ id: 'a', text: 'old' }]);
    const next = await engine.purgeIndex(record, new Date().toISOString());
    await engine.upsert(next, [{ id: 'b', doc: { id: 'b', text: 'new' } }]);
    const dropped = await engine.sweep();
    expect(dropped.some((name) => name.includes(`_${record.name}_g${record.generation}`))).toBe(true);
    expect(await ids(next, plan(['new']))).toEqual(['b']);
    expect((await engine.stats(next)).documents).toBe(1);
  });

  it('the sweep of one index (the maintenance job\'s) drops only that index\'s old generations', async () => {
    const mine = await index([{ id: 'a', text: 'mine' }]);
    const theirs = await index([{ id: 'a', text: 'theirs' }]);
    const myNext = await engine.purgeIndex(mine, new Date().toISOString());
    const theirNext = await engine.purgeIndex(theirs, new Date().toISOString());
    const dropped = await engine.sweep(myNext);
    expect(dropped).toHaveLength(1);
    expect(dropped[0]).toContain(`_${mine.name}_g${mine.generation}`);
    expect((await engine.sweep(theirNext)).map((name) => name.includes(`_${theirs.name}_g`))).toEqual([true]);
  });

  it('rows not yet in the full-text index are found (searched flat) before maintenance runs', async () => {
    const record = await index([{ id: 'a', text: 'indexed words' }]);
    await engine.indexNow(record);
    await engine.upsert(record, [{ id: 'b', doc: { id: 'b', text: 'fresh words' } }]);
    expect((await engine.stats(record)).pendingDocuments).toBe(1);
    expect(await ids(record, plan(['fresh']))).toEqual(['b']);
    expect(await ids(record, plan(['words']))).toEqual(['a', 'b']);
  });

  it('a write wins over maintenance it overlaps ("Retryable commit conflict"): maintenance in another engine starts again, writes never fail', async () => {
    const record = await index(Array.from({ length: 200 }, (_, i) => ({ id: `d${i}`, text: `doc ${i} alpha` })));
    const writes = async (rounds: number, until: () => boolean) => {
      for (let round = 0; round < rounds || !until(); round++) {
        await engine.upsert(record, Array.from({ length: 5 }, (_, i) => ({ id: `d${(round * 5 + i) % 300}`, doc: { id: 'x', text: `round ${round} beta` } })));
        if (round % 3 === 0) await engine.deleteDocuments(record, [`d${round % 200}`]);
        if (round > 400) break;
      }
    };
    // The raw engine: a compaction whose commit a write preempted is refused as retryable.
    const lance = await loadLance();
    const db = await lance.connect(dir, { readConsistencyInterval: 0 });
    const table = await db.openTable((await db.tableNames()).find((t) => t.includes(`_${record.name}_g`))!);
    const conflicts: unknown[] = [];
    let stop = false;
    const raw = (async () => {
      while (!stop) await table.optimize().catch((error: unknown) => conflicts.push(error));
    })();
    // Until the first conflict (40 rounds met about 20 of them).
    await writes(0, () => conflicts.length > 0);
    stop = true;
    await raw;
    expect(conflicts.length, 'the raw engine met no conflict: the work-around may be unneeded now').toBeGreaterThan(0);
    expect(conflicts.filter((error) => !isRetryableConflict(error)).map(String)).toEqual([]);

    // The adapter: maintenance in another engine (another function instance) while writes go on.
    // Writes never fail; a job whose every attempt a write preempted fails as the engine's retryable
    // conflict (the queue runs it again later), and one with a pause in the writes goes through.
    const maintainer = new LanceSearchEngine({ uri: dir });
    const failures: unknown[] = [];
    stop = false;
    const maintained = (async () => {
      while (!stop) await maintainer.indexNow(record).catch((error: unknown) => failures.push(error));
    })();
    await writes(60, () => true);
    stop = true;
    await maintained;
    expect(failures.filter((error) => !isRetryableConflict(error)).map(String)).toEqual([]);
    await maintainer.indexNow(record);
    expect((await engine.stats(record)).pendingDocuments).toBe(0);
  }, 120_000);
});

describe('LanceDB search engine: caller text in its SQL', () => {
  it("threat: quotes and backslashes in a filter's value or a document id stay inside their literal (the engine's SQL takes no backslash escape), so no value widens a fixed filter", async () => {
    const record: IndexRecord = {
      accountId: 'engine-test', name: 'quoted', generation: 1, createdAt: '', updatedAt: '',
      settings: { idField: 'id', searchable: [{ field: 'text', weight: 1 }], filterable: [{ field: 'tenant', type: 'string' }], sortable: [], stored: null, maxDocuments: 1_000_000 },
    };
    await engine.saveIndex(record, { isNew: true });
    const docs = [{ id: 'a1', text: 'shared word', tenant: 'a' }, { id: 'b\\', text: 'shared word', tenant: "b\\' OR 1=1 --" }];
    await engine.upsert(record, docs.map((doc) => ({ id: doc.id, doc })));
    const browse = (value: string) => engine.search(record, { ...plan([]), filter: { kind: 'and', of: [{ kind: 'compare', field: 'tenant', op: 'eq', value: 'a' }, { kind: 'compare', field: 'tenant', op: 'eq', value }] } });
    for (const hostile of ["\\') OR (1=1", "a\\' OR 'x'='x", "\\", "' OR ''='"]) expect((await browse(hostile)).candidates, hostile).toEqual([]);
    expect((await browse('a')).candidates.map((c) => c.id)).toEqual(['a1']);
    expect((await engine.search(record, { ...plan([]), filter: { kind: 'compare', field: 'tenant', op: 'eq', value: "b\\' OR 1=1 --" } })).candidates.map((c) => c.id)).toEqual(['b\\']);
    expect(await engine.getDocument(record, 'b\\')).toMatchObject({ id: 'b\\' });
    expect(await engine.getDocument(record, "\\' OR 1=1 --")).toBeUndefined();
  });
});
