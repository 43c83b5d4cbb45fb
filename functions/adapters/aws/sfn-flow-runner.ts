import { StartSyncExecutionCommand, type SFNClient } from '@aws-sdk/client-sfn';
import type { BatchFlowRunner, FlowResult, FlowRunner } from '../../domain/flows/ports.js';
import { AppError } from '../../shared/errors.js';

const REFUSALS = new Set(['StateMachineDoesNotExist', 'InvalidExecutionInput', 'InvalidName', 'ValidationException']);

/**
 * Runs a flow's express state machine with StartSyncExecution. The wait is bounded by aborting the
 * call; the execution itself goes on in Step Functions, as express executions do.
 */
export class SfnFlowRunner implements FlowRunner, BatchFlowRunner {
  /** Flows found to have no batch state machine (lib/flow-batch.ts): their events run one by one. */
  private readonly unbatchable = new Set<string>();

  constructor(private readonly sfn: SFNClient, private readonly arnPrefix: string, private readonly batchArnPrefix?: string) {}

  /** One execution of the flow's batch state machine for all of `inputsJson`; see `BatchFlowRunner`. */
  async runBatch(flow: string, inputsJson: readonly string[], options: { timeoutMs: number }): Promise<FlowResult[] | undefined> {
    if (!this.batchArnPrefix || this.unbatchable.has(flow)) return undefined;
    const timedOut = () => inputsJson.map((): FlowResult => ({ status: 'timed_out' }));
    let response;
    try {
      response = await this.sfn.send(
        new StartSyncExecutionCommand({ stateMachineArn: this.batchArnPrefix + flow, input: `{"items":[${inputsJson.join(',')}]}` }),
        { abortSignal: AbortSignal.timeout(options.timeoutMs) },
      );
    } catch (error) {
      const name = (error as Error).name;
      if (name === 'AbortError' || name === 'TimeoutError') return timedOut();
      if (name === 'StateMachineDoesNotExist') this.unbatchable.add(flow);
      if (REFUSALS.has(name)) return undefined;
      throw new AppError('unavailable', `flow could not be started: ${name}`);
    }
    if (response.status === 'TIMED_OUT') return timedOut();
    // The batch as a whole failed (e.g. its outputs together over 256 KiB): each event runs alone.
    if (response.status !== 'SUCCEEDED' || response.output === undefined) return undefined;
    const items = JSON.parse(response.output) as unknown;
    if (!Array.isArray(items) || items.length !== inputsJson.length) return undefined;
    return items.map((item: { output?: unknown; error?: string; cause?: string }): FlowResult => (item && 'error' in item
      ? { status: 'failed', error: item.error ?? 'States.Failed', ...(item.cause !== undefined && { cause: item.cause }) }
      : { status: 'succeeded', output: item?.output ?? null }));
  }

  async run(flow: string, inputJson: string, options: { timeoutMs: number; name?: string }): Promise<FlowResult> {
    let response;
    try {
      response = await this.sfn.send(
        new StartSyncExecutionCommand({ stateMachineArn: this.arnPrefix + flow, input: inputJson, name: options.name }),
        { abortSignal: AbortSignal.timeout(options.timeoutMs) },
      );
    } catch (error) {
      const name = (error as Error).name;
      if (name === 'AbortError' || name === 'TimeoutError') return { status: 'timed_out' };
      // Refusals of this execution (unknown flow, input over 256 KiB) are the flow's failure, not an outage.
      if (REFUSALS.has(name)) return { status: 'failed', error: name };
      throw new AppError('unavailable', `flow could not be started: ${name}`);
    }
    if (response.status === 'SUCCEEDED') return { status: 'succeeded', output: response.output === undefined ? null : JSON.parse(response.output) };
    if (response.status === 'TIMED_OUT') return { status: 'timed_out' };
    return { status: 'failed', error: response.error ?? 'States.Failed', cause: response.cause };
  }
}
