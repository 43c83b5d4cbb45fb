import type { SweepTask } from '../../domain/kv/sweep-task.js';
import type { SweepTarget } from '../../domain/kv/sweeper.js';
import type { BlobStore, ObjectCatalog, StoreGeneration } from '../../domain/objects/types.js';

const generationOf = (task: SweepTask): StoreGeneration => ({ id: task.objectStoreId!, generation: task.generation });

/** Cursor marks: a page of catalog entries (`e:`, their keys), then of bytes (`b:`, their names in the generation). */
const ENTRIES = 'e:';
const BYTES = 'b:';

/**
 * An object store's generation, for the sweeper: first its catalog entries (each write's bytes
 * have a name of their own, not the key, so the entries cannot be found from the bytes), then
 * what S3 holds under `<store id>/<generation>/` (the bytes are what costs). Incomplete multipart
 * uploads are not objects: the bucket's lifecycle rule aborts them after a day.
 */
export class ObjectGenerationSweep implements SweepTarget {
  constructor(private readonly catalog: ObjectCatalog, private readonly blobs: BlobStore) {}

  getBucket(task: SweepTask): Promise<{ generation: string } | undefined> {
    return this.catalog.getStore(task);
  }

  async scanGeneration(task: SweepTask, page: { after?: string; limit: number }): Promise<{ keys: string[]; last?: string }> {
    const at = generationOf(task);
    if (page.after === undefined || page.after.startsWith(ENTRIES)) {
      const entries = await this.catalog.scanObjects(at, { after: page.after?.slice(ENTRIES.length), limit: page.limit });
      const keys = entries.objects.map((info) => ENTRIES + info.key);
      // The entries are done: the next page starts on the bytes.
      return { keys, last: entries.last === undefined ? BYTES : ENTRIES + entries.last };
    }
    // A pass begun before the marks existed resumes with a bare name.
    const after = page.after.startsWith(BYTES) ? page.after.slice(BYTES.length) : page.after;
    const bytes = await this.blobs.listGeneration(at, { after: after === '' ? undefined : after, limit: page.limit });
    return { keys: bytes.keys.map((name) => BYTES + name), ...(bytes.last !== undefined && { last: BYTES + bytes.last }) };
  }

  async deleteFromGeneration(task: SweepTask, keys: string[]): Promise<void> {
    const named = (mark: string) => keys.filter((key) => key.startsWith(mark)).map((key) => key.slice(mark.length));
    await this.blobs.deleteMany(generationOf(task), named(BYTES));
    await this.catalog.deleteEntries(generationOf(task), named(ENTRIES));
  }
}
