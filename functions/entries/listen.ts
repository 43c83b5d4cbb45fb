import { composeListen } from '../handlers/listen.js';
import { fromLambdaEnvironment } from './lambda-environment.js';

// The triggers function's settings (its tables, its credential check) and the connections table's.
const { settings, aws } = fromLambdaEnvironment('triggers');

/** Lambda entry of the listen endpoint's routes ($connect, $disconnect, $default). */
export const handler = composeListen(settings, aws);
