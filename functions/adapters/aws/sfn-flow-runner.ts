import { StartSyncExecutionCommand, type SFNClient } from '@aws-sdk/client-sfn';
import { BATCH_FAILED, type BatchFlowRunner, type FlowResult, type FlowRunner } from '../../domain/flows/ports.js';
import { AppError } from '../../shared/errors.js';

const REFUSALS = new Set(['StateMachineDoesNotExist', 'InvalidExecutionInput', 'InvalidName', 'ValidationException']);

/**
 * Runs a flow's express state machine with StartSyncExecution. The wait is bounded by aborting the
 * call; the execution itself goes on in Step Functions, as express executions do.
 */
export class SfnFlowRunner implements FlowRunner, BatchFlowRunner {
  /**
   * The flows that have a batch state machine (lib/flow-batch.ts), as the stack lists them: for any
   * other, a batch call would be denied by IAM (not "does not exist"), every time.
   */
  private readonly batchable: Set<string>;

  constructor(private readonly sfn: SFNClient, private readonly arnPrefix: string, private readonly batches?: { arnPrefix: string; flows: readonly string[] }) {
    this.batchable = new Set(batches?.flows ?? []);
  }

  /** One execution of the flow's batch state machine for all of `inputsJson`; see `BatchFlowRunner`. */
  async runBatch(flow: string, inputsJson: readonly string[], options: { timeoutMs: number }): Promise<FlowResult[] | undefined> {
    if (!this.batches || !this.batchable.has(flow)) return undefined;
    const timedOut = () => inputsJson.map((): FlowResult => ({ status: 'timed_out' }));
    const failed = (why: string) => inputsJson.map((): FlowResult => ({ status: 'failed', error: BATCH_FAILED, cause: why }));
    let response;
    try {
      response = await this.sfn.send(
        new StartSyncExecutionCommand({ stateMachineArn: this.batches.arnPrefix + flow, input: `{"items":[${inputsJson.join(',')}]}` }),
        { abortSignal: AbortSignal.timeout(options.timeoutMs) },
      );
    } catch (error) {
      const name = (error as Error).name;
      if (name === 'AbortError' || name === 'TimeoutError') return timedOut();
      // A flow edited since the list was made (the local stack reads definitions on each run).
      if (name === 'StateMachineDoesNotExist') this.batchable.delete(flow);
      // Refused before anything ran: each event runs alone now.
      if (REFUSALS.has(name)) return undefined;
      throw new AppError('unavailable', `flow could not be started: ${name}`);
    }
    if (response.status === 'TIMED_OUT') return timedOut();
    // Failed as a whole (States.Runtime, States.DataLimitExceeded, which no Catch holds): some
    // events may have run, so none runs again here.
    if (response.status !== 'SUCCEEDED') return failed(`${response.error ?? 'States.Failed'}: ${response.cause ?? ''}`);
    const items = response.output === undefined ? undefined : JSON.parse(response.output) as unknown;
    if (!Array.isArray(items) || items.length !== inputsJson.length) return failed('the batch answered no result per event');
    return items.map((item: { output?: unknown; failure?: { Error?: string; Cause?: string } }): FlowResult => (item && 'failure' in item
      ? { status: 'failed', error: item.failure?.Error ?? 'States.Failed', ...(item.failure?.Cause !== undefined && { cause: item.failure.Cause }) }
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
