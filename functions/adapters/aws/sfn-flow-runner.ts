import { StartSyncExecutionCommand, type SFNClient } from '@aws-sdk/client-sfn';
import type { FlowResult, FlowRunner } from '../../domain/flows/ports.js';
import { AppError } from '../../shared/errors.js';

const REFUSALS = new Set(['StateMachineDoesNotExist', 'InvalidExecutionInput', 'InvalidName', 'ValidationException']);

/**
 * Runs a flow's express state machine with StartSyncExecution. The wait is bounded by aborting the
 * call; the execution itself goes on in Step Functions, as express executions do.
 */
export class SfnFlowRunner implements FlowRunner {
  constructor(private readonly sfn: SFNClient, private readonly arnPrefix: string) {}

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
