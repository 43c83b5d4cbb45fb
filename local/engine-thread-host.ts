import type { EngineThreadData, EngineThreadMessage } from './engine-thread.js';
import { startTsThread } from './ts-thread.js';

export interface EngineThread {
  dynamodbEndpoint: string;
  sqsEndpoint: string;
  /** Closes both servers (and dynalite's LevelDB), then the thread. */
  stop(): Promise<void>;
}

/** Starts `engine-thread.ts` and waits for its endpoints. */
export async function startEngineThread(data: EngineThreadData): Promise<EngineThread> {
  const worker = startTsThread(new URL('./engine-thread.ts', import.meta.url), data);
  const ready = await new Promise<Extract<EngineThreadMessage, { type: 'ready' }>>((done, fail) => {
    worker.once('error', fail);
    worker.once('exit', (code) => fail(new Error(`the engine thread stopped (exit ${code}) before it was ready`)));
    worker.once('message', (message: EngineThreadMessage) => message.type === 'ready' ? done(message) : fail(new Error(`the engine thread said ${message.type} before it was ready`)));
  });
  worker.removeAllListeners('exit');
  worker.removeAllListeners('error');
  // The engines' crash is the stack's, as it was when they shared its thread: nothing can be stored
  // or queued any more. What was acknowledged is on disk; the next start recovers the rest.
  worker.on('error', (error) => {
    console.error('engine thread failed', error);
    process.exit(1);
  });
  return {
    dynamodbEndpoint: `http://127.0.0.1:${ready.dynamodbPort}`,
    sqsEndpoint: `http://127.0.0.1:${ready.sqsPort}`,
    async stop() {
      await new Promise<void>((done) => {
        worker.once('message', (message: EngineThreadMessage) => message.type === 'stopped' && done());
        worker.once('exit', () => done());
        worker.postMessage({ type: 'stop' } satisfies EngineThreadMessage);
      });
      await worker.terminate();
    },
  };
}
