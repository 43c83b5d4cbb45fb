import type { SweepTask } from '../../domain/kv/sweep-task.js';
import type { SweepTarget } from '../../domain/kv/sweeper.js';
import type { BlobStore, ObjectCatalog, StoreGeneration } from '../../domain/objects/types.js';

const generationOf = (task: SweepTask): StoreGeneration => ({ id: task.objectStoreId!, generation: task.generation });

/**
 * An object store's generation, for the sweeper: its keys are what S3 holds under
 * `<store id>/<generation>/` (the bytes are what costs), and each page deletes the bytes and then
 * the catalog entries of the same keys. Incomplete multipart uploads are not objects: the
 * bucket's lifecycle rule aborts them after a day.
 */
export class ObjectGenerationSweep implements SweepTarget {
  constructor(private readonly catalog: ObjectCatalog, private readonly blobs: BlobStore) {}

  getBucket(task: SweepTask): Promise<{ generation: string } | undefined> {
    return this.catalog.getStore(task);
  }

  scanGeneration(task: SweepTask, page: { after?: string; limit: number }): Promise<{ keys: string[]; last?: string }> {
    return this.blobs.listGeneration(generationOf(task), page);
  }

  async deleteFromGeneration(task: SweepTask, keys: string[]): Promise<void> {
    await this.blobs.deleteMany(generationOf(task), keys);
    await this.catalog.deleteEntries(generationOf(task), keys);
  }
}
