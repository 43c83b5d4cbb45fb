/**
 * A local HTTPS server that serves key material (certificates, JWKS documents) as a sender would,
 * counting the requests for each path, so tests can tell a cache hit from a fetch. It listens on
 * 127.0.0.1 only, with a self-signed certificate for `localhost` that the test trusts explicitly.
 */
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { KeyFetcher } from '../../functions/domain/webhooks/senders/context.js';
import { selfSignedCertificate } from './certificates.js';

export interface Route {
  status?: number;
  /** The body, or a function of the request's number for this path (1 for the first), for a document that changes. */
  body?: string | ((hit: number) => string);
  headers?: Record<string, string>;
  /** Wait this long before answering (a slow sender). */
  delayMs?: number;
}

export interface KeyServer {
  /** `https://localhost:<port>` */
  origin: string;
  /** The server's certificate, to pass as the fetcher's trusted CA. */
  ca: string;
  routes: Map<string, Route>;
  /** Requests received per path. */
  hits: Map<string, number>;
  close(): Promise<void>;
}

export async function startKeyServer(): Promise<KeyServer> {
  const tls = selfSignedCertificate({ commonName: 'localhost', altNames: ['localhost', '127.0.0.1'] });
  const routes = new Map<string, Route>();
  const hits = new Map<string, number>();
  const server: Server = createServer({ key: tls.privateKey.export({ format: 'pem', type: 'pkcs8' }), cert: tls.pem }, (request, response) => {
    const path = request.url ?? '/';
    const hit = (hits.get(path) ?? 0) + 1;
    hits.set(path, hit);
    const route = routes.get(path) ?? { status: 404, body: 'not found' };
    const answer = () => {
      response.writeHead(route.status ?? 200, route.headers ?? { 'content-type': 'text/plain' });
      response.end(typeof route.body === 'function' ? route.body(hit) : (route.body ?? ''));
    };
    if (route.delayMs) setTimeout(answer, route.delayMs);
    else answer();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `https://localhost:${port}`,
    ca: tls.pem,
    routes,
    hits,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * A fetcher that sends every request to the local server instead of the sender's host, keeping
 * the host as the first path segment: `https://sns.us-east-1.amazonaws.com/x.pem` is served from
 * `<origin>/sns.us-east-1.amazonaws.com/x.pem`. Test-only: it sits behind the primitive's host
 * rule, which has already accepted or refused the real URL.
 */
export function localFetcher(server: KeyServer, inner: KeyFetcher): KeyFetcher & { asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    ...(inner.trustedRoots && { trustedRoots: inner.trustedRoots }),
    fetchText(url) {
      asked.push(url);
      const { host, pathname, search } = new URL(url);
      return inner.fetchText(`${server.origin}/${host}${pathname}${search}`);
    },
    ...(inner.fetchIssuer && {
      fetchIssuer(url: string) {
        asked.push(url);
        const { host, pathname, search } = new URL(url);
        return inner.fetchIssuer!(`${server.origin}/${host}${pathname}${search}`);
      },
    }),
  };
}
