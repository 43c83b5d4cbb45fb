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
import { parentPort, workerData } from 'node:worker_threads';
import { serveDataEngines } from './data-engines.js';

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
const served = await serveDataEngines(data.dynamodbPath);

port.on('message', async (message: EngineThreadMessage) => {
  if (message.type !== 'stop') return;
  await served.stop();
  post({ type: 'stopped' });
});
post({ type: 'ready', dynamodbPort: served.dynamodbPort, sqsPort: served.sqsPort });
