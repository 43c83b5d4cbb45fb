import type { Server } from 'node:http';

/**
 * Keeps a local engine's idle client connections open until the client or the engine's stop
 * closes them, as AWS's endpoints keep them far longer than any pause of a warm function.
 *
 * Node's HTTP server closes a connection after 5 s idle (`keepAliveTimeout`). A client whose event
 * loop was held past that (a loaded machine, a long synchronous step) takes those sockets from its
 * pool before it has seen them close, and every request it sends on one fails with ECONNRESET
 * (nodejs/node#47130, open). The SDK retries such errors, but each retry spends 14 of the client's
 * 500 retry tokens, so a burst of them (a pool of 50 sockets) empties the quota and the next call
 * fails unretried: a stream fetch answered 500 where AWS would have answered.
 *
 * `close()` closes the idle connections at once, but a connection whose request is under way
 * (an SQS long poll) becomes idle only after it, and with no timeout it would stay open and hold
 * the close for ever; so a closing server ends each connection as its response ends.
 * `test/local/idle-connections.test.ts` holds a client's event loop for 6 s, and closes a server
 * under a request.
 */
export function keepIdleConnections<S extends Server>(server: S): S {
  // 0: no keep-alive timeout; idle connections stay open until closed.
  server.keepAliveTimeout = 0;
  const close = server.close.bind(server);
  server.close = (callback?: (error?: Error) => void) => {
    // Read as each response ends: the connections still serving one close right after it.
    server.keepAliveTimeout = 1;
    close(callback);
    return server;
  };
  return server;
}
