import type { FlowWorkerThreadData, FlowWorkerThreadMessage } from './flow-worker-thread.js';
import { receiveLineFromThread } from './metric-lines.js';
import { startTsThread } from './ts-thread.js';

export interface BacklogReports {
  sent(messageId: string): void;
  settled(messageIds: readonly string[]): void;
}

export interface FlowWorkerThread {
  /** The thread's Step Functions endpoint: wait-mode deliveries run their flows there too. */
  sfnEndpoint: string;
  /** The thread's Lambda Invoke emulator (`lambda-invoke-server.ts`): the receiver invokes the worker there directly. */
  lambdaEndpoint: string;
  /**
   * Starts polling the flow queue with the flow worker built from `config`; `backlog` hears of
   * every message the thread sends to the queue and of those that no longer wait (`GET /health`).
   */
  start(config: Record<string, string | undefined>, queue: { url: string; arn: string }, concurrency: number, backlog: BacklogReports): void;
  /** Stops polling (runs under way finish), then the thread. */
  stop(): Promise<void>;
}


/** Starts `flow-worker-thread.ts` and waits for its Step Functions endpoint. */
export async function startFlowWorkerThread(data: FlowWorkerThreadData): Promise<FlowWorkerThread> {
  const worker = startTsThread(new URL('./flow-worker-thread.ts', import.meta.url), data);
  const post = (message: FlowWorkerThreadMessage) => worker.postMessage(message);
  let stopped: (() => void) | undefined;
  let backlog: BacklogReports | undefined;
  const { sfnEndpoint, lambdaEndpoint } = await new Promise<{ sfnEndpoint: string; lambdaEndpoint: string }>((done, fail) => {
    worker.once('error', fail);
    worker.once('exit', (code) => fail(new Error(`the flow worker thread stopped (exit ${code}) before it was ready`)));
    worker.on('message', (message: FlowWorkerThreadMessage) => {
      if (message.type === 'sfn') done({ sfnEndpoint: message.endpoint, lambdaEndpoint: message.lambdaEndpoint });
      else if (message.type === 'metric') receiveLineFromThread(message.line);
      else if (message.type === 'stopped') stopped?.();
      else if (message.type === 'queued') backlog?.sent(message.messageId);
      else if (message.type === 'settled') backlog?.settled(message.messageIds);
    });
  });
  worker.removeAllListeners('exit');
  worker.removeAllListeners('error');
  // A fault on the thread is the worker's crash: what it had not finished is on the queue still.
  worker.on('error', (error) => console.error('flow worker thread failed', error));
  return {
    sfnEndpoint,
    lambdaEndpoint,
    start: (config, queue, concurrency, reports) => {
      backlog = reports;
      post({ type: 'start', config, queueUrl: queue.url, queueArn: queue.arn, concurrency });
    },
    async stop() {
      await new Promise<void>((done) => {
        stopped = done;
        worker.once('exit', () => done());
        post({ type: 'stop' });
      });
      await worker.terminate();
    },
  };
}
