import type { IncomingMessage, ServerResponse } from 'node:http';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { CORS_ALLOW_HEADERS, CORS_ALLOW_METHODS, CORS_EXPOSE_HEADERS, CORS_MAX_AGE_SECONDS } from '../functions/cors.js';

/**
 * What an HTTP API with a CORS configuration does before and after its integrations
 * (https://docs.aws.amazon.com/apigateway/latest/developerguide/http-api-cors.html), for the local
 * stack: with no origin configured it does nothing, as an API without a CORS configuration.
 */
export class LocalCors {
  constructor(private readonly origins: readonly string[]) {}

  /**
   * Answers a preflight (OPTIONS with `Origin` and `Access-Control-Request-Method`) as API Gateway
   * does, without calling any function: 204, with the allow headers only for a listed origin.
   * Returns false when the request is not a preflight this API answers.
   */
  answerPreflight(req: IncomingMessage, res: ServerResponse): boolean {
    const origin = req.headers.origin;
    if (!this.origins.length || req.method !== 'OPTIONS' || origin === undefined || req.headers['access-control-request-method'] === undefined) return false;
    res.writeHead(204, this.origins.includes(origin)
      ? {
          'access-control-allow-origin': origin,
          'access-control-allow-methods': CORS_ALLOW_METHODS.join(','),
          'access-control-allow-headers': CORS_ALLOW_HEADERS.join(','),
          'access-control-max-age': String(CORS_MAX_AGE_SECONDS),
        }
      : {});
    res.end();
    return true;
  }

  /**
   * A function's response as it leaves API Gateway: CORS headers of the integration dropped (the
   * API's configuration wins), and `Access-Control-Allow-Origin` added for a listed origin.
   */
  decorate(req: IncomingMessage, result: APIGatewayProxyStructuredResultV2): APIGatewayProxyStructuredResultV2 {
    if (!this.origins.length) return result;
    const headers = Object.fromEntries(Object.entries(result.headers ?? {}).filter(([name]) => !name.toLowerCase().startsWith('access-control-')));
    const origin = req.headers.origin;
    if (origin !== undefined && this.origins.includes(origin)) {
      headers['access-control-allow-origin'] = origin;
      headers['access-control-expose-headers'] = CORS_EXPOSE_HEADERS.join(',');
    }
    return { ...result, headers };
  }
}
