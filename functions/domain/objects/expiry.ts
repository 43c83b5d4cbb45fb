import { delaySecondsUntil, type SweepTask } from '../kv/sweep-task.js';
import type { SweepOutcome, SweepRun } from '../kv/sweeper.js';
import { blobNameOf, type ObjectServiceOptions, type Store } from './types.js';
import type { ObjectUploads } from './uploads.js';
import { releaseUsage } from './usage.js';

/** Deployed, a store's expiry passes fall on multiples of five minutes: at most one pass a store that often. */
export const DEFAULT_EXPIRY_SWEEP_SECONDS = 300;
/** Catalog entries read per page of a pass. */
const EXPIRY_PAGE_SIZE = 1000;
/** A pass stops with this much of its invocation left and schedules the next one at once. */
const EXPIRY_MARGIN_MS = 30_000;

/**
 * Expired objects and uploads leave a store: their bytes are deleted and their usage given back.
 * Reads never serve an expired object (they check `expires_at`); this pass is what frees the space.
 * S3 lifecycle rules are capped at 1,000 a bucket, and one bucket holds every store, so expiry is
 * the product's own: a task on the sweep queue, one pending a store at a time.
 *
 * The store item's `expiry_due` says when the pending pass is due. A write that leaves something
 * that expires (an object of a store with `ttl_seconds`, any upload) arms a pass after its catalog
 * entry is written: a conditional update that sets `expiry_due` if none is pending or the pending
 * one is later, and enqueues a task only when it did. Dues are rounded up to the sweep interval,
 * so a busy store arms at most one pass an interval. A pass first clears `expiry_due` (if still
 * its own), then reads every entry of the current generation: so a write whose entry it may miss
 * arms after that clear and gets a pass of its own, and an entry written before the clear is read.
 *
 *   write:   put entry ─ arm (set if none or later)
 *   pass:                    clear ─ scan entries ─ expire what is due ─ arm the earliest left
 */
export class ObjectExpiry {
  private readonly intervalSeconds: number;

  constructor(private readonly options: ObjectServiceOptions, private readonly uploads: ObjectUploads) {
    this.intervalSeconds = options.expirySweepSeconds ?? DEFAULT_EXPIRY_SWEEP_SECONDS;
  }

  /** Makes sure a pass is due no later than the sweep interval after `expiresAt` (epoch seconds). */
  async arm(store: Store, expiresAt: number): Promise<void> {
    const due = Math.ceil(expiresAt / this.intervalSeconds) * this.intervalSeconds;
    const { catalog, sweeps, now } = this.options;
    if (!(await catalog.armExpiry(store, store, due))) return;
    const task: SweepTask = { kind: 'object_expiry', accountId: store.accountId, name: store.name, objectStoreId: store.id, generation: store.generation, settleUntil: due * 1000 };
    try {
      await sweeps.enqueue(task, delaySecondsUntil(task.settleUntil, now()));
    } catch (error) {
      // Not left armed with nothing pending, or no later write would arm again.
      await catalog.disarmExpiry(store, store, due);
      throw error;
    }
  }

  /** The pass a task names: waits (re-enqueued) until it is due, then expires what has expired. */
  async run(task: SweepTask, run: SweepRun): Promise<SweepOutcome> {
    const { catalog, blobs, sweeps, now } = this.options;
    const store = await catalog.getStore(task);
    // Purged or deleted since: the generation sweep reclaims everything of the old one.
    if (!store || store.id !== task.objectStoreId || store.generation !== task.generation) return { status: 'abandoned', deleted: 0 };
    if (now() < task.settleUntil) {
      await sweeps.enqueue(task, delaySecondsUntil(task.settleUntil, now()));
      return { status: 'deferred', deleted: 0 };
    }
    await catalog.disarmExpiry(store, store, task.settleUntil / 1000);
    const nowSeconds = now() / 1000;
    let next: number | undefined;
    const later = (at: number) => { next = next === undefined ? at : Math.min(next, at); };

    for (const upload of await catalog.scanUploads(store)) {
      if (upload.sweepAt !== undefined) {
        // Closed: once its URLs cannot write, whatever they brought late goes.
        if (upload.sweepAt > nowSeconds) later(upload.sweepAt);
        else await this.uploads.sweepLate(store, upload);
      } else if (upload.expiresAt > nowSeconds) {
        later(upload.expiresAt);
      } else if (await this.uploads.close(store, upload)) {
        await this.uploads.discard(store, upload);
      }
    }
    let deleted = 0;
    let after: string | undefined;
    do {
      const page = await catalog.scanObjects(store, { after, limit: EXPIRY_PAGE_SIZE });
      const expired: string[] = [];
      for (const info of page.objects) {
        if (info.expiresAt === undefined) continue;
        if (info.expiresAt > nowSeconds) later(info.expiresAt);
        // The entry goes first, by its revision: an object rewritten since is not touched.
        else if (await catalog.deleteObject(store, info)) {
          await releaseUsage(catalog, store, { objects: 1, bytes: info.size });
          expired.push(blobNameOf(info));
        }
      }
      if (expired.length > 0) await blobs.deleteMany(store, expired);
      deleted += expired.length;
      after = page.last;
      // Out of time: the next pass starts over at once and finds less to do.
      if (after !== undefined && run.remainingMs() < EXPIRY_MARGIN_MS) {
        later(Math.floor(nowSeconds));
        break;
      }
    } while (after !== undefined);
    if (next !== undefined) await this.arm(store, next);
    return { status: 'done', deleted };
  }
}
