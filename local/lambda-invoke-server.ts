import { randomUUID } from 'node:crypto';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { Context } from 'aws-lambda';
import { signedRequestCheck } from './signed-request-check.js';
import { keepIdleConnections } from './idle-connections.js';

/** What the emulator runs for one function name. */
export interface InvokedFunction {
  handler: (payload: unknown, context: Context) => Promise<unknown>;
  context: () => Context;
  /** Lambda's on-failure destination: called with the destination record (JSON) when the handler throws. */
  onFailure: (record: string) => Promise<void>;
  /** An invocation taken (answered 202), and the same one done (its handler returned, or its failure sent on). */
  onAccepted?: (id: string) => void;
  onSettled?: (id: string) => void;
}

export interface LambdaInvokeEmulator {
  /** Where the receiver's client is pointed (`AWS_ENDPOINT_URL_LAMBDA`). */
  endpoint: string;
  /** Serves `name` (or an ARN ending in `:function:<name>`) from now on; until then, its invocations answer 503. */
  serve(name: string, fn: InvokedFunction): void;
  /** Stops taking invocations (503), waits for those under way, then closes. */
  stop(): Promise<void>;
}

const INVOKE_PATH = /^\/2015-03-31\/functions\/([^/]+)\/invocations$/;
export { MAX_SIGNATURE_SKEW_MS } from './signed-request-check.js';
/** Lambda's limit on an asynchronous invocation's payload. */
const MAX_ASYNC_PAYLOAD_BYTES = 256 * 1024;

/**
 * Lambda's Invoke API for the local stack, asynchronous invocations only (`X-Amz-Invocation-Type:
 * Event`), as the receiver calls the flow worker (`functions/adapters/aws/lambda-event-invoker.ts`):
 * a request signed (SigV4) with the stack's credentials within the last five minutes is answered 202, and the handler runs
 * after the answer, as Lambda runs it from its own internal queue; a throw sends Lambda's
 * destination record (the stack's on-failure destination is the flow queue) with no retry of its
 * own (`MaximumRetryAttempts` 0, as deployed). A wrong signature is 403, an unknown function 404, a
 * synchronous invocation 400 (not emulated).
 *
 * Where it cannot be Lambda: Lambda holds an accepted event durably; here it is in memory until it
 * runs. What makes a crash lose nothing is the execution record, written before the receiver
 * invoked (the local stack's recovery queues every unfinished one again, `recovery.ts`).
 */
export async function startLambdaInvokeEmulator(options: { region: string; credentials: { accessKeyId: string; secretAccessKey: string } }): Promise<LambdaInvokeEmulator> {
  const functions = new Map<string, InvokedFunction>();
  const running = new Set<Promise<void>>();
  let accepting = true;

  const answer = (res: ServerResponse, status: number, type?: string, message?: string) => {
    res.writeHead(status, { 'content-type': 'application/json', 'x-amzn-requestid': randomUUID(), ...(type && { 'x-amzn-errortype': type }) });
    res.end(type ? JSON.stringify({ Type: 'User', message }) : '');
  };

  const signedAlike = signedRequestCheck({ region: options.region, service: 'lambda', credentials: options.credentials });

  const run = (name: string, fn: InvokedFunction, payload: unknown, id: string) => {
    const done = (async () => {
      const context = fn.context();
      try {
        await fn.handler(payload, context);
      } catch (error) {
        // Lambda's record of a failed asynchronous invocation, as its on-failure destination receives it.
        const record = {
          version: '1.0',
          timestamp: new Date().toISOString(),
          requestContext: { requestId: id, functionArn: context.invokedFunctionArn, condition: 'RetriesExhausted', approximateInvokeCount: 1 },
          requestPayload: payload,
          responseContext: { statusCode: 200, executedVersion: '$LATEST', functionError: 'Unhandled' },
          responsePayload: { errorType: (error as Error).name, errorMessage: (error as Error).message },
        };
        await fn.onFailure(JSON.stringify(record)).catch((sendError: unknown) => console.error(`lambda emulator: the destination record of ${name} ${id} was not sent`, sendError));
      } finally {
        fn.onSettled?.(id);
      }
    })();
    running.add(done);
    void done.finally(() => running.delete(done));
  };

  const server: Server = createServer(async (req, res) => {
    try {
      // Read no more than an invocation may carry: any caller of the machine (signed or not, the
      // signature covers the body) could otherwise make the stack hold gigabytes.
      const tooLarge = () => {
        res.setHeader('connection', 'close');
        answer(res, 413, 'RequestTooLargeException', `payload over ${MAX_ASYNC_PAYLOAD_BYTES} bytes`);
        req.destroy();
      };
      if (Number(req.headers['content-length'] ?? 0) > MAX_ASYNC_PAYLOAD_BYTES) return tooLarge();
      const chunks: Buffer[] = [];
      let received = 0;
      for await (const chunk of req) {
        received += (chunk as Buffer).length;
        if (received > MAX_ASYNC_PAYLOAD_BYTES) return tooLarge();
        chunks.push(chunk as Buffer);
      }
      const body = Buffer.concat(chunks);
      const path = new URL(req.url ?? '/', 'http://localhost').pathname;
      const target = INVOKE_PATH.exec(path);
      if (req.method !== 'POST' || !target) return answer(res, 404, 'UnknownOperationException', 'only Invoke is emulated');
      // Over the path as sent, as AWS checks it (the signer encodes its segments once more).
      if (!(await signedAlike(req, path, body))) return answer(res, 403, 'InvalidSignatureException', 'the request signature does not match');
      const name = decodeURIComponent(target[1]!).replace(/^arn:aws:lambda:[^:]+:\d+:function:/, '');
      if (req.headers['x-amz-invocation-type'] !== 'Event') return answer(res, 400, 'InvalidParameterValueException', 'the local stack emulates asynchronous invocations (Event) only');
      const fn = functions.get(name);
      if (!accepting || !fn) return answer(res, fn || !accepting ? 503 : 404, fn || !accepting ? 'ServiceException' : 'ResourceNotFoundException', `function ${name} is not served`);
      let payload: unknown;
      try {
        payload = JSON.parse(body.toString('utf8'));
      } catch {
        return answer(res, 400, 'InvalidRequestContentException', 'the payload is not JSON');
      }
      // A caller that gave up waiting (the receiver's 2 s limit) has queued the event itself: an
      // invocation it never saw taken would run it a second time. Lambda can take an event whose
      // answer is lost on the way, and then both run (at least once, as a queue); here, on one
      // machine, the emulator knows the caller left and takes nothing.
      if (req.socket.destroyed || res.destroyed) return;
      const id = randomUUID();
      fn.onAccepted?.(id);
      answer(res, 202);
      run(name, fn, payload, id);
    } catch {
      if (!res.headersSent) answer(res, 500, 'ServiceException', 'emulator fault');
    }
  });
  await new Promise<void>((done, fail) => keepIdleConnections(server).once('error', fail).listen(0, '127.0.0.1', done));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    serve: (name, fn) => void functions.set(name, fn),
    async stop() {
      accepting = false;
      while (running.size) await Promise.allSettled([...running]);
      server.closeAllConnections();
      await new Promise<void>((done) => server.close(() => done()));
    },
  };
}
