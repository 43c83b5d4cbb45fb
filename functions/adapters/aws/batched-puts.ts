import { BatchWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { Coalescer } from './coalescer.js';

type Item = Record<string, unknown>;

/** `BatchWriteItem`'s most requests per call. */
const MAX_ITEMS_PER_CALL = 25;
/** Rounds for the items DynamoDB leaves unprocessed (throttled) before their callers are refused. */
const MAX_TRIES = 6;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Unconditional puts of one table (keys `pk`, `sk`) that need no answer but "written", coalesced
 * into `BatchWriteItem` calls (`./coalescer.ts`). Same write units as `PutItem`; one call for what
 * would have been many. A put with a condition or a `ReturnValues` cannot be batched and is not
 * made here.
 */
export class BatchedPuts {
  private readonly coalescer: Coalescer<Item>;

  constructor(private readonly client: DynamoDBDocumentClient, private readonly table: string) {
    this.coalescer = new Coalescer<Item>({ maxItems: MAX_ITEMS_PER_CALL, keyOf: keyOf, send: (items) => this.write(items) });
  }

  /** Resolves once every item is written; the items go in one call unless more are waiting than one holds. */
  put(...items: Item[]): Promise<void> {
    return this.coalescer.add(items);
  }

  private async write(items: Item[]): Promise<(Error | undefined)[]> {
    let pending = items.map((Item) => ({ PutRequest: { Item } }));
    for (let tries = 1; ; tries++) {
      let unprocessed: { PutRequest?: { Item?: Item } }[];
      try {
        const result = await this.client.send(new BatchWriteCommand({ RequestItems: { [this.table]: pending } }));
        unprocessed = (result.UnprocessedItems?.[this.table] ?? []) as typeof unprocessed;
      } catch (error) {
        // A call is refused whole for one item's fault (too large, a bad attribute): each caller's
        // items then go alone, so only the one at fault is refused.
        if (items.length > 1 && (error as Error).name === 'ValidationException') return this.writeEach(items);
        throw error;
      }
      if (unprocessed.length === 0) return items.map(() => undefined);
      const left = new Set(unprocessed.map((request) => keyOf(request.PutRequest!.Item!)));
      if (tries === MAX_TRIES) {
        const throttled = new Error(`${left.size} of ${items.length} writes were left unprocessed ${MAX_TRIES} times`);
        throttled.name = 'ProvisionedThroughputExceededException';
        return items.map((item) => (left.has(keyOf(item)) ? throttled : undefined));
      }
      pending = unprocessed as typeof pending;
      await sleep(Math.min(1000, 25 * 2 ** tries));
    }
  }

  /**
   * Each item in a batch call of its own, not a `PutItem`: the functions that write through here
   * are granted `BatchWriteItem` alone (the flow worker has no `PutItem`), and a batch of one is
   * refused for the same faults and billed the same.
   */
  private writeEach(items: Item[]): Promise<(Error | undefined)[]> {
    return Promise.all(items.map((item) => this.write([item]).then(([outcome]) => outcome, (error: Error) => error)));
  }
}

const keyOf = (item: Item): string => `${String(item.pk)}\u0000${String(item.sk)}`;
