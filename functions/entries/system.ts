import { composeSystem } from '../handlers/system.js';
import { readSettings } from '../settings.js';

/** Lambda entry of the system function: it creates no client; the console it serves was built into its bundle. */
export const handler = composeSystem(readSettings('system', process.env));
