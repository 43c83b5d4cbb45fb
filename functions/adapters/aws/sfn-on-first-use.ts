import type { FlowRunner } from '../../domain/flows/ports.js';
import { LazyFlowRunner } from '../lazy-flow-runner.js';
import type { AwsClients } from './clients.js';

/**
 * StartSyncExecution for the receiver's wait mode, loaded with the Step Functions client by the
 * first flow it runs: an acknowledging receiver never loads either. `first-use/sfn.ts` is a chunk
 * of its own in the bundle (lib/constructs/esm-bundle.ts); one module per service, because the
 * bundler keeps a chunk for every `import()` a function's code contains, called or not.
 */
export const sfnFlowRunnerOnFirstUse = (arnPrefix: string, aws: AwsClients): FlowRunner =>
  new LazyFlowRunner(async () => (await import('./first-use/sfn.js')).flowRunner(arnPrefix, aws));
