/** Loaded by `sfnFlowRunnerOnFirstUse`: the Step Functions client and what uses it, one chunk of the bundle. */
import type { FlowRunner } from '../../../domain/flows/ports.js';
import { sfnClient } from '../sfn-client.js';
import { SfnFlowRunner } from '../sfn-flow-runner.js';

export const flowRunner = (arnPrefix: string): FlowRunner => new SfnFlowRunner(sfnClient, arnPrefix);
