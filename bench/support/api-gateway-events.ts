import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';

/** An HTTP API (payload 2.0) event as API Gateway hands it to a function: lower-case headers, text body. */
export function apiGatewayEvent(input: {
  method: string;
  routeKey: string;
  rawPath: string;
  pathParameters?: Record<string, string>;
  headers: Record<string, string>;
  body?: string;
}): APIGatewayProxyEventV2 {
  const now = new Date();
  const userAgent = input.headers['user-agent'] ?? 'bench';
  return {
    version: '2.0',
    routeKey: input.routeKey,
    rawPath: input.rawPath,
    rawQueryString: '',
    headers: {
      host: 'api.example.com',
      'x-forwarded-for': '203.0.113.7',
      'x-forwarded-proto': 'https',
      'x-forwarded-port': '443',
      'user-agent': userAgent,
      ...(input.body !== undefined && { 'content-length': String(Buffer.byteLength(input.body)) }),
      ...input.headers,
    },
    pathParameters: input.pathParameters,
    isBase64Encoded: false,
    body: input.body,
    requestContext: {
      accountId: '000000000000',
      apiId: 'bench',
      domainName: 'api.example.com',
      domainPrefix: 'api',
      http: { method: input.method, path: input.rawPath, protocol: 'HTTP/1.1', sourceIp: '203.0.113.7', userAgent },
      requestId: randomUUID(),
      routeKey: input.routeKey,
      stage: '$default',
      time: now.toUTCString(),
      timeEpoch: now.getTime(),
    },
  };
}
