import type { IncomingMessage } from 'node:http';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { CORS_ALLOW_HEADERS, CORS_ALLOW_METHODS, CORS_EXPOSE_HEADERS, CORS_MAX_AGE_SECONDS, isCorsPreflight } from '../functions/cors.js';

/**
 * What an HTTP API with a CORS configuration does to its integrations' responses
 * (https://docs.aws.amazon.com/apigateway/latest/developerguide/http-api-cors.html), for the local
 * stack. Preflights are not answered here: deployed, the `$default` route and the receiver's `ANY`
 * route take them to a function (`functions/cors.ts`), so locally they are routed the same way and
 * a function that failed one would fail it here too. With no origin configured it does nothing, as
 * an API without a CORS configuration.
 */
export class LocalCors {
  constructor(private readonly origins: readonly string[]) {}

  /**
   * A function's response as it leaves API Gateway: CORS headers of the integration dropped (the
   * API's configuration wins), and for a listed origin the configured headers added: to a
   * preflight's answer what it allows, to any other answer the origin and the exposed headers.
   */
  decorate(req: IncomingMessage, result: APIGatewayProxyStructuredResultV2): APIGatewayProxyStructuredResultV2 {
    if (!this.origins.length) return result;
    const headers = Object.fromEntries(Object.entries(result.headers ?? {}).filter(([name]) => !name.toLowerCase().startsWith('access-control-')));
    const origin = req.headers.origin;
    if (origin !== undefined && this.origins.includes(origin)) {
      headers['access-control-allow-origin'] = origin;
      if (isCorsPreflight(req.method ?? '', req.headers as Record<string, string | undefined>)) {
        headers['access-control-allow-methods'] = CORS_ALLOW_METHODS.join(',');
        headers['access-control-allow-headers'] = CORS_ALLOW_HEADERS.join(',');
        headers['access-control-max-age'] = String(CORS_MAX_AGE_SECONDS);
      } else {
        headers['access-control-expose-headers'] = CORS_EXPOSE_HEADERS.join(',');
      }
    }
    return { ...result, headers };
  }
}
