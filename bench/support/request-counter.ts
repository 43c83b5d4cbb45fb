/**
 * Counts the requests an engine sends to S3 and DynamoDB by standing between it and the local
 * engines (s3rver, dynalite): an HTTP proxy per service that forwards each request unchanged (its
 * Host header included, so the SigV4 signature still verifies) and counts it by kind. LanceDB's
 * Rust core speaks to S3 and DynamoDB itself, not through the JavaScript SDK, so the server side is
 * the one place its requests can be seen.
 */
import { createServer, request as forward, type IncomingMessage, type Server } from 'node:http';

/** S3 requests by kind, DynamoDB requests by operation (`X-Amz-Target`). */
export interface RequestCounts {
  s3: { GET: number; HEAD: number; LIST: number; PUT: number; DELETE: number; POST: number };
  dynamodb: Record<string, number>;
}

const emptyCounts = (): RequestCounts => ({ s3: { GET: 0, HEAD: 0, LIST: 0, PUT: 0, DELETE: 0, POST: 0 }, dynamodb: {} });

/** An S3 request's kind as it is priced: a GET of a bucket (a listing) is a LIST; multipart parts and completes are PUT and POST. */
export function s3KindOf(req: Pick<IncomingMessage, 'method' | 'url'>): keyof RequestCounts['s3'] {
  const url = new URL(req.url ?? '/', 'http://proxy');
  // Path-style: /<bucket> or /<bucket>/ is the bucket itself.
  const isBucket = url.pathname.split('/').filter(Boolean).length <= 1;
  switch (req.method) {
    case 'GET': return isBucket || url.searchParams.has('list-type') ? 'LIST' : 'GET';
    case 'HEAD': return 'HEAD';
    case 'PUT': return 'PUT';
    case 'DELETE': return 'DELETE';
    default: return 'POST';
  }
}

export interface CountingProxies {
  /** Endpoints to give the engine in place of s3rver's and dynalite's. */
  s3Endpoint: string;
  dynamodbEndpoint: string;
  /** What was counted since the last `take()`, and counting starts again from zero. */
  take(): RequestCounts;
  stop(): Promise<void>;
}

function proxyTo(target: string, count: (req: IncomingMessage) => void): Server {
  const to = new URL(target);
  return createServer((req, res) => {
    count(req);
    const upstream = forward({ host: to.hostname, port: to.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    req.pipe(upstream);
  });
}

const listen = (server: Server) => new Promise<string>((resolve) => server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as { port: number }).port}`)));

/** Starts a counting proxy in front of each of the two engines. */
export async function startCountingProxies(targets: { s3: string; dynamodb: string }): Promise<CountingProxies> {
  let counts = emptyCounts();
  const s3 = proxyTo(targets.s3, (req) => void counts.s3[s3KindOf(req)]++);
  const dynamodb = proxyTo(targets.dynamodb, (req) => {
    const operation = String(req.headers['x-amz-target'] ?? 'unknown').split('.').at(-1)!;
    counts.dynamodb[operation] = (counts.dynamodb[operation] ?? 0) + 1;
  });
  const [s3Endpoint, dynamodbEndpoint] = await Promise.all([listen(s3), listen(dynamodb)]);
  return {
    s3Endpoint,
    dynamodbEndpoint,
    take() {
      const taken = counts;
      counts = emptyCounts();
      return taken;
    },
    async stop() {
      for (const server of [s3, dynamodb]) server.closeAllConnections();
      await Promise.all([s3, dynamodb].map((server) => new Promise((resolve) => server.close(resolve))));
    },
  };
}

/** Sum of S3 requests of every kind. */
export const s3Total = (counts: RequestCounts) => Object.values(counts.s3).reduce((sum, n) => sum + n, 0);
/** Sum of DynamoDB requests of every operation. */
export const dynamodbTotal = (counts: RequestCounts) => Object.values(counts.dynamodb).reduce((sum, n) => sum + n, 0);
