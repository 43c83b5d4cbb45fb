import { composeKvSweeper } from '../handlers/kv-sweeper.js';
import { fromLambdaEnvironment } from './lambda-environment.js';

const { settings, aws } = fromLambdaEnvironment('kvSweeper');

/** Lambda entry of the kvSweeper function: settings and clients once per execution environment. */
export const handler = composeKvSweeper(settings, aws);
