import type { Server } from 'node:http';
import dynalite from 'dynalite';
import { createSqsServer } from 'local-aws-sqs';
import { keepIdleConnections } from './idle-connections.js';

/** The engines that hold the local stack's data, serving on free loopback ports. */
export interface DataEngines {
  dynamodbPort: number;
  sqsPort: number;
  /** Closes both servers (dynalite closes its LevelDB with its server). */
  stop(): Promise<void>;
}

const listen = (server: Server) =>
  new Promise<number>((resolve) => keepIdleConnections(server).listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)));
const close = (server: Server) => new Promise<void>((resolve) => server.close(() => resolve()));

/**
 * dynalite (DynamoDB: on `dynamodbPath`'s LevelDB, of which it is then the one owner, synced;
 * in memory when unset) and local-aws-sqs (SQS, in memory), in the calling thread: the local
 * stack's own, or `engine-thread.ts`.
 *
 * local-aws-sqs 2.0.2 counted a ChangeMessageVisibility as one more receive, so a retried message
 * reached its dead-letter queue in half the receives; AWS counts receives only.
 * `patches/local-aws-sqs+2.0.2.patch` (applied by `npm ci` through patch-package) fixes that. The
 * same patch makes a long poll answer once it holds a message, as SQS does: 2.0.2 answered only
 * with MaxNumberOfMessages in hand or at the end of WaitTimeSeconds, so a flow poller that took 3
 * of its 10 held them hidden for up to a second (the flow worker's pollers wait 1 s), and each
 * event of a trigger sending a few a second waited 0.7 s before its flow ran (no upstream issue;
 * LocalStack had the same bug, localstack/localstack#6118). `test/local/sqs-long-poll.test.ts`.
 */
export async function serveDataEngines(dynamodbPath: string | undefined): Promise<DataEngines> {
  const dynamoServer: Server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0, ...(dynamodbPath !== undefined && { path: dynamodbPath, sync: true }) });
  const dynamodbPort = await listen(dynamoServer);
  const sqsServer = keepIdleConnections(await createSqsServer({ port: 0, hostname: '127.0.0.1', emulateQueueCreationLifecycle: false }));
  return {
    dynamodbPort,
    sqsPort: (sqsServer.address() as { port: number }).port,
    stop: async () => void await Promise.all([close(dynamoServer), close(sqsServer)]),
  };
}
