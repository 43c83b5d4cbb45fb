/** The local stack as `npm start` runs it (engines, handlers, HTTP server, SQS pollers), for the throughput bench. */
import { startLocalStack } from '../../local/stack.js';
import { serveParent } from './child.js';

const stack = await startLocalStack({ port: 0 });
serveParent(
  { baseUrl: stack.baseUrl, webhookBaseUrl: stack.webhookBaseUrl, token: await stack.token('bench'), env: stack.engines.env, queueUrls: stack.queueUrls },
  () => stack.stop(),
);
