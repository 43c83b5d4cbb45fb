import { createAwsClients } from '../adapters/aws/clients.js';
import { composeFlowWorker } from '../handlers/flow-worker.js';
import { readSettings } from '../settings.js';

/** Lambda entry of the flowWorker function: settings and clients once per execution environment. */
export const handler = composeFlowWorker(readSettings('flowWorker', process.env), createAwsClients());
