import type { Clock } from '../functions/domain/clock.js';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { delimiter, join, resolve } from 'node:path';
import { GetQueueAttributesCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, SQSEvent } from 'aws-lambda';
import { generateLocalSigningKey } from '../functions/adapters/local-token-signer.js';
import { createAwsClients, destroyAwsClients, type AwsClients } from '../functions/adapters/aws/clients.js';
import { COMPOSERS, composeLocalSystem, type HttpFunction, type QueueFunction } from '../functions/composition.js';
import { dynamoClient } from '../functions/adapters/aws/clients/dynamo.js';
import { sqsClient } from '../functions/adapters/aws/clients/sqs.js';
import { DEFAULT_ROUTE, FUNCTION_URL_ROUTE_KEY, FUNCTIONS, QUEUES, ROUTES, TABLES, routeKey, type FunctionName, type QueueName } from '../functions/manifest.js';
import { parseSetting, readSettings, SETTINGS } from '../functions/settings.js';
import { DEFAULT_MESSAGE, type ErrorCode } from '../functions/shared/errors.js';
import { configureLogging } from '../functions/shared/logger.js';
import { composeAccounts } from '../functions/handlers/accounts.js';
import { composeWebhook } from '../functions/handlers/webhook.js';
import { composeTriggers } from '../functions/handlers/triggers.js';
import type { KeyFetcher } from '../functions/domain/webhooks/senders/context.js';
import { RouteMatcher } from '../functions/shared/route-match.js';
import { parseCorsOrigins } from '../functions/cors.js';
import { listBatchFlowNames } from '../lib/flow-batch.js';
import { listFlowNames, readFlowDefinition } from '../lib/flow-files.js';
import { apiGatewayPath, toApiGatewayEvent, writeApiGatewayResult } from './api-gateway.js';
import { LocalCors } from './cors.js';
import { pathOf, type RequestLogEntry } from './request-log.js';
import { openDataDir, type DataDir } from './data-dir.js';
import { allowBrowserOrigins, LOCAL_AWS_ENV, startEngines, type Engines } from './engines.js';
import { FlowBacklog, settledIds } from './flow-backlog.js';
import { LocalFlowTasks } from './flow-tasks.js';
import { startFlowWorkerThread, type FlowWorkerThread } from './flow-worker-host.js';
import { asFunction, receiveMetricLines, type MetricLinesTarget, type WrittenLine } from './metric-lines.js';
import type { FilterDatapoint } from '../functions/shared/metric-filters.js';
import { lambdaContext } from './lambda-context.js';
import { recover, type RecoveryReport } from './recovery.js';
import { SqsPoller } from './sqs-poller.js';
import { startLambdaInvokeEmulator, type LambdaInvokeEmulator } from './lambda-invoke-server.js';
import { mintLocalToken } from './token.js';
import { resetConnectionsTable, startListenEmulator, type ListenEmulator } from './listen-server.js';
import { composeListen, composeListenAuthorizer } from '../functions/handlers/listen.js';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { clientOptions } from '../functions/adapters/aws/clients.js';

/** API Gateway HTTP APIs refuse larger payloads. */
const MAX_REQUEST_BYTES = 10 * 1024 * 1024;
/** The local function URL's id, as a function URL event's `apiId` carries it (AWS's are 32 characters). */
const LOCAL_FUNCTION_URL_ID = 'localwebhookreceiverfunctionurl0';
const KEEP_ALIVE_TIMEOUT_MS = 60_000;
/**
 * Poll loops on the flow queue, as Lambda runs several pollers per event source mapping (it starts
 * with five and adds more while messages wait, up to the worker's maximum concurrency, 20 here).
 * Eight keep the worker's thread up with a receiver acknowledging 250-300 events a second: a batch
 * spends most of its time waiting on the engines, not on the CPU (with four, 0.82x of what was
 * acknowledged had its flow run by the end of a 4,000-event load; with eight, 0.95x).
 */
const FLOW_WORKER_POLLERS = 8;
const REPO_ROOT = resolve(import.meta.dirname, '..');
/** The listen endpoint's connections table (deployed: `lib/constructs/listen-api.ts`'s), made empty at each start. */
const LISTEN_CONNECTIONS_TABLE = 'local-listenConnections';
/** The flow worker's ARN as the local receiver invokes it (`lambda-context.ts` gives the same). */
const LOCAL_FLOW_WORKER_ARN = `arn:aws:lambda:${LOCAL_AWS_ENV.AWS_REGION}:000000000000:function:${QUEUES.flowEvents.consumer}`;
const LOCAL_CREDENTIALS = { accessKeyId: LOCAL_AWS_ENV.AWS_ACCESS_KEY_ID, secretAccessKey: LOCAL_AWS_ENV.AWS_SECRET_ACCESS_KEY };

export interface LocalStackOptions {
  /** 0 picks a free port. */
  port?: number;
  /**
   * Where the receiver fetches senders' certificates and key sets (and SNS's SubscribeURL) from:
   * by default over https from the senders' own hosts, as deployed; tests hand in one that serves
   * them locally.
   */
  senderKeys?: KeyFetcher;
  /** HS256 secret of bearer tokens; the data directory's (or one generated) when unset. */
  jwtSecret?: string;
  /**
   * A data directory (`data-dir.ts`) to keep the tables and the secrets a restart needs in, and to
   * recover from when the last run stopped with work unfinished (`recovery.ts`). Unset, everything
   * is in memory and lives as long as the stack, as tests want. `npm start` sets it, opened
   * already (`openDataDir`, so that a directory it cannot use is refused before this module
   * loads): the stack then owns it, and releases it at stop or when it cannot start.
   */
  dataDir?: string | DataDir;
  /** Folders of `<name>.asl.json` flows, separated like PATH (default `flows/`). */
  flowsDir?: string;
  /** Seconds a received message stays hidden; short in tests so redelivery is quick. */
  visibilityTimeoutSeconds?: number;
  /**
   * Settings for the handlers by variable (e.g. `WAIT_TIMEOUT_MS`), as in `functions/settings.ts`,
   * and for flow functions (e.g. `NOTIFY_URL`), as in `flows/functions/settings.json`.
   */
  env?: Record<string, string | undefined>;
  /**
   * Exact origins whose web apps may call the gateway, as context `corsAllowedOrigins` deployed
   * (`CORS_ALLOWED_ORIGINS` for `npm start`); a gateway setting, not a function's. Default none.
   */
  corsAllowedOrigins?: readonly string[];
  /**
   * Runs around every invocation of a function (HTTP routes and queue batches alike), as Lambda
   * does around each; the cost bench meters durations and log bytes through it.
   */
  aroundInvocation?: InvocationWrapper;
  /**
   * The clock of the receiver's, the trigger routes' and the accounts routes' use cases (the
   * handshake window, timestamps recorded, TOTP steps and attempt budgets); `Date.now` by default.
   * A test steps it to reach a time without waiting for it.
   */
  now?: Clock;
  /**
   * Where the functions' metric lines go (`metric-lines.ts`): kept in memory for
   * `metricLines()` by default, written to stdout as Lambda writes them (the cost bench, and
   * `npm start` with `FLOWGATE_METRICS=stdout`), or dropped (`npm start`).
   */
  metrics?: MetricLinesTarget;
  /** Called once per HTTP request the gateway has answered (or whose connection closed first): `npm start` prints a line for each. */
  requestLog?: (entry: RequestLogEntry) => void;
  /**
   * Runs the flow worker and the Step Functions engine on a worker thread of their own
   * (`flow-worker-thread.ts`), off the receiver's event loop, as Lambda runs them apart: `npm start`
   * and the throughput bench do. Unset, they share this thread, and `aroundInvocation` and the
   * `flowWorker` handler's own objects see its invocations (the cost bench, most tests).
   */
  flowWorkerThread?: boolean;
  /** The port of the listen endpoint (`flowgate listen`'s WebSocket server); 0 (default) picks a free one. */
  listenPort?: number;
  /**
   * Serves the receiver's function URL (default true), as the CDK stack deploys one unless context
   * `webhookFunctionUrl` is false: trigger URLs are then on it. False leaves trigger URLs on the
   * API's `/webhooks` route, as a deployment with the context off or behind a custom domain.
   */
  webhookFunctionUrl?: boolean;
  /** The port of the receiver's function URL; 0 (default) picks a free one. */
  webhookPort?: number;
  /**
   * Poll loops on the flow queue (default 8, for the local stack's throughput). The cost bench
   * takes 5, the batches Lambda starts an SQS event source mapping with, which it keeps while the
   * pollers keep the queue empty: how many events share a batch is the rate over the pollers.
   */
  flowWorkerPollers?: number;
  /**
   * Serves `flowgate listen`'s endpoint (default true), as context `listenApi` deploys it: every
   * delivery then costs the receiver a query for listeners. The cost bench turns it off, to
   * measure the stack as deployed by default.
   */
  listenApi?: boolean;
  /**
   * Runs dynalite and local-aws-sqs on a worker thread of their own (`engine-thread.ts`), so
   * serving them takes neither the receiver's event loop nor the flow worker's: `npm start` and the
   * throughput bench do. Unset, they share this thread, which starts quicker (tests).
   */
  engineThread?: boolean;
}

/** Calls `invoke` (one invocation of `fn` with `event`) and returns what it returns. */
export type InvocationWrapper = <T>(fn: FunctionName, event: unknown, invoke: () => Promise<T>) => Promise<T>;
const invokeDirectly: InvocationWrapper = (_fn, _event, invoke) => invoke();

export interface LocalStack {
  baseUrl: string;
  /** The API's webhook route: `<webhookBaseUrl>/<webhook_id>` answers every trigger. */
  webhookBaseUrl: string;
  /** The receiver's function URL (`http://127.0.0.1:<port>/`), where trigger URLs point; empty with `webhookFunctionUrl: false`. */
  webhookFunctionUrl: string;
  /** The listen endpoint (`ws://…`), where `flowgate listen` connects; empty with `listenApi: false`. */
  listenUrl: string;
  jwtSecret: string;
  engines: Engines;
  queueUrls: Record<QueueName, string>;
  /** Where this stack's AWS SDK clients point (its engines): `sqsClient(stack.aws)` is the one its handlers use. */
  aws: AwsClients;
  /** This stack's own handlers, built from its settings, e.g. to call one with a crafted event. */
  handlers: { [F in FunctionName]: F extends (typeof QUEUES)[QueueName]['consumer'] ? QueueFunction : HttpFunction };
  /** The data directory, when the stack has one: its path, whether this start made it (or migrated it), and what was recovered from it. */
  data?: { path: string; created: boolean; migrated?: { from: number; to: number }; recovered: RecoveryReport };
  /** The metric lines written in this process while the stack ran (none when they go to stdout), oldest first. */
  metricLines(): string[];
  /** The same, each with the function that wrote it. */
  writtenMetricLines(): WrittenLine[];
  /** The `Flowgate` metrics the deployed metric filters make of those lines, each line read by its function's filters. */
  metrics(): FilterDatapoint[];
  /** A bearer token for `sub` (its account unless `accountId` is given). */
  token(sub: string, options?: { accountId?: string; expiresInSeconds?: number; claims?: Record<string, unknown> }): Promise<string>;
  stop(): Promise<void>;
}

/** The service's error body, with its code's default words as `toHttpResponse` gives a 4xx. */
const errorBody = (code: ErrorCode) => JSON.stringify(DEFAULT_MESSAGE[code] === undefined ? { error: code } : { error: code, message: DEFAULT_MESSAGE[code] });

const jsonError = (res: ServerResponse, status: number, code: ErrorCode) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(errorBody(code));
};

/** Reports the request once its answer is sent, or its connection closed without one. */
function logWhenClosed(req: IncomingMessage, res: ServerResponse, log: (entry: RequestLogEntry) => void): void {
  const started = performance.now();
  res.once('close', () => {
    try {
      log({ method: req.method ?? '-', path: pathOf(req.url), status: res.writableFinished ? res.statusCode : undefined, ms: performance.now() - started });
    } catch {
      // A log that fails never takes the gateway with it.
    }
  });
}

/** Protocol faults never reach a handler: answered in the service's JSON shape, as AWS answers in its own. */
function answerProtocolFaults(server: Server): void {
  server.on('clientError', (error: NodeJS.ErrnoException, socket) => {
    if (!socket.writable) return socket.destroy();
    const [status, code] = error.code === 'HPE_HEADER_OVERFLOW' ? [431, 'headers_too_large' as const] : [400, 'validation_error' as const];
    const body = errorBody(code);
    socket.end(`HTTP/1.1 ${status} ${status === 431 ? 'Request Header Fields Too Large' : 'Bad Request'}\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n${body}`);
  });
  // Node hands CONNECT to a 'connect' listener and, without one, drops the connection unanswered.
  // No route takes CONNECT, so answer it as any other unrouted method: 405 in the service's shape.
  server.on('connect', (_req: IncomingMessage, socket) => {
    const body = errorBody('method_not_allowed');
    socket.end(`HTTP/1.1 405 Method Not Allowed\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n${body}`);
  });
}

async function readBody(req: IncomingMessage): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_REQUEST_BYTES) return undefined;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/**
 * Runs the service on this machine: embedded engines, the same handlers the CDK stack deploys,
 * an HTTP server in API Gateway's place, and pollers in place of the SQS event source mappings.
 * Handlers are built from this stack's own settings and clients (`functions/composition.ts`),
 * never from or into `process.env`, so several stacks can run side by side in one process.
 */
export async function startLocalStack(options: LocalStackOptions = {}): Promise<LocalStack> {
  const outer = options.aroundInvocation ?? invokeDirectly;
  // Each invocation's metric lines are its function's, as deployed they go to its log group (and its
  // filters). Only lines kept in memory are read by function (`metrics()`): the attribution runs each
  // invocation in an AsyncLocalStorage, which on Node.js 20 hooks every promise of the process, so a
  // stack whose lines go to stdout or nowhere (`npm start`, the benches) does without it.
  const keepsLines = (options.metrics ?? 'memory') === 'memory';
  const around: InvocationWrapper = keepsLines ? (fn, event, invoke) => outer(fn, event, () => asFunction(fn, invoke)) : outer;
  const corsOrigins = parseCorsOrigins(options.corsAllowedOrigins, 'corsAllowedOrigins');
  const cors = new LocalCors(corsOrigins);
  const flowsDirs = (options.flowsDir ?? resolve(REPO_ROOT, 'flows')).split(delimiter).map((dir) => resolve(dir));
  const flowNames = listFlowNames(flowsDirs);
  const visibilityTimeoutSeconds = options.visibilityTimeoutSeconds ?? 30;
  const inThread = options.flowWorkerThread ?? false;
  // Flow functions run with this stack's settings (e.g. NOTIFY_URL), not process.env's: here, or on the flow worker thread.
  const tasks = inThread ? LocalFlowTasks.none() : await LocalFlowTasks.load(flowsDirs, options.env ?? {});
  const data: DataDir | undefined = typeof options.dataDir === 'string' ? await openDataDir(options.dataDir) : options.dataDir;
  const jwtSecret = options.jwtSecret ?? data?.secrets.jwtSecret ?? randomBytes(32).toString('base64url');
  let engines: Engines;
  let flowWorker: FlowWorkerThread | undefined;
  /** Lambda's Invoke API for the flow worker, on the thread that runs it (`lambda-invoke-server.ts`). */
  let lambda: LambdaInvokeEmulator | undefined;
  try {
    const started = await startEngines({ flowsDirs, visibilityTimeoutSeconds, tasks, dynamodbPath: data?.dynamodbPath, objectsPath: data?.objectsPath, dataDir: data?.path, stepFunctions: !inThread, engineThread: options.engineThread ?? false });
    engines = started;
    if (inThread) {
      flowWorker = await startFlowWorkerThread({
        flowsDirs,
        taskEnv: options.env ?? {},
        endpoints: { dynamodb: started.env.AWS_ENDPOINT_URL_DYNAMODB!, sqs: started.env.AWS_ENDPOINT_URL_SQS!, s3: started.env.AWS_ENDPOINT_URL_S3! },
      }).catch(async (error: unknown) => {
        await started.stop();
        throw error;
      });
      engines = { ...started, env: { ...started.env, AWS_ENDPOINT_URL_SFN: flowWorker.sfnEndpoint, AWS_ENDPOINT_URL_LAMBDA: flowWorker.lambdaEndpoint } };
    } else {
      lambda = await startLambdaInvokeEmulator({ region: LOCAL_AWS_ENV.AWS_REGION, credentials: LOCAL_CREDENTIALS }).catch(async (error: unknown) => {
        await started.stop();
        throw error;
      });
      engines = { ...started, env: { ...started.env, AWS_ENDPOINT_URL_LAMBDA: lambda.endpoint } };
    }
  } catch (error) {
    await data?.release();
    throw error;
  }

  // Node's own refusal of an HTTP/1.1 request without Host is an empty 400 (not the service's
  // shape); it also happens when a request has over ~1,000 headers, past which Node drops the rest.
  // The request handler answers that case itself.
  // Idle connections stay open a minute (an ALB's default idle timeout): with Node's 5 s default, a
  // client reusing a connection just as the server times it out gets ECONNRESET, which a busy
  // machine makes likely (the client's own timer is the server's hint less 1 s).
  const server: Server = createServer({ requireHostHeader: false });
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  // The handlers can only be built once the port is known (the webhook base URL holds it), so the
  // server listens before it can serve. Until then every request is answered 503 at once: a client
  // polling /health is told to retry rather than left hanging until its own timeout.
  let listen: ListenEmulator | undefined;
  let serve = (req: IncomingMessage, res: ServerResponse): void => {
    req.resume();
    res.setHeader('retry-after', '1');
    jsonError(res, 503, 'unavailable');
  };
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    if (options.requestLog) logWhenClosed(req, res, options.requestLog);
    serve(req, res);
  });
  // The receiver's function URL: a host of its own, every path and method to the receiver.
  const functionUrlServer = options.webhookFunctionUrl === false ? undefined : createServer({ requireHostHeader: false });
  let serveFunctionUrl = serve;
  if (functionUrlServer) {
    functionUrlServer.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
    functionUrlServer.on('request', (req: IncomingMessage, res: ServerResponse) => {
      if (options.requestLog) logWhenClosed(req, res, options.requestLog);
      serveFunctionUrl(req, res);
    });
  }
  try {
    await new Promise<void>((done, fail) => server.once('error', fail).listen(options.port ?? 3000, '127.0.0.1', done));
    if (functionUrlServer) await new Promise<void>((done, fail) => functionUrlServer.once('error', fail).listen(options.webhookPort ?? 0, '127.0.0.1', done));
    // The console's presigned uploads come from the stack's own origin (either name of loopback).
    const { port } = server.address() as { port: number };
    await allowBrowserOrigins(engines.env.AWS_ENDPOINT_URL_S3!, [`http://127.0.0.1:${port}`, `http://localhost:${port}`, ...corsOrigins]);
    // flowgate listen's endpoint: API Gateway's WebSocket API emulated, in front of the deployed listen functions.
    if (options.listenApi ?? true) listen = await startListenEmulator({ port: options.listenPort ?? 0, region: LOCAL_AWS_ENV.AWS_REGION, credentials: LOCAL_CREDENTIALS });
  } catch (error) {
    if (server.listening) server.close();
    if (functionUrlServer?.listening) functionUrlServer.close();
    await listen?.stop();
    await flowWorker?.stop();
    await lambda?.stop();
    await engines.stop();
    await data?.release();
    throw error;
  }
  const baseUrl = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  // Search indexes are LanceDB tables in the data directory; without one, in a directory of this stack's own, removed at stop.
  const searchScratch = data ? undefined : await mkdtemp(join(tmpdir(), 'flowgate-search-'));
  const webhookBaseUrl = `${baseUrl}/webhooks`;
  // As AWS writes a function URL: with its final slash. The local one has no id in its host to fill in.
  const webhookFunctionUrl = functionUrlServer ? `http://127.0.0.1:${(functionUrlServer.address() as { port: number }).port}/` : '';

  const config: Record<string, string | undefined> = {
    ...engines.env,
    [SETTINGS.authJwtSecret.env]: jwtSecret,
    [SETTINGS.flowNames.env]: flowNames.join(','),
    // As the CDK stack tells the deployed worker; read once, where the engine reads a flow on each run.
    [SETTINGS.flowBatchNames.env]: listBatchFlowNames(flowsDirs).join(','),
    [SETTINGS.webhookBaseUrl.env]: webhookBaseUrl,
    ...(webhookFunctionUrl && { [SETTINGS.webhookFunctionUrl.env]: webhookFunctionUrl, [SETTINGS.webhookFunctionUrlPattern.env]: webhookFunctionUrl.slice(0, -1) }),
    // Kept in the data directory: secrets sealed before a restart must open after it.
    [SETTINGS.localSecretsKey.env]: data?.secrets.localSecretsKey ?? randomBytes(32).toString('base64'),
    [SETTINGS.localMfaSigningKeys.env]: data?.secrets.mfaSigningKey ?? generateLocalSigningKey(),
    [SETTINGS.mfaTokenIssuer.env]: baseUrl,
    [SETTINGS.searchDataUri.env]: data?.searchPath ?? searchScratch,
    // The receiver invokes the worker directly for quiet triggers, at the Invoke emulator.
    [SETTINGS.flowWorkerFunction.env]: LOCAL_FLOW_WORKER_ARN,
    ...(listen && { [SETTINGS.listenConnectionsTable.env]: LISTEN_CONNECTIONS_TABLE, [SETTINGS.listenCallbackUrl.env]: listen.callbackUrl }),
    // An unset option leaves the stack's own value (or the handler's default) in place.
    ...Object.fromEntries(Object.entries(options.env ?? {}).filter(([, value]) => value !== undefined && value !== '')),
  };
  const aws = createAwsClients({
    region: LOCAL_AWS_ENV.AWS_REGION,
    credentials: LOCAL_CREDENTIALS,
    endpoints: { dynamodb: engines.env.AWS_ENDPOINT_URL_DYNAMODB, sqs: engines.env.AWS_ENDPOINT_URL_SQS, sfn: engines.env.AWS_ENDPOINT_URL_SFN, s3: engines.env.AWS_ENDPOINT_URL_S3, lambda: engines.env.AWS_ENDPOINT_URL_LAMBDA },
  });
  // The logger is one per process; a level given to this stack applies to it.
  if (config.POWERTOOLS_LOG_LEVEL) configureLogging({ logLevel: parseSetting('logLevel', config.POWERTOOLS_LOG_LEVEL) });
  // Before anything sends to the flow queue (the recovery below included): `GET /health` reads it.
  const backlog = new FlowBacklog();
  backlog.watch(sqsClient(aws), engines.queueUrls.flowEvents);
  // The listen functions read the triggers function's settings, as deployed (`lib/service-stack.ts`).
  const listenSettings = readSettings('triggers', config);
  if (listen) {
    const connectionsDynamo = new DynamoDBClient(clientOptions(aws, 'dynamodb'));
    await resetConnectionsTable(connectionsDynamo, LISTEN_CONNECTIONS_TABLE).finally(() => connectionsDynamo.destroy());
  }
  const handlers = Object.fromEntries(
    (Object.keys(FUNCTIONS) as FunctionName[]).map((name) => [name, name === 'webhook'
      // A delivery while no listener is connected skips the connections Query (`anyConnected`).
      ? composeWebhook(readSettings(name, config), aws, options.senderKeys, options.now, listen && (() => listen!.anyConnected()))
      : name === 'system' ? composeLocalSystem(readSettings(name, config), async () => backlog.read())
      // Read from the folders on each request, as the engine reads a flow on each run: an edited flow needs no restart.
      : name === 'triggers' ? composeTriggers(readSettings(name, config), aws, async (flow) => {
        const text = await readFlowDefinition(flowsDirs, flow);
        return text === undefined ? undefined : JSON.parse(text) as Record<string, unknown>;
      }, options.now)
        : name === 'accounts' ? composeAccounts(readSettings(name, config), aws, options.now)
        : COMPOSERS[name](readSettings(name, config), aws)]),
  ) as LocalStack['handlers'];
  const httpHandlers = handlers as unknown as Record<FunctionName, HttpFunction>;

  // Before anything is served or polled, so that what it finds unfinished is the last run's alone.
  const recovered = data && await recover({
    dynamo: dynamoClient(aws),
    sqs: sqsClient(aws),
    tables: { executions: config[TABLES.executions.env]!, triggers: config[TABLES.triggers.env]!, kv: config[TABLES.kv.env]! },
    queues: { flowEvents: engines.queueUrls.flowEvents, kvSweep: engines.queueUrls.kvSweep },
    now: Date.now,
  }).catch(async (error: unknown) => {
    server.close();
    functionUrlServer?.close();
    await listen?.stop();
    destroyAwsClients(aws);
    await flowWorker?.stop();
    await lambda?.stop();
    await engines.stop();
    await data.release();
    throw error;
  });

  listen?.serve({ authorizer: composeListenAuthorizer(listenSettings, aws), route: composeListen(listenSettings, aws) });

  const matcher = new RouteMatcher(ROUTES);
  /**
   * One request through a front door to a function: the body read (413 past the limit), the event
   * `target` makes of it (undefined: 400, as the door itself refuses it), the function's answer
   * written back, and a crashed invocation a 500, as AWS answers one, in the service's error shape.
   */
  const answer = async (req: IncomingMessage, res: ServerResponse, target: (body: Buffer) => { fn: FunctionName; event: APIGatewayProxyEventV2 } | undefined, decorate = (result: APIGatewayProxyStructuredResultV2) => result) => {
    try {
      const body = await readBody(req);
      if (!body) return jsonError(res, 413, 'payload_too_large');
      const to = target(body);
      if (!to) return jsonError(res, 400, 'validation_error');
      const result = await around(to.fn, to.event, () => httpHandlers[to.fn](to.event, lambdaContext(to.fn, FUNCTIONS[to.fn].timeoutSeconds)));
      writeApiGatewayResult(res, typeof result === 'object' ? decorate(result) : result);
    } catch {
      if (!res.headersSent) jsonError(res, 500, 'internal_error');
      else res.destroy();
    }
  };
  serve = (req: IncomingMessage, res: ServerResponse) => answer(req, res, (body) => {
    if (req.headers.host === undefined && req.httpVersion === '1.1') return undefined;
    const path = apiGatewayPath(req.url ?? '/');
    // API Gateway itself answers 400 to a path it cannot decode twice; keep the service's error shape.
    if (!path) return undefined;
    const lookup = path.routedPath === undefined ? { kind: 'not_found' as const } : matcher.lookup(req.method ?? 'GET', path.routedPath);
    const route = lookup.kind === 'matched'
      ? { routeKey: routeKey(lookup.match.route), pathParameters: lookup.match.pathParameters, fn: lookup.match.route.fn }
      : { routeKey: DEFAULT_ROUTE.routeKey, fn: DEFAULT_ROUTE.fn };
    return { fn: route.fn, event: toApiGatewayEvent(req, body, route, path.rawPath) };
  }, (result) => cors.decorate(req, result));
  // A function URL hands every request to its function as a payload 2.0 event of route `$default`
  // and the URL's id as `apiId`; no CORS of its own is configured, and the receiver answers
  // preflights itself.
  serveFunctionUrl = (req: IncomingMessage, res: ServerResponse) => answer(req, res, (body) => ({
    fn: 'webhook',
    event: toApiGatewayEvent(req, body, { routeKey: FUNCTION_URL_ROUTE_KEY }, (req.url ?? '/').split('?')[0]!, { apiId: LOCAL_FUNCTION_URL_ID, accountId: 'anonymous' }),
  }));
  for (const door of [server, functionUrlServer]) if (door) answerProtocolFaults(door);

  const sqs = new SQSClient({ region: LOCAL_AWS_ENV.AWS_REGION, credentials: LOCAL_CREDENTIALS, endpoint: engines.env.AWS_ENDPOINT_URL_SQS });
  const metricLines = receiveMetricLines(options.metrics ?? 'memory');
  const pollers: SqsPoller[] = [];
  for (const [name, queue] of Object.entries(QUEUES) as [QueueName, (typeof QUEUES)[QueueName]][]) {
    const queueUrl = engines.queueUrls[name];
    const queueArn = (await sqs.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }))).Attributes!.QueueArn!;
    if (lambda && name === 'flowEvents') {
      // Lambda's asynchronous invocations of the worker: a direct delivery waits in the backlog as a queued one does.
      lambda.serve(queue.consumer, {
        handler: (payload, context) => around(queue.consumer, payload, () => (handlers[queue.consumer] as QueueFunction)(payload as SQSEvent, context)),
        context: () => lambdaContext(queue.consumer, FUNCTIONS[queue.consumer].timeoutSeconds),
        onFailure: async (record) => { await sqsClient(aws).send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: record })); },
        onAccepted: (id) => backlog.sent(`direct:${id}`),
        onSettled: (id) => backlog.done(`direct:${id}`),
      });
    }
    if (flowWorker && name === 'flowEvents') {
      flowWorker.start(config, { url: queueUrl, arn: queueArn }, options.flowWorkerPollers ?? FLOW_WORKER_POLLERS, { sent: (id) => backlog.sent(id), settled: (ids) => ids.forEach((id) => backlog.done(id)) });
      continue;
    }
    pollers.push(new SqsPoller({
      sqs,
      queueUrl,
      queueArn,
      handler: (event, context) => around(queue.consumer, event, () => (handlers[queue.consumer] as QueueFunction)(event, context)),
      context: () => lambdaContext(queue.consumer, FUNCTIONS[queue.consumer].timeoutSeconds),
      batchSize: queue.batchSize,
      batchingWindowMs: ('batchingWindowSeconds' in queue ? queue.batchingWindowSeconds : 0) * 1000,
      concurrency: name === 'flowEvents' ? options.flowWorkerPollers ?? FLOW_WORKER_POLLERS : 1,
      onError: () => undefined,
      // Done, or failed for the last time (the queue moves it to its dead-letter queue): no longer waiting.
      ...(name === 'flowEvents' && {
        onSettled: (deleted, failed) => settledIds(deleted, failed, queue.maxReceiveCount).forEach((id) => backlog.done(id)),
      }),
    }));
  }

  return {
    baseUrl,
    webhookBaseUrl,
    webhookFunctionUrl,
    listenUrl: listen?.url ?? '',
    jwtSecret,
    engines,
    queueUrls: engines.queueUrls,
    handlers,
    aws,
    ...(data && { data: { path: data.path, created: data.created, ...(data.migrated && { migrated: data.migrated }), recovered: recovered! } }),
    metricLines: () => metricLines.lines(),
    writtenMetricLines: () => metricLines.written(),
    metrics: () => metricLines.metrics(),
    token: (sub, tokenOptions) => mintLocalToken({ secret: jwtSecret, sub, ...tokenOptions }),
    async stop() {
      // Direct invocations under way finish first: a failed one's retry goes to the queue.
      await lambda?.stop();
      await Promise.all([...pollers.map((p) => p.stop()), flowWorker?.stop()]);
      metricLines.stop();
      await listen?.stop();
      server.closeAllConnections();
      functionUrlServer?.closeAllConnections();
      await Promise.all([server, functionUrlServer].map((open) => open && new Promise<void>((done) => open.close(() => done()))));
      sqs.destroy();
      destroyAwsClients(aws);
      await engines.stop();
      await data?.release();
      // A search maintenance job cut short may have left a file or two: retried, and a leftover is only a temporary directory.
      if (searchScratch) await rm(searchScratch, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 }).catch(() => undefined);
    },
  };
}
