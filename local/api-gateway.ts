import { randomUUID } from 'node:crypto';
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

/**
 * The payload 2.0 event API Gateway HTTP APIs send to Lambda: lower-case header names with
 * repeated headers joined by commas, repeated query parameters joined by commas, cookies apart,
 * `x-forwarded-*` headers added, and non-text bodies base64-encoded.
 */
export function toApiGatewayEvent(
  req: IncomingMessage,
  body: Buffer,
  route: { routeKey: string; pathParameters?: Record<string, string> },
): APIGatewayProxyEventV2 {
  const url = req.url ?? '/';
  const queryAt = url.indexOf('?');
  const rawPath = queryAt === -1 ? url : url.slice(0, queryAt);
  const rawQueryString = queryAt === -1 ? '' : url.slice(queryAt + 1);
  const headers: Record<string, string> = {};
  for (const [name, values] of Object.entries(req.headersDistinct)) {
    if (name !== 'cookie' && values) headers[name] = values.join(',');
  }
  const sourceIp = req.socket.remoteAddress ?? '127.0.0.1';
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
      accountId: '000000000000',
      apiId: 'local',
      domainName: headers.host ?? '127.0.0.1',
      domainPrefix: (headers.host ?? '127').split('.')[0]!,
      http: { method: req.method ?? 'GET', path: rawPath, protocol: `HTTP/${req.httpVersion}`, sourceIp, userAgent: headers['user-agent'] ?? '' },
      requestId: randomUUID(),
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
