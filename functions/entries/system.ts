/** Lambda entry of the system function: it reads no settings and creates no client. */
export { systemHandler as handler } from '../handlers/system.js';
