import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { CreateTableCommand, DeleteTableCommand, DescribeTableCommand, ResourceNotFoundException, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { WebSocketServer, type WebSocket } from 'ws';
import { MAX_FRAME_BYTES, MAX_MESSAGE_BYTES } from '../functions/domain/listen/protocol.js';
import { signedRequestCheck } from './signed-request-check.js';

/**
 * The local stack's listen endpoint: an emulator of API Gateway's WebSocket API (as
 * `api-gateway.ts` emulates the HTTP API) in front of the very functions the CDK stack deploys
 * (`functions/handlers/listen.ts`), on a port of its own:
 *
 * - an upgrade runs the `$connect` authorizer with the request's headers and query: a thrown
 *   `Unauthorized` refuses it 401, a Deny policy 403, anything else thrown 500; then the `$connect`
 *   route with `requestContext.authorizer` (the policy's context and `principalId`): a status other
 *   than 2xx refuses it with that status and body. API Gateway's own refusal bodies are
 *   `{"message": "Unauthorized"}` / `{"message": "Forbidden"}`; here they are the service's
 *   `{"error", "message"}` shape, which the CLI prints and its tests read.
 * - each text message runs `$default` (concurrently, as API Gateway invokes them); a close runs `$disconnect`.
 * - the management API (`POST`, `GET`, `DELETE /@connections/{id}`) is served on the same port, as
 *   the stage's callback URL: a connection it does not have (never opened, not yet through
 *   `$connect`, or closed) is `410 GoneException`. A request not signed (SigV4, `execute-api`) with
 *   the stack's credentials within five minutes is `403 ForbiddenException`, as IAM refuses it.
 * - API Gateway's limits hold: a frame over 32 KB or a message over 128 KB closes the connection
 *   with 1009 (a client splits a larger message into frames), a post over 128 KB is `413`.
 */
export interface ListenEmulator {
  /** Where listeners connect (`ws://…`). */
  url: string;
  /** The management API's endpoint (the stage's callback URL deployed). */
  callbackUrl: string;
  /** Routes requests to the deployed functions; until then, upgrades are refused 503. */
  serve(functions: WebSocketFunctions): void;
  /**
   * Whether any WebSocket connection is open or opening (its `$connect` under way): while none is,
   * every post to the management API is `410 GoneException`, so the receiver has no one to push to.
   */
  anyConnected(): boolean;
  stop(): Promise<void>;
}

/** A `$connect` authorizer's result, as a Lambda REQUEST authorizer returns it. */
interface AuthorizerResult {
  principalId: string;
  policyDocument: { Statement: { Effect: string }[] };
  context?: Record<string, string | number | boolean>;
}

export interface WebSocketEvent {
  requestContext: {
    routeKey: string;
    eventType: 'CONNECT' | 'MESSAGE' | 'DISCONNECT';
    connectionId: string;
    requestId: string;
    apiId: string;
    stage: string;
    domainName: string;
    connectedAt: number;
    requestTimeEpoch: number;
    messageDirection: 'IN';
    authorizer?: Record<string, string | number | boolean>;
    identity: { sourceIp: string; userAgent?: string };
  };
  headers?: Record<string, string>;
  queryStringParameters?: Record<string, string>;
  body?: string;
  isBase64Encoded: boolean;
}

export interface WebSocketFunctions {
  authorizer(event: { type: 'REQUEST'; methodArn: string; headers: Record<string, string>; queryStringParameters?: Record<string, string>; requestContext: WebSocketEvent['requestContext'] }): Promise<AuthorizerResult>;
  route(event: WebSocketEvent): Promise<{ statusCode: number; headers?: Record<string, string>; body?: string } | undefined>;
}

const API_ID = 'local';
const STAGE = 'live';
/** API Gateway's words for a refusal it makes itself (close reasons are at most 123 bytes). */
const MESSAGE_TOO_BIG = `Message too big: a message is at most ${MAX_MESSAGE_BYTES / 1024} KB, a frame ${MAX_FRAME_BYTES / 1024} KB`;
const REASONS: Record<number, string> = { 400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 410: 'Gone', 500: 'Internal Server Error', 503: 'Service Unavailable' };

function refuse(socket: Duplex, status: number, body: string, contentType = 'application/json'): void {
  socket.end(`HTTP/1.1 ${status} ${REASONS[status] ?? 'Error'}\r\ncontent-type: ${contentType}\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
}

const serviceError = (error: string, message: string) => JSON.stringify({ error, message });

/**
 * Reads the headers of the frames a client sends (RFC 6455 section 5.2) to hold them to API
 * Gateway's frame and message limits, which `ws`'s `maxPayload` (one limit, on the message) cannot
 * say apart. Returns the limit broken, if any.
 */
export class FrameSizeWatch {
  private pending = Buffer.alloc(0);
  private skip = 0;
  private messageBytes = 0;

  feed(chunk: Buffer): 'frame' | 'message' | undefined {
    let data = chunk;
    for (;;) {
      if (this.skip > 0) {
        const taken = Math.min(this.skip, data.length);
        this.skip -= taken;
        data = data.subarray(taken);
      }
      if (data.length === 0) return undefined;
      const buffer = this.pending.length ? Buffer.concat([this.pending, data]) : data;
      this.pending = Buffer.alloc(0);
      if (buffer.length < 2) return this.keep(buffer);
      const fin = (buffer[0]! & 0x80) !== 0;
      const opcode = buffer[0]! & 0x0f;
      let length = buffer[1]! & 0x7f;
      let offset = 2;
      if (length === 126) {
        if (buffer.length < 4) return this.keep(buffer);
        length = buffer.readUInt16BE(2);
        offset = 4;
      } else if (length === 127) {
        if (buffer.length < 10) return this.keep(buffer);
        length = Number(buffer.readBigUInt64BE(2));
        offset = 10;
      }
      if (buffer[1]! & 0x80) offset += 4;
      if (buffer.length < offset) return this.keep(buffer);
      // Control frames (close, ping, pong) are 125 bytes at most by the protocol itself.
      if (opcode < 0x08) {
        if (length > MAX_FRAME_BYTES) return 'frame';
        this.messageBytes += length;
        if (this.messageBytes > MAX_MESSAGE_BYTES) return 'message';
        if (fin) this.messageBytes = 0;
      }
      this.skip = length;
      data = buffer.subarray(offset);
    }
  }

  private keep(buffer: Buffer): undefined {
    this.pending = Buffer.from(buffer);
    return undefined;
  }
}

interface Connection {
  socket: WebSocket;
  connectedAt: number;
  lastActiveAt: number;
  sourceIp: string;
  userAgent?: string;
  context: Record<string, string | number | boolean>;
}

export async function startListenEmulator(options: { port: number; region: string; credentials: { accessKeyId: string; secretAccessKey: string } }): Promise<ListenEmulator> {
  const signedAlike = signedRequestCheck({ region: options.region, service: 'execute-api', credentials: options.credentials });
  let functions: WebSocketFunctions | undefined;
  const connections = new Map<string, Connection>();
  /** Upgrades under way: through the authorizer and `$connect`, not yet open or refused. */
  let opening = 0;
  const server = createServer((req, res) => void manage(req, res));
  // The frame watch enforces API Gateway's limits with a clear reason; `ws`'s own limit is a backstop.
  const wss = new WebSocketServer({ noServer: true, maxPayload: 2 * MAX_MESSAGE_BYTES });
  let url = '';

  const context = (connectionId: string, routeKey: string, eventType: WebSocketEvent['requestContext']['eventType'], connection: Pick<Connection, 'connectedAt' | 'sourceIp' | 'userAgent'>, authorizer?: Connection['context']): WebSocketEvent['requestContext'] => ({
    routeKey,
    eventType,
    connectionId,
    requestId: randomUUID(),
    apiId: API_ID,
    stage: STAGE,
    domainName: new URL(url).host,
    connectedAt: connection.connectedAt,
    requestTimeEpoch: Date.now(),
    messageDirection: 'IN',
    ...(authorizer && { authorizer }),
    identity: { sourceIp: connection.sourceIp, ...(connection.userAgent && { userAgent: connection.userAgent }) },
  });

  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    // Counted from before `$connect` writes the connection's LISTEN items until it is open or refused.
    opening++;
    void (async () => {
      if (!functions) return refuse(socket, 503, serviceError('unavailable', 'the listen endpoint is starting'));
      const target = new URL(req.url ?? '/', 'http://localhost');
      const headers: Record<string, string> = {};
      for (const [name, values] of Object.entries(req.headersDistinct)) if (values) headers[name] = values.join(',');
      const query = target.searchParams.size ? Object.fromEntries(target.searchParams) : undefined;
      // API Gateway's connection ids: 12 random bytes, base64 (so `/`, `+` and `=` need the SDK's path encoding).
      const connectionId = randomBytes(12).toString('base64');
      const started = { connectedAt: Date.now(), sourceIp: req.socket.remoteAddress ?? '127.0.0.1', ...(headers['user-agent'] && { userAgent: headers['user-agent'] }) };
      let authorizer: Connection['context'];
      try {
        const result = await functions.authorizer({
          type: 'REQUEST',
          methodArn: `arn:aws:execute-api:us-east-1:000000000000:${API_ID}/${STAGE}/$connect`,
          headers,
          ...(query && { queryStringParameters: query }),
          requestContext: context(connectionId, '$connect', 'CONNECT', started),
        });
        if (!result.policyDocument.Statement.every((statement) => statement.Effect === 'Allow')) {
          return refuse(socket, 403, serviceError('forbidden', 'this credential may not listen: an API key needs the triggers scope'));
        }
        authorizer = { ...result.context, principalId: result.principalId };
      } catch (error) {
        if ((error as Error).message === 'Unauthorized') return refuse(socket, 401, serviceError('unauthorized', 'a user token (Authorization: Bearer …) or an API key with the triggers scope (X-Api-Key) is required'));
        return refuse(socket, 500, serviceError('internal_error', 'internal error'));
      }
      let connected;
      try {
        connected = await functions.route({ requestContext: context(connectionId, '$connect', 'CONNECT', started, authorizer), headers, ...(query && { queryStringParameters: query }), isBase64Encoded: false });
      } catch {
        return refuse(socket, 500, serviceError('internal_error', 'internal error'));
      }
      const status = connected?.statusCode ?? 200;
      if (status < 200 || status > 299) return refuse(socket, status, connected?.body ?? '', connected?.headers?.['content-type'] ?? 'text/plain');
      wss.handleUpgrade(req, socket, head, (ws: WebSocket) => accept(ws, socket, connectionId, { ...started, context: authorizer }));
    })().finally(() => opening--);
  });

  function accept(ws: WebSocket, socket: Duplex, connectionId: string, connection: Omit<Connection, 'socket' | 'lastActiveAt'>): void {
    const entry: Connection = { ...connection, socket: ws, lastActiveAt: Date.now() };
    connections.set(connectionId, entry);
    let tooBig = false;
    const watch = new FrameSizeWatch();
    const check = (chunk: Buffer) => {
      if (tooBig || !watch.feed(chunk)) return;
      tooBig = true;
      ws.close(1009, MESSAGE_TOO_BIG);
      // A client that does not close in turn is cut off, as API Gateway does.
      setTimeout(() => ws.terminate(), 1000).unref();
    };
    // Before `ws` reads the same bytes: the limit is known from a frame's header, before its payload.
    // (Bytes that came with the upgrade request, `head`, are put back on the socket by `ws` and pass here too.)
    socket.prependListener('data', check);
    ws.on('message', (data, isBinary) => {
      if (tooBig) return;
      entry.lastActiveAt = Date.now();
      const body = (data as Buffer).toString(isBinary ? 'base64' : 'utf8');
      functions?.route({ requestContext: context(connectionId, '$default', 'MESSAGE', entry, entry.context), body, isBase64Encoded: isBinary })
        .catch(() => ws.readyState === ws.OPEN && ws.send(JSON.stringify({ message: 'Internal server error', connectionId, requestId: randomUUID() })));
    });
    let gone = false;
    const disconnect = () => {
      if (gone) return;
      gone = true;
      connections.delete(connectionId);
      functions?.route({ requestContext: context(connectionId, '$disconnect', 'DISCONNECT', entry, entry.context), isBase64Encoded: false }).catch(() => undefined);
    };
    ws.on('close', disconnect);
    ws.on('error', disconnect);
  }

  /** The management API: `/@connections/{id}`, as `connection-poster.ts` (and the SDK's management API client) call it. */
  async function manage(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const reply = (status: number, body?: unknown, errorType?: string) => {
      res.writeHead(status, { 'content-type': 'application/json', ...(errorType && { 'x-amzn-errortype': errorType }) });
      res.end(body === undefined ? undefined : JSON.stringify(body));
    };
    const match = /^\/@connections\/([^/?]+)$/.exec((req.url ?? '/').split('?')[0]!);
    if (!match) {
      res.writeHead(426, { 'content-type': 'application/json' });
      res.end(serviceError('validation_error', 'this endpoint takes WebSocket connections (flowgate listen)'));
      return;
    }
    // Read no more than a post may carry; then, as API Gateway, only a request signed with the
    // stack's credentials (the functions' posts are, `connection-poster.ts`) reaches a connection.
    const chunks: Buffer[] = [];
    let received = 0;
    for await (const chunk of req) {
      received += (chunk as Buffer).length;
      if (received > MAX_MESSAGE_BYTES) {
        res.setHeader('connection', 'close');
        reply(413, { message: `Message too long: at most ${MAX_MESSAGE_BYTES} bytes` }, 'PayloadTooLargeException');
        req.destroy();
        return;
      }
      chunks.push(chunk as Buffer);
    }
    if (!(await signedAlike(req, (req.url ?? '/').split('?')[0]!, Buffer.concat(chunks)))) return reply(403, { message: 'The request signature we calculated does not match the signature you provided.' }, 'ForbiddenException');
    const connectionId = decodeURIComponent(match[1]!);
    const connection = connections.get(connectionId);
    if (!connection || connection.socket.readyState !== connection.socket.OPEN) return reply(410, { message: null }, 'GoneException');
    if (req.method === 'POST') {
      connection.socket.send(Buffer.concat(chunks).toString('utf8'));
      return reply(200);
    }
    if (req.method === 'GET') {
      return reply(200, { connectedAt: new Date(connection.connectedAt).toISOString(), lastActiveAt: new Date(connection.lastActiveAt).toISOString(), identity: { sourceIp: connection.sourceIp, ...(connection.userAgent && { userAgent: connection.userAgent }) } });
    }
    if (req.method === 'DELETE') {
      connection.socket.close(1000);
      return reply(204);
    }
    return reply(405, { message: 'Method not allowed' });
  }

  await new Promise<void>((done, fail) => server.once('error', fail).listen(options.port, '127.0.0.1', done));
  const { port } = server.address() as { port: number };
  url = `ws://127.0.0.1:${port}`;
  return {
    url,
    callbackUrl: `http://127.0.0.1:${port}`,
    serve(routes) {
      functions = routes;
    },
    anyConnected: () => connections.size > 0 || opening > 0,
    /** Connections end without `$disconnect`: the table they are in goes with the stack (a new one is made at start). */
    async stop() {
      functions = undefined;
      for (const client of wss.clients) client.terminate();
      wss.close();
      server.closeAllConnections();
      await new Promise<void>((done) => server.close(() => done()));
    },
  };
}

/**
 * The connections table (`lib/constructs/listen-api.ts`) made empty: the emulator's connections
 * end with the process, so what a data directory kept of the last run's would only be pushed to in vain.
 */
export async function resetConnectionsTable(dynamo: DynamoDBClient, tableName: string): Promise<void> {
  try {
    await dynamo.send(new DeleteTableCommand({ TableName: tableName }));
  } catch (error) {
    if (!(error instanceof ResourceNotFoundException)) throw error;
  }
  // A deleted table is DELETING for a while, on DynamoDB as on dynalite, and CreateTable refuses its
  // name (ResourceInUseException) until it is gone: a restart on a kept data directory waits for that.
  for (;;) {
    try {
      await dynamo.send(new DescribeTableCommand({ TableName: tableName }));
    } catch (error) {
      if (error instanceof ResourceNotFoundException) break;
      throw error;
    }
    await new Promise((done) => setTimeout(done, 5));
  }
  await dynamo.send(new CreateTableCommand({
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST',
    KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }, { AttributeName: 'sk', KeyType: 'RANGE' }],
    AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }, { AttributeName: 'sk', AttributeType: 'S' }],
  }));
  // dynalite answers CreateTable with a table still CREATING (`engines.ts` waits the same way).
  while ((await dynamo.send(new DescribeTableCommand({ TableName: tableName }))).Table?.TableStatus !== 'ACTIVE') await new Promise((done) => setTimeout(done, 5));
}
