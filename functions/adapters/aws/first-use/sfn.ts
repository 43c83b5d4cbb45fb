/** Loaded by `sfnFlowRunnerOnFirstUse`: the Step Functions client and what uses it, one chunk of the bundle. */
import type { FlowRunner } from '../../../domain/flows/ports.js';
import type { AwsClients } from '../clients.js';
import { sfnClient } from '../clients/sfn.js';
import { SfnFlowRunner } from '../sfn-flow-runner.js';

export const flowRunner = (arnPrefix: string, aws: AwsClients): FlowRunner => new SfnFlowRunner(sfnClient(aws), arnPrefix);
