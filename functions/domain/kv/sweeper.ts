import type { Clock } from '../clock.js';
import { CURRENT_GENERATION_RETRY_SECONDS, delaySecondsUntil, type SweepKind, type SweepQueue, type SweepTask } from './sweep-task.js';

/**
 * What a sweep reads and deletes, for a KV bucket or an object store: the store's current
 * generation (its record, by the task's account and name), and a generation's keys page by page.
 * `KvStore` is one; object stores' is `ObjectGenerationSweep`.
 */
export interface SweepTarget {
  getBucket(task: SweepTask): Promise<{ generation: string } | undefined>;
  /** Up to `limit` keys after `after`, in order; `last` is undefined when none are left. */
  scanGeneration(task: SweepTask, page: { after?: string; limit: number }): Promise<{ keys: string[]; last?: string }>;
  deleteFromGeneration(task: SweepTask, keys: string[]): Promise<void>;
}

/** Generations of another kind of store (`SweepTask.kind`): whether one is current, its keys, their deletion. */
export interface GenerationStore {
  isCurrent(task: SweepTask): Promise<boolean>;
  scanGeneration(at: SweepTask, page: { after?: string; limit: number }): Promise<{ keys: string[]; last?: string }>;
  deleteFromGeneration(at: SweepTask, keys: string[]): Promise<void>;
}

export interface SweeperOptions {
  store: SweepTarget;
  /** The stores of tasks with a `kind`; a task of a kind without one fails (and reaches the DLQ). */
  others?: Partial<Record<SweepKind, GenerationStore>>;
  queue: SweepQueue;
  now: Clock;
  /** Keys read and deleted per step. */
  pageSize?: number;
  /** Stop and hand over to a new message when less time than this remains. */
  marginMs?: number;
}

export interface SweepRun {
  /** Milliseconds left in this invocation (Lambda's `getRemainingTimeInMillis`). */
  remainingMs: () => number;
}

/**
 * What a run did: `done` (final pass complete), `final_pass_scheduled`, `resumed` (time ran
 * out, continued in a new message), `deferred` (the generation was still current), or
 * `abandoned` (still current after it settled: the purge that issued the task never committed).
 */
export type SweepOutcome = { status: 'done' | 'final_pass_scheduled' | 'resumed' | 'deferred' | 'abandoned'; deleted: number };

export const DEFAULT_SWEEP_PAGE_SIZE = 1000;
/** A step is one query and a page of batch deletes with backoff; 30 s leaves room for a slow one. */
export const DEFAULT_SWEEP_MARGIN_MS = 30_000;

/**
 * Reclaims old generations page by page. It never touches the bucket's current generation: it
 * checks, with a consistent read, that the task's generation is no longer current before deleting,
 * and generations are random ids that never come back.
 *
 * A write that read the old generation just before a purge can land in it after the sweeper went
 * past its key. So a pass that started before the task settled is followed by one more pass from
 * the start, scheduled after `settleUntil`; nothing can land after that, so the final pass leaves
 * the generation empty:
 *
 *   purge: enqueue ─ swap ───────────────── settleUntil
 *   late write:   read G ─────── put in G    │
 *   pass 1:              ├──── sweep G ────┤ │ (may miss the late write)
 *   final pass:                              ├─ sweep G ─┤ (cannot miss it)
 */
export class Sweeper {
  private readonly pageSize: number;
  private readonly marginMs: number;

  constructor(private readonly options: SweeperOptions) {
    this.pageSize = options.pageSize ?? DEFAULT_SWEEP_PAGE_SIZE;
    this.marginMs = options.marginMs ?? DEFAULT_SWEEP_MARGIN_MS;
  }

  async run(task: SweepTask, run: SweepRun): Promise<SweepOutcome> {
    const { queue, now } = this.options;
    const store = this.storeFor(task);
    if (await store.isCurrent(task)) {
      // Enqueued before its swap: the swap may not have committed yet, or it failed.
      if (now() >= task.settleUntil) return { status: 'abandoned', deleted: 0 };
      await queue.enqueue(task, Math.min(CURRENT_GENERATION_RETRY_SECONDS, Math.max(1, delaySecondsUntil(task.settleUntil, now()))));
      return { status: 'deferred', deleted: 0 };
    }

    const startedAt = task.pass?.startedAt ?? now();
    let after = task.pass?.after;
    let deleted = 0;
    for (;;) {
      const page = await store.scanGeneration(task, { after, limit: this.pageSize });
      if (page.keys.length > 0) await store.deleteFromGeneration(task, page.keys);
      deleted += page.keys.length;
      after = page.last;
      if (after === undefined) break;
      if (run.remainingMs() < this.marginMs) {
        await queue.enqueue({ ...task, pass: { startedAt, after } }, 0);
        return { status: 'resumed', deleted };
      }
    }
    if (startedAt >= task.settleUntil) return { status: 'done', deleted };
    await queue.enqueue({ ...task, pass: undefined }, delaySecondsUntil(task.settleUntil, now()));
    return { status: 'final_pass_scheduled', deleted };
  }

  private storeFor(task: SweepTask): GenerationStore {
    if (task.kind) {
      const other = this.options.others?.[task.kind];
      if (!other) throw new Error(`no store for sweeps of ${task.kind}`);
      return other;
    }
    const { store } = this.options;
    return {
      isCurrent: async (ref) => (await store.getBucket(ref))?.generation === ref.generation,
      scanGeneration: (at, page) => store.scanGeneration(at, page),
      deleteFromGeneration: (at, keys) => store.deleteFromGeneration(at, keys),
    };
  }
}
