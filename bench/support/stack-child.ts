/**
 * The local stack for the throughput bench (engines, handlers, HTTP server, SQS pollers): on the
 * data directory `BENCH_DATA_DIR` as `npm start` runs it, or in memory without one. Its metric
 * lines are dropped, as `npm start` drops them (`bin/local.ts`): a stack that keeps them in memory
 * runs each invocation in an AsyncLocalStorage, whose promise hooks cost the receiver's thread
 * about 0.4 ms of CPU a request (`metric-lines.ts`).
 */
import { startLocalStack } from '../../local/stack.js';
import { serveParent } from './child.js';

const stack = await startLocalStack({ port: 0, metrics: 'none', flowWorkerThread: true, engineThread: true, ...(process.env.BENCH_DATA_DIR && { dataDir: process.env.BENCH_DATA_DIR }) });
serveParent(
  { baseUrl: stack.baseUrl, webhookBaseUrl: stack.webhookBaseUrl, token: await stack.token('bench'), env: stack.engines.env, queueUrls: stack.queueUrls },
  () => stack.stop(),
);
