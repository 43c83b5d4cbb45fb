import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { APIGatewayProxyEventV2, APIGatewayProxyResultV2 } from 'aws-lambda';

/** Media types API Gateway passes as text; every other body arrives base64-encoded. */
const TEXT_MEDIA_TYPES = /^(text\/|application\/(json|x-www-form-urlencoded|xml|javascript)|[^;]*\+(json|xml))/i;
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

function textOrBase64(body: Buffer, contentType: string | undefined): { body?: string; isBase64Encoded: boolean } {
  if (body.length === 0) return { isBase64Encoded: false };
  if (contentType && TEXT_MEDIA_TYPES.test(contentType)) {
    try {
      return { body: strictUtf8.decode(body), isBase64Encoded: false };
    } catch {
      // Bytes that are not UTF-8 would be altered by a text round trip; keep them exact.
    }
  }
  return { body: body.toString('base64'), isBase64Encoded: true };
}

/** Where an HTTP API sends a request, by its path: the path it routes on and the `rawPath` it hands over. */
export interface ApiGatewayPath {
  /** The path routes are matched against; `undefined` when it is not percent-encoded UTF-8 (no route matches). */
  routedPath: string | undefined;
  /** `rawPath` and `requestContext.http.path` of the event: the routed path decoded once more. */
  rawPath: string;
}

/**
 * What an API Gateway HTTP API (payload format 2.0) makes of the path of a request target, or
 * `undefined` when it refuses the request with 400 before any integration runs:
 *
 * 1. It percent-decodes the path once and routes on that, so `%2F` separates segments as `/` does
 *    and a `?` that decoding produced ends the path (the rest is dropped, not added to the query).
 * 2. `rawPath` (and every path parameter) is the routed path decoded once more: `%2541` arrives as
 *    `A`, and a `%` the first decoding left without two hex digits after it is a 400.
 *
 * AWS documents only that "API Gateway decodes URL-encoded request parameters before passing them
 * to your backend integration" (https://docs.aws.amazon.com/apigateway/latest/developerguide/http-api-develop-routes.html).
 * The rest comes from live captures of an HTTP API in July 2026, sent path → `rawPath`:
 * `%20`→` `, `%23`→`#`, `%2F`→`/`, `%3Fvalue`→(cut), `%25done`→400, `%252F`→`/`, `%253F`→`?`, `%2525`→`%`
 * (https://github.com/hotsock/voker/blob/a1c00bf491e026f81917cc2edfdaca03eabc7518/vokerhttp/testdata/ingress-paths.json, relied on by
 * https://github.com/middleapi/standard-server/pull/93), agreeing with https://github.com/fastify/aws-lambda-fastify/issues/169
 * (`/a%2Fb` → `rawPath` `/a/b`) and https://github.com/honojs/hono/issues/2156 (`%2F`, `%23` decoded),
 * and with a Stack Overflow report that on route `/{example}/thing` `a%2Fb` is 404 while `a%252Fb`
 * reaches the function as `a/b` (mirrored at https://prodissertation.co.uk/post/how-to-encode-parameters-for-aws-api-gateway-http-api).
 * Whether path parameters get the second decoding is less certain than `rawPath`; handlers that
 * care read greedy parameters from `rawPath` (see `greedyPathParam`).
 */
export function apiGatewayPath(requestTarget: string): ApiGatewayPath | undefined {
  const asSent = requestTarget.split('?', 1)[0]!;
  let decodedOnce: string;
  try {
    decodedOnce = decodeURIComponent(asSent);
  } catch {
    // No capture covers a path that is not percent-encoded UTF-8 to begin with; no route takes it.
    return { routedPath: undefined, rawPath: asSent };
  }
  const routedPath = decodedOnce.split('?', 1)[0]!;
  try {
    return { routedPath, rawPath: decodeURIComponent(routedPath) };
  } catch {
    return undefined;
  }
}

/**
 * `requestContext.http.sourceIp` as API Gateway gives it: the address of the connection, IPv4 in
 * dotted form. A Node server listening on an IPv6 socket reports IPv4 clients as IPv4-mapped IPv6
 * (`::ffff:127.0.0.1`), which the gateway never sends; this is the one place that turns them back.
 * (The local server listens on 127.0.0.1, where Node reports plain IPv4 already.)
 */
export function apiGatewaySourceIp(remoteAddress: string | undefined): string {
  if (remoteAddress === undefined) return '127.0.0.1';
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(remoteAddress);
  return mapped ? mapped[1]! : remoteAddress;
}

/**
 * The payload 2.0 event API Gateway HTTP APIs send to Lambda: lower-case header names with
 * repeated headers joined by commas, repeated query parameters joined by commas, cookies apart,
 * `x-forwarded-*` headers added (a client's own `X-Forwarded-For` kept, the connection's address
 * appended), `sourceIp` from the connection alone, and non-text bodies base64-encoded. `rawPath`
 * is decoded as {@link apiGatewayPath} says; `rawQueryString` stays as sent.
 */
export function toApiGatewayEvent(
  req: IncomingMessage,
  body: Buffer,
  route: { routeKey: string; pathParameters?: Record<string, string> },
  rawPath: string,
  /** Who made the event: the HTTP API (default), or a function URL, whose `apiId` is its URL's id. */
  source: { apiId: string; accountId: string } = { apiId: 'local', accountId: '000000000000' },
): APIGatewayProxyEventV2 {
  const url = req.url ?? '/';
  const queryAt = url.indexOf('?');
  const rawQueryString = queryAt === -1 ? '' : url.slice(queryAt + 1);
  const headers: Record<string, string> = {};
  for (const [name, values] of Object.entries(req.headersDistinct)) {
    if (name !== 'cookie' && values) headers[name] = values.join(',');
  }
  const sourceIp = apiGatewaySourceIp(req.socket.remoteAddress);
  headers['x-forwarded-for'] = headers['x-forwarded-for'] ? `${headers['x-forwarded-for']}, ${sourceIp}` : sourceIp;
  headers['x-forwarded-proto'] = 'http';
  headers['x-forwarded-port'] = String(req.socket.localPort ?? '');
  const cookies = req.headersDistinct.cookie?.flatMap((c) => c.split(';').map((part) => part.trim())).filter(Boolean);

  let queryStringParameters: Record<string, string> | undefined;
  if (rawQueryString) {
    queryStringParameters = {};
    for (const [name, value] of new URLSearchParams(rawQueryString)) {
      queryStringParameters[name] = name in queryStringParameters ? `${queryStringParameters[name]},${value}` : value;
    }
  }
  const now = new Date();
  return {
    version: '2.0',
    routeKey: route.routeKey,
    rawPath,
    rawQueryString,
    cookies,
    headers,
    queryStringParameters,
    pathParameters: route.pathParameters,
    requestContext: {
      accountId: source.accountId,
      apiId: source.apiId,
      domainName: headers.host ?? '127.0.0.1',
      domainPrefix: (headers.host ?? '127').split('.')[0]!,
      http: { method: req.method ?? 'GET', path: rawPath, protocol: `HTTP/${req.httpVersion}`, sourceIp, userAgent: headers['user-agent'] ?? '' },
      // As API Gateway's HTTP APIs make them (`Jk2pLhAboAMEbYw=`): the id an error's log line names.
      requestId: randomBytes(11).toString('base64'),
      routeKey: route.routeKey,
      stage: '$default',
      time: now.toUTCString(),
      timeEpoch: now.getTime(),
    },
    ...textOrBase64(body, headers['content-type']),
  };
}

/** Writes a Lambda proxy result the way API Gateway would (a bare string or object means 200 JSON). */
export function writeApiGatewayResult(res: ServerResponse, result: APIGatewayProxyResultV2): void {
  if (typeof result === 'string' || result === null || typeof result !== 'object' || !('statusCode' in result)) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(typeof result === 'string' ? result : JSON.stringify(result));
    return;
  }
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(result.headers ?? {})) headers[name] = String(value);
  if (result.cookies?.length) headers['set-cookie'] = result.cookies;
  res.writeHead(result.statusCode ?? 200, headers);
  res.end(result.body ? Buffer.from(result.body, result.isBase64Encoded ? 'base64' : 'utf8') : undefined);
}
