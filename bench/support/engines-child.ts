/**
 * The embedded engines (dynalite, local SQS, local Step Functions) in a process of their own, for
 * the receiver bench: the handler's CPU time is then the parent's, the engines' the child's.
 */
import { resolve } from 'node:path';
import { startEngines } from '../../local/engines.js';
import { serveParent } from './child.js';

const engines = await startEngines({ flowsDirs: [resolve(import.meta.dirname, '../../flows')], visibilityTimeoutSeconds: 600 });
serveParent({ env: engines.env, queueUrls: engines.queueUrls }, () => engines.stop());
