/**
 * Writes asked for at about the same time, sent as one batch call: what callers add while the
 * event loop is busy goes out together once it turns (`setImmediate`), each caller answered when
 * its own items are written. A Lambda function serves one request at a time, so there a batch
 * holds one caller's items (the receiver's two records in one `BatchWriteItem` rather than two
 * `PutItem`s); the local stack serves many at once, and 50 webhooks in flight share a handful of
 * calls instead of making one each: an SDK call costs the caller and the engine more CPU than the
 * write it carries.
 *
 * Nothing is held back for longer than it takes the current turn of the event loop to end, and a
 * write is answered only once its batch call has succeeded for it, so coalescing changes neither
 * what is durable when a caller is answered nor what a failure loses.
 */
export interface CoalescerOptions<T> {
  /** Most items one call may carry (25 for `BatchWriteItem`, 10 for `SendMessageBatch`). */
  maxItems: number;
  /** Most total weight (bytes) one call may carry, and how much an item weighs; a heavier item goes alone. */
  maxWeight?: number;
  weigh?: (item: T) => number;
  /** Items with the same key never share a call (`BatchWriteItem` refuses a key twice). */
  keyOf?: (item: T) => string;
  /**
   * Sends one call's items; returns, for each item in order, `undefined` once it is written or
   * the error that refused it. A throw refuses every item of the call.
   */
  send: (items: T[]) => Promise<(Error | undefined)[]>;
}

interface Group<T> {
  items: T[];
  /** Items not yet answered for; the group is settled when none is left, with its first error. */
  left: number;
  error?: Error;
  settle: (error?: Error) => void;
}

export class Coalescer<T> {
  private waiting: Group<T>[] = [];
  private scheduled = false;

  constructor(private readonly options: CoalescerOptions<T>) {}

  /** Writes `items`, in one call when they fit in one, together with whatever else is waiting. */
  add(items: T[]): Promise<void> {
    if (items.length === 0) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      this.waiting.push({ items, left: items.length, settle: (error) => (error ? reject(error) : resolve()) });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.scheduled = false;
    const groups = this.waiting;
    this.waiting = [];
    for (const call of this.pack(groups)) void this.sendCall(call);
  }

  /** Fills calls in arrival order; a group stays in one call when it fits in one. */
  private pack(groups: Group<T>[]): { item: T; group: Group<T> }[][] {
    const { maxItems, maxWeight = Infinity, weigh = () => 0, keyOf } = this.options;
    const calls: { item: T; group: Group<T> }[][] = [];
    let call: { item: T; group: Group<T> }[] = [];
    let weight = 0;
    let keys = new Set<string>();
    const close = () => {
      if (call.length > 0) calls.push(call);
      call = [];
      weight = 0;
      keys = new Set();
    };
    for (const group of groups) {
      const groupWeight = group.items.reduce((sum, item) => sum + weigh(item), 0);
      if (call.length + group.items.length > maxItems || weight + groupWeight > maxWeight) close();
      for (const item of group.items) {
        const key = keyOf?.(item);
        const itemWeight = weigh(item);
        if (call.length >= maxItems || (call.length > 0 && weight + itemWeight > maxWeight) || (key !== undefined && keys.has(key))) close();
        call.push({ item, group });
        weight += itemWeight;
        if (key !== undefined) keys.add(key);
      }
    }
    close();
    return calls;
  }

  private async sendCall(call: { item: T; group: Group<T> }[]): Promise<void> {
    let outcomes: (Error | undefined)[];
    try {
      outcomes = await this.options.send(call.map((entry) => entry.item));
    } catch (error) {
      outcomes = call.map(() => error as Error);
    }
    // A group spread over several calls is answered when its last item is; the first error wins.
    for (const [i, { group }] of call.entries()) {
      group.error ??= outcomes[i];
      if (--group.left === 0) group.settle(group.error);
    }
  }
}
