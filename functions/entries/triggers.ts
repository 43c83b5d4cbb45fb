import { composeTriggers } from '../handlers/triggers.js';
import { fromLambdaEnvironment } from './lambda-environment.js';

const { settings, aws } = fromLambdaEnvironment('triggers');

/** Lambda entry of the triggers function: settings and clients once per execution environment. */
export const handler = composeTriggers(settings, aws);
