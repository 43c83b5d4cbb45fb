import { composeFlowWorker } from '../handlers/flow-worker.js';
import { fromLambdaEnvironment } from './lambda-environment.js';

const { settings, aws } = fromLambdaEnvironment('flowWorker');

/** Lambda entry of the flowWorker function: settings and clients once per execution environment. */
export const handler = composeFlowWorker(settings, aws);
