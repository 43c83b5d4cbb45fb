import { parseFlowMessage } from './message.js';
import type { ExecutionStore, FlowRunner } from './ports.js';

export interface WorkerDeps {
  executions: ExecutionStore;
  flows: FlowRunner;
  /** Receives before the queue moves a message to its dead-letter queue. */
  maxReceiveCount: number;
}

/** Thrown so the event source redelivers this message (and only this one) later. */
export class FlowAttemptFailed extends Error {
  constructor(readonly attempt: number, readonly reason: string) {
    super(`flow attempt ${attempt} failed: ${reason}`);
    this.name = 'FlowAttemptFailed';
  }
}

/**
 * Runs one queued event's flow and records the outcome. A failed run throws, so the message comes
 * back after its visibility timeout; the record shows `queued` until the last allowed receive,
 * whose failure is recorded as `failed` before the queue moves the message to its DLQ.
 */
export async function runQueuedFlow(deps: WorkerDeps, body: string, receiveCount: number, timeoutMs: number): Promise<void> {
  const message = parseFlowMessage(body);
  const input = message.input ?? JSON.parse(await deps.executions.loadPayload(message.payload!));
  await deps.executions.update(message.ref, { status: 'running', attempts: receiveCount });
  const result = await deps.flows.run(message.flow, input, { timeoutMs });
  if (result.status === 'succeeded') {
    await deps.executions.update(message.ref, { status: 'succeeded', attempts: receiveCount, output: result.output });
    return;
  }
  const reason = result.status === 'failed' ? result.error : 'flow_timeout';
  const last = receiveCount >= deps.maxReceiveCount;
  await deps.executions.update(message.ref, { status: last ? 'failed' : 'queued', attempts: receiveCount, error: reason });
  throw new FlowAttemptFailed(receiveCount, reason);
}
