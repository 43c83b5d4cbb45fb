import type { ExecutionStore, RefusalOutcome } from '../flows/ports.js';

/**
 * At most this many refused deliveries (and handshakes) of one trigger are recorded per minute;
 * later ones are only counted (metric `WebhookRefusalsNotRecorded`) and logged (their metric line
 * names the reason, the trigger and the request). Ten is what diagnosis needs: a secret set wrong
 * at one end refuses every delivery of its sender, and one stored request (headers and body, the
 * signature header's shape, the event type) shows it; ten a minute also show whether every
 * delivery fails or only some (two senders on one URL, a rotation half done). An attack is told by
 * its rate and source addresses (the metric, the log lines, the access log), and ten stored
 * requests a minute show what it sends. Each record costs 3 write units (the counter that is this
 * budget, the record, the request): under a flood, at most 30 a trigger a minute.
 */
export const MAX_REFUSED_RECORDS_PER_MINUTE = 10;

/** What the receiver asks before recording a refusal or handshake (`RefusalBudget`, or a decorator of it). */
export type RefusalGate = Pick<RefusalBudget, 'take' | 'giveBack'>;

/**
 * Decides whether a refused delivery is recorded. A flood of bad requests must neither fill the
 * table nor slow the receiver, so two budgets stand in front of the write:
 *
 *   this container's own count ── at most 10 per trigger per minute ──▶ no DynamoDB call past it
 *   the shared counter (the trigger's delivery counts of the minute, conditional ADD) ──▶ at most 10 records in all
 *
 * The shared counter's ADD also counts the refusal (or handshake) in the trigger's delivery counts,
 * so its record costs no count of its own; `giveBack` takes both back when the record fails.
 *
 * The local count keeps a flood from turning into one write per request on a single counter item
 * (a hot key); the shared one holds the limit across containers. A refusal past either budget is
 * reported to `overflow` (a metric), not stored.
 */
export class RefusalBudget {
  private minute = -1;
  private readonly taken = new Map<string, number>();

  constructor(
    private readonly store: Pick<ExecutionStore, 'countRefusal'> & Partial<Pick<ExecutionStore, 'uncountRefusal'>>,
    private readonly overflow: () => void = () => undefined,
    private readonly perMinute = MAX_REFUSED_RECORDS_PER_MINUTE,
  ) {}

  async take(triggerId: string, nowMs: number, outcome: RefusalOutcome = 'refused'): Promise<boolean> {
    const minute = Math.floor(nowMs / 60_000);
    if (minute !== this.minute) {
      this.minute = minute;
      this.taken.clear();
    }
    const taken = this.taken.get(triggerId) ?? 0;
    let granted = false;
    if (taken < this.perMinute) {
      this.taken.set(triggerId, taken + 1);
      granted = await this.store.countRefusal(triggerId, minute, this.perMinute, outcome);
    }
    if (!granted) this.overflow();
    return granted;
  }

  /** Takes back what `take` counted, for a record that was not written (best effort: a failure is the caller's to log). */
  async giveBack(triggerId: string, nowMs: number, outcome: RefusalOutcome = 'refused'): Promise<void> {
    await this.store.uncountRefusal?.(triggerId, Math.floor(nowMs / 60_000), outcome);
  }
}
