import { parseFlowMessage } from './message.js';
import type { BatchFlowRunner, FlowResult, FlowRunner } from './ports.js';

/**
 * Express executions take at most 256 KiB of input: a batch's inputs stay under this, and a
 * larger batch is split (a message alone may be 200 KiB, `MAX_INLINE_MESSAGE_BYTES`).
 */
export const MAX_BATCH_INPUT_BYTES = 200 * 1024;
/**
 * An inline Map state runs at most 40 iterations at once
 * (https://docs.aws.amazon.com/step-functions/latest/dg/state-map-inline.html): a batch of more
 * would take a wave per 40, and a batch's time is its flow's `TimeoutSeconds` and at most an
 * express execution's 5 minutes. So an execution takes at most 40 events: each runs at once, and
 * the batch takes as long as its slowest event, as one event alone would.
 */
export const MAX_BATCH_MEMBERS = 40;

/**
 * The flow runner each record of a worker batch runs its flow with: records of one flow (two or
 * more, their inputs inline in the message, each on its first attempt) share one execution of that
 * flow's batch state machine, started at once; every other record, and every record of a batch
 * that did not start, runs in an execution of its own through `single`. The records' handling is
 * otherwise theirs alone (attempts, outcome, retry), as `runQueuedFlow` does it.
 *
 * A batch that failed or timed out as a whole gives each of its records a failed attempt (what
 * each did is unknown: it is never run again here), and a retried record always runs alone, so an
 * event that fails its batch that way fails only itself from its second attempt on.
 */
export function batchedRunners(
  records: readonly { id: string; body: string; receiveCount: number }[],
  single: FlowRunner,
  batch: BatchFlowRunner,
  timeoutMs: number,
): Map<string, FlowRunner> {
  const byFlow = new Map<string, { id: string; inputJson: string }[]>();
  for (const record of records) {
    let message;
    try {
      message = parseFlowMessage(record.body);
    } catch {
      continue; // runQueuedFlow reports it
    }
    if (!message.input || record.receiveCount > 1 || (message.attempts_before ?? 0) > 0) continue;
    const members = byFlow.get(message.flow) ?? [];
    members.push({ id: record.id, inputJson: JSON.stringify(message.input) });
    byFlow.set(message.flow, members);
  }
  const runners = new Map<string, FlowRunner>();
  for (const [flow, members] of byFlow) {
    for (const group of bySize(members)) {
      if (group.length < 2) continue;
      const results = batch.runBatch(flow, group.map((member) => member.inputJson), { timeoutMs });
      // Each member awaits it (an outage fails each as its own run would); none may leave it unhandled.
      results.catch(() => undefined);
      group.forEach((member, index) => {
        runners.set(member.id, {
          async run(name, inputJson, options): Promise<FlowResult> {
            const answered = name === flow ? await results : undefined;
            return answered?.[index] ?? single.run(name, inputJson, options);
          },
        });
      });
    }
  }
  return runners;
}

/** Consecutive groups of at most MAX_BATCH_MEMBERS whose inputs together stay under MAX_BATCH_INPUT_BYTES. */
function bySize<T extends { inputJson: string }>(members: readonly T[]): T[][] {
  const groups: T[][] = [];
  let current: T[] = [];
  let bytes = 0;
  for (const member of members) {
    const size = Buffer.byteLength(member.inputJson) + 1;
    if (current.length && (bytes + size > MAX_BATCH_INPUT_BYTES || current.length === MAX_BATCH_MEMBERS)) {
      groups.push(current);
      current = [];
      bytes = 0;
    }
    current.push(member);
    bytes += size;
  }
  if (current.length) groups.push(current);
  return groups;
}
