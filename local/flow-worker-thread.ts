/**
 * The flow worker's side of the local stack, on a worker thread of its own: the Step Functions
 * engine (with the flows' functions) and the SQS poller that invokes the flow worker, as Lambda
 * runs the worker apart from the receiver. The main thread keeps the HTTP server and the receiver,
 * and the engines that own data (DynamoDB on LevelDB and SQS on `engine-thread.ts` when the stack
 * has one, else on the main thread; S3 on the main thread); this thread reaches them over HTTP, as
 * the deployed worker reaches AWS, so each LevelDB keeps one owner. A message it does not finish
 * stays on the queue and comes back: a crash of either side loses nothing acknowledged.
 *
 * Protocol (`FlowWorkerThreadMessage`): the thread starts its Step Functions endpoint and says
 * `sfn`; the main thread answers `start` once the handlers' settings are known and recovery has
 * run; `stop` stops polling and answers `stopped`. Metric lines come back as `metric`.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { createAwsClients, destroyAwsClients } from '../functions/adapters/aws/clients.js';
import { sqsClient } from '../functions/adapters/aws/clients/sqs.js';
import { COMPOSERS, type QueueFunction } from '../functions/composition.js';
import { FUNCTIONS, QUEUES } from '../functions/manifest.js';
import { parseSetting, readSettings } from '../functions/settings.js';
import { configureLogging } from '../functions/shared/logger.js';
import { sendMetricsTo } from '../functions/shared/metrics.js';
import { LOCAL_AWS_ENV, LOCAL_FLOW_ARN_PREFIX, LOCAL_FLOW_BATCH_ARN_PREFIX } from './engines.js';
import { settledIds, watchSends } from './flow-backlog.js';
import { LocalFlowTasks } from './flow-tasks.js';
import { lambdaContext } from './lambda-context.js';
import { startLocalStepFunctions } from './sfn-server.js';
import { SqsPoller } from './sqs-poller.js';
import { startLambdaInvokeEmulator } from './lambda-invoke-server.js';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import type { SQSEvent } from 'aws-lambda';

export interface FlowWorkerThreadData {
  flowsDirs: string[];
  /** The flow functions' settings (e.g. NOTIFY_URL), as the stack was given them. */
  taskEnv: Record<string, string | undefined>;
  endpoints: { dynamodb: string; sqs: string; s3: string };
}

export type FlowWorkerThreadMessage =
  | { type: 'sfn'; endpoint: string; lambdaEndpoint: string }
  | { type: 'start'; config: Record<string, string | undefined>; queueUrl: string; queueArn: string; concurrency: number }
  | { type: 'stop' }
  | { type: 'stopped' }
  | { type: 'metric'; line: string }
  | { type: 'queued'; messageId: string }
  | { type: 'settled'; messageIds: string[] };

const port = parentPort!;
const data = workerData as FlowWorkerThreadData;
const post = (message: FlowWorkerThreadMessage) => port.postMessage(message);

const tasks = await LocalFlowTasks.load(data.flowsDirs, data.taskEnv);
const sfn = await startLocalStepFunctions({ flowsDirs: data.flowsDirs, arnPrefix: LOCAL_FLOW_ARN_PREFIX, batchArnPrefix: LOCAL_FLOW_BATCH_ARN_PREFIX, tasks, engines: { dynamodb: data.endpoints.dynamodb, sqs: data.endpoints.sqs } });
const sfnEndpoint = sfn.endpoint;
// Lambda's Invoke API for the worker on this thread; it serves once the worker is built (`start`).
const lambda = await startLambdaInvokeEmulator({ region: LOCAL_AWS_ENV.AWS_REGION, credentials: { accessKeyId: LOCAL_AWS_ENV.AWS_ACCESS_KEY_ID, secretAccessKey: LOCAL_AWS_ENV.AWS_SECRET_ACCESS_KEY } });
let stopWorker: (() => Promise<void>) | undefined;

port.on('message', async (message: FlowWorkerThreadMessage) => {
  if (message.type === 'start') {
    sendMetricsTo((line) => post({ type: 'metric', line }));
    if (message.config.POWERTOOLS_LOG_LEVEL) configureLogging({ logLevel: parseSetting('logLevel', message.config.POWERTOOLS_LOG_LEVEL) });
    const aws = createAwsClients({
      region: LOCAL_AWS_ENV.AWS_REGION,
      credentials: { accessKeyId: LOCAL_AWS_ENV.AWS_ACCESS_KEY_ID, secretAccessKey: LOCAL_AWS_ENV.AWS_SECRET_ACCESS_KEY },
      endpoints: { dynamodb: data.endpoints.dynamodb, sqs: data.endpoints.sqs, s3: data.endpoints.s3, sfn: sfnEndpoint },
    });
    const consumer = QUEUES.flowEvents.consumer;
    const handler = COMPOSERS[consumer](readSettings(consumer, message.config), aws) as QueueFunction;
    // The main thread keeps the flow queue's ledger (`flow-backlog.ts`): what this side sends and settles goes there.
    watchSends(sqsClient(aws), message.queueUrl, (messageId) => post({ type: 'queued', messageId }));
    // A direct invocation waits in the main thread's ledger as a queued message does, under an id of its own.
    lambda.serve(consumer, {
      handler: (payload, context) => handler(payload as SQSEvent, context),
      context: () => lambdaContext(consumer, FUNCTIONS[consumer].timeoutSeconds),
      onFailure: async (record) => { await sqsClient(aws).send(new SendMessageCommand({ QueueUrl: message.queueUrl, MessageBody: record })); },
      onAccepted: (id) => post({ type: 'queued', messageId: `direct:${id}` }),
      onSettled: (id) => post({ type: 'settled', messageIds: [`direct:${id}`] }),
    });
    const poller = new SqsPoller({
      sqs: sqsClient(aws),
      queueUrl: message.queueUrl,
      queueArn: message.queueArn,
      handler,
      context: () => lambdaContext(consumer, FUNCTIONS[consumer].timeoutSeconds),
      batchSize: QUEUES.flowEvents.batchSize,
      batchingWindowMs: QUEUES.flowEvents.batchingWindowSeconds * 1000,
      concurrency: message.concurrency,
      onError: () => undefined,
      onSettled: (deleted, failed) => post({ type: 'settled', messageIds: settledIds(deleted, failed, QUEUES.flowEvents.maxReceiveCount) }),
    });
    stopWorker = async () => {
      await lambda.stop();
      await poller.stop();
      destroyAwsClients(aws);
    };
  } else if (message.type === 'stop') {
    await stopWorker?.();
    if (!stopWorker) await lambda.stop();
    await new Promise<void>((done) => sfn.server.close(() => done()));
    post({ type: 'stopped' });
  }
});
post({ type: 'sfn', endpoint: sfnEndpoint, lambdaEndpoint: lambda.endpoint });
