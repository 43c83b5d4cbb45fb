/**
 * The engines that own the local stack's data, on a worker thread of their own: dynalite
 * (DynamoDB, on the data directory's LevelDB, which this thread alone opens) and local-aws-sqs
 * (SQS, in memory). The receiver and the flow worker reach them over their HTTP endpoints, as
 * deployed handlers reach AWS, so serving them no longer takes the receiver's event loop.
 *
 * Protocol (`EngineThreadMessage`): the thread starts both servers and says `ready` with their
 * ports; `stop` closes them (dynalite closes its LevelDB with its server) and answers `stopped`.
 * A kill of the process ends the thread with it: dynalite answers a write only once it is
 * fsync'd, so what was acknowledged is on disk, as when the engines shared the main thread.
 */
import type { Server } from 'node:http';
import { parentPort, workerData } from 'node:worker_threads';
import dynalite from 'dynalite';
import { createSqsServer } from 'local-aws-sqs';
import { keepIdleConnections } from './idle-connections.js';

export interface EngineThreadData {
  /** dynalite's LevelDB folder; in memory when unset. */
  dynamodbPath?: string;
}

export type EngineThreadMessage =
  | { type: 'ready'; dynamodbPort: number; sqsPort: number }
  | { type: 'stop' }
  | { type: 'stopped' };

const port = parentPort!;
const data = workerData as EngineThreadData;
const post = (message: EngineThreadMessage) => port.postMessage(message);
const listen = (server: Server) =>
  new Promise<number>((resolve) => keepIdleConnections(server).listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)));
const close = (server: Server) => new Promise<void>((resolve) => server.close(() => resolve()));

const dynamoServer: Server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0, ...(data.dynamodbPath !== undefined && { path: data.dynamodbPath, sync: true }) });
const dynamodbPort = await listen(dynamoServer);
const sqsServer = keepIdleConnections(await createSqsServer({ port: 0, hostname: '127.0.0.1', emulateQueueCreationLifecycle: false }));

port.on('message', async (message: EngineThreadMessage) => {
  if (message.type !== 'stop') return;
  await Promise.all([close(dynamoServer), close(sqsServer as Server)]);
  post({ type: 'stopped' });
});
post({ type: 'ready', dynamodbPort, sqsPort: (sqsServer.address() as { port: number }).port });
