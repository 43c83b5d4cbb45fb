import { openApiJsonRenderer } from '../openapi/document.js';
import { servedFromUrl } from '../openapi/server-url.js';
import { ROUTES, routeKey } from '../manifest.js';
import { AppError, toHttpResponse } from '../shared/errors.js';
import { createPublicHttpHandler } from '../shared/handler.js';
import { json, type HttpEvent, type HttpResult } from '../shared/http.js';
import { RouteMatcher } from '../shared/route-match.js';

// Built by the first request for it, not at import: /health and unknown routes never need it.
let openApiJson: ReturnType<typeof openApiJsonRenderer> | undefined;
const matcher = new RouteMatcher(ROUTES);

const routed = createPublicHttpHandler('system', {
  getHealth: async () => json(200, { status: 'ok' }),
  // Advertises the URL it was served from, so clients generated from it call this deployment.
  getOpenApi: async (event) => ({ statusCode: 200, headers: { 'content-type': 'application/json' }, body: (openApiJson ??= openApiJsonRenderer())(servedFromUrl(event)) }),
});

/**
 * API Gateway sends every request that matches no route to `$default`: answer 405 when the path
 * exists with other methods, 404 otherwise, in the service's error shape.
 */
function noRoute(event: HttpEvent): HttpResult {
  // `rawPath` is decoded once more than the path API Gateway routed on (local/api-gateway.ts), which
  // it does not pass on; the two differ only for paths with %25 in them, enough to tell 404 from 405.
  const lookup = matcher.lookup(event.requestContext.http.method, event.rawPath);
  if (lookup.kind === 'method_not_allowed') {
    return toHttpResponse(new AppError('method_not_allowed', undefined, { allow: lookup.allow.join(', ') }));
  }
  // A matched route should never reach $default; treat it as unknown rather than guess.
  return toHttpResponse(new AppError('not_found', lookup.kind === 'matched' ? routeKey(lookup.match.route) : undefined));
}

/** Health, the OpenAPI document and `$default`; it reads no settings and touches no AWS service. */
export const systemHandler = async (event: HttpEvent): Promise<HttpResult> =>
  event.routeKey === '$default' ? noRoute(event) : routed(event);
