/** Lambda entry of the system function: it reads no settings and creates no client; the console it serves was built into its bundle. */
export { systemHandler as handler } from '../handlers/system.js';
