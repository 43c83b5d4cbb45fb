import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import { WebSocketServer, type WebSocket } from 'ws';
import type { Authenticator } from '../functions/domain/authenticator.js';
import { ListenError, type ListenerHub } from '../functions/domain/listen/hub.js';
import { ListenQueryError, MAX_MESSAGE_BYTES, parseAnswer, parseListenQuery } from '../functions/domain/listen/protocol.js';
import { AppError } from '../functions/shared/errors.js';

/**
 * The local stack's listen endpoint: the WebSocket API the CDK stack deploys, served on a port of
 * its own by `ws`. A listener connects with its account's own credentials (a user token in
 * `Authorization`, or an API key with the `triggers` scope in `X-Api-Key`), checked as every
 * gateway route checks them, before the upgrade: a refusal is an HTTP answer in the service's
 * `{"error", "message"}` shape, as API Gateway's `$connect` authorizer refuses.
 */
export interface ListenServer {
  url: string;
  stop(): Promise<void>;
}

/** WebSocket close codes (4000-4999 are the application's): the listener was refused after connecting. */
const CLOSE_INTERNAL = 1011;

function refuse(socket: import('node:stream').Duplex, status: number, error: string, message: string): void {
  const body = JSON.stringify({ error, message });
  const reason = status === 401 ? 'Unauthorized' : status === 403 ? 'Forbidden' : status === 404 ? 'Not Found' : 'Bad Request';
  socket.end(`HTTP/1.1 ${status} ${reason}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
}

export async function startListenServer(options: { port: number; hub: ListenerHub; authenticator: Authenticator; now: () => number }): Promise<ListenServer> {
  const { hub, authenticator } = options;
  const server = createServer((_req, res) => {
    res.writeHead(426, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: 'validation_error', message: 'this endpoint takes WebSocket connections (flowgate listen)' }));
  });
  // API Gateway's message limit, so that what works here works deployed.
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_MESSAGE_BYTES });

  server.on('upgrade', (req: IncomingMessage, socket, head) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://localhost');
      let principal;
      try {
        principal = await authenticator.authenticate({ headers: req.headers as Record<string, string | undefined> }, 'gateway', 'triggers');
      } catch (error) {
        const appError = error instanceof AppError ? error : new AppError('unauthorized');
        return refuse(socket, appError.status, appError.code, appError.publicMessage ?? appError.detail ?? appError.code);
      }
      let query;
      let triggers;
      try {
        query = parseListenQuery(Object.fromEntries(url.searchParams), options.now());
        triggers = await hub.resolve(principal.accountId, query);
      } catch (error) {
        if (error instanceof ListenQueryError) return refuse(socket, 400, 'validation_error', error.message);
        if (error instanceof ListenError) return refuse(socket, error.code === 'not_found' ? 404 : 400, error.code, error.message);
        return refuse(socket, 500, 'internal_error', 'internal error');
      }
      wss.handleUpgrade(req, socket, head, (ws: WebSocket) => {
        const connection = {
          id: randomBytes(12).toString('base64url'),
          accountId: principal.accountId,
          triggers,
          ...(query.events && { events: query.events }),
          send: (text: string) => {
            if (ws.readyState === ws.OPEN) ws.send(text);
          },
        };
        ws.on('message', (data, isBinary) => {
          const text = isBinary ? '' : data.toString('utf8');
          // The deployed endpoint's first message; here `ready` and the replay were sent on connecting.
          if (/^\s*\{\s*"action"\s*:\s*"hello"/.test(text)) return;
          const answer = isBinary ? undefined : parseAnswer(text);
          if (!answer) return connection.send(JSON.stringify({ type: 'error', error: 'validation_error', message: 'expected {"action": "answer", "trigger_id", "execution_id", …}' }));
          void hub.answered(connection, answer).catch(() => undefined);
        });
        ws.on('close', () => hub.remove(connection.id));
        ws.on('error', () => hub.remove(connection.id));
        hub.add(connection, query.since).catch(() => ws.close(CLOSE_INTERNAL, 'replay failed'));
      });
    })();
  });

  await new Promise<void>((done, fail) => server.once('error', fail).listen(options.port, '127.0.0.1', done));
  const { port } = server.address() as { port: number };
  return {
    url: `ws://127.0.0.1:${port}`,
    async stop() {
      hub.close();
      for (const client of wss.clients) client.terminate();
      wss.close();
      server.closeAllConnections();
      await new Promise<void>((done) => server.close(() => done()));
    },
  };
}
