import { composeSystem } from '../handlers/system.js';
import { fromLambdaEnvironment } from './lambda-environment.js';

/** Lambda entry of the system function: it creates no client; the console it serves was built into its bundle. */
export const handler = composeSystem(fromLambdaEnvironment('system').settings);
