import type { Clock } from '../domain/clock.js';
import type { FlowResult, FlowRunner } from '../domain/flows/ports.js';
import { onFirstUse } from './lazy.js';

/**
 * A `FlowRunner` whose implementation is loaded when a flow first runs, so that a receiver whose
 * triggers all acknowledge never loads the Step Functions client. The time the first load takes
 * comes out of that run's `timeoutMs`: the caller measured its budget before the load, and a
 * wait-mode answer must still arrive before the gateway's deadline. Only the difference of two
 * readings of `now` counts, so by default it is the monotonic `performance.now`.
 */
export class LazyFlowRunner implements FlowRunner {
  private readonly runner: () => Promise<FlowRunner>;

  constructor(load: () => Promise<FlowRunner>, private readonly now: Clock = () => performance.now()) {
    this.runner = onFirstUse(load);
  }

  async run(flow: string, inputJson: string, options: { timeoutMs: number; name?: string }): Promise<FlowResult> {
    const started = this.now();
    const runner = await this.runner();
    const timeoutMs = Math.max(0, Math.floor(options.timeoutMs - (this.now() - started)));
    return runner.run(flow, inputJson, { ...options, timeoutMs });
  }
}
