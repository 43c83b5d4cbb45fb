import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

type Item = { pk?: unknown };
type BatchInput = { RequestItems?: Record<string, { PutRequest?: { Item?: Item }; DeleteRequest?: { Key?: Item } }[]> };

const unitsOf = (output: unknown) => {
  const capacity = (output as { ConsumedCapacity?: { CapacityUnits?: number } | { CapacityUnits?: number }[] }).ConsumedCapacity;
  return (Array.isArray(capacity) ? capacity : capacity ? [capacity] : []).reduce((sum, c) => sum + (c.CapacityUnits ?? 0), 0);
};

/**
 * Reports the write units of every item a client writes, with the item's partition key: a
 * `BatchWriteItem` reports its units per table only, so each of its requests is sent as a batch of
 * its own to learn its units (the same items written, the same units billed, only more calls).
 * Reads, and writes while `active()` is false, pass through untouched.
 */
export function meterWriteUnitsByItem(client: DynamoDBDocumentClient, name: string, onWrite: (pk: unknown, units: number, command: string) => void, active: () => boolean = () => true): void {
  client.middlewareStack.add((next, context) => async (args) => {
    const command = context.commandName ?? '';
    if (!active() || !/^(Put|Update|Delete|BatchWrite)/.test(command)) return next(args);
    const input = args.input as BatchInput & { Item?: Item; Key?: Item; ReturnConsumedCapacity?: string };
    if (!input.RequestItems) {
      input.ReturnConsumedCapacity = 'TOTAL';
      const result = await next(args);
      onWrite((input.Item ?? input.Key)?.pk, unitsOf(result.output), command);
      return result;
    }
    const unprocessed: NonNullable<BatchInput['RequestItems']> = {};
    let result: Awaited<ReturnType<typeof next>> | undefined;
    for (const [table, requests] of Object.entries(input.RequestItems)) {
      for (const request of requests) {
        result = await next({ ...args, input: { RequestItems: { [table]: [request] }, ReturnConsumedCapacity: 'TOTAL' } });
        const left = (result.output as BatchInput & { UnprocessedItems?: BatchInput['RequestItems'] }).UnprocessedItems?.[table] ?? [];
        if (left.length > 0) (unprocessed[table] ??= []).push(...left);
        else onWrite((request.PutRequest?.Item ?? request.DeleteRequest?.Key)?.pk, unitsOf(result.output), command);
      }
    }
    return { ...result!, output: { ...result!.output, UnprocessedItems: unprocessed, ConsumedCapacity: undefined } as NonNullable<typeof result>["output"] };
  }, { step: 'initialize', name });
}
