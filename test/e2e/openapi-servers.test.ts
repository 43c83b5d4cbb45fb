import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { createSystemHandler, readBundledConsoleFiles } from '../../functions/handlers/system.js';
import { buildOpenApiDocument } from '../../functions/openapi/document.js';
import { call, useLocalStack } from '../support/local-stack.js';

const stack = useLocalStack();
/** The system function as deployed, without a hosted UI. */
const handler = createSystemHandler({ consoleFiles: readBundledConsoleFiles });

/** `GET /openapi.json` as API Gateway (HTTP API, payload 2.0) delivers it for a request to `host`. */
function apiGatewayEvent(host: string, headers: Record<string, string> = {}): APIGatewayProxyEventV2 {
  return {
    version: '2.0',
    routeKey: 'GET /openapi.json',
    rawPath: '/openapi.json',
    rawQueryString: '',
    headers: { host, 'x-forwarded-proto': 'https', 'x-forwarded-port': '443', 'x-forwarded-for': '203.0.113.7', ...headers },
    requestContext: {
      accountId: '123456789012',
      apiId: host.split('.')[0]!,
      domainName: host,
      domainPrefix: host.split('.')[0]!,
      http: { method: 'GET', path: '/openapi.json', protocol: 'HTTP/1.1', sourceIp: '203.0.113.7', userAgent: 'curl/8.5.0' },
      requestId: 'JKJaXmPLvHcESHA=',
      routeKey: 'GET /openapi.json',
      stage: '$default',
      time: '12/Mar/2026:19:03:58 +0000',
      timeEpoch: 1_773_342_238_000,
    },
    isBase64Encoded: false,
  };
}

async function serversOf(event: APIGatewayProxyEventV2) {
  const result = (await handler(event)) as APIGatewayProxyStructuredResultV2;
  expect(result.statusCode).toBe(200);
  return { body: result.body as string, document: JSON.parse(result.body as string) };
}

describe('/openapi.json servers', () => {
  it('on the local stack, servers[0].url is the stack\'s own base URL', async () => {
    const res = await call(stack, 'GET', '/openapi.json');
    expect(res.status).toBe(200);
    expect(res.json.servers).toEqual([{ url: stack.baseUrl }]);
  });

  it('deployed, advertises https://<requestContext.domainName> it was served from, never 127.0.0.1', async () => {
    const { body, document } = await serversOf(apiGatewayEvent('abc123.execute-api.eu-west-1.amazonaws.com'));
    expect(document.servers).toEqual([{ url: 'https://abc123.execute-api.eu-west-1.amazonaws.com' }]);
    expect(body).not.toContain('127.0.0.1');
    // Only the server is filled in per request: the rest is the document built from the route table.
    expect(document).toEqual(buildOpenApiDocument('https://abc123.execute-api.eu-west-1.amazonaws.com'));
  });

  it('behind a custom domain, advertises that domain', async () => {
    const { document } = await serversOf(apiGatewayEvent('api.example.com'));
    expect(document.servers).toEqual([{ url: 'https://api.example.com' }]);
  });

  it('a host that is not a host name falls back to "/" (wherever the document was fetched from)', async () => {
    const { document } = await serversOf(apiGatewayEvent('evil.example.com/"><script>'));
    expect(document.servers).toEqual([{ url: '/' }]);
  });
});
