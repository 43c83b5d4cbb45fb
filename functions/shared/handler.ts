import type { Context } from 'aws-lambda';
import type { Authenticator, Principal } from '../domain/authenticator.js';
import { AppError, isFault, notFound, toHttpResponse } from './errors.js';
import type { HttpEvent, HttpResult } from './http.js';
import { logFault } from './logger.js';
import { metricsRecorder, publishMetrics } from './metrics.js';
import { countRouteMetrics } from './route-metrics.js';
import { FUNCTION_URL_ROUTE_KEY, ROUTES, routeKey, type FunctionName, type RouteSpec } from '../manifest.js';
import type { IdempotencyRunner } from './idempotent-route.js';

export interface RouteRequest {
  event: HttpEvent;
  principal: Principal;
}

export type RouteAction = (request: RouteRequest) => Promise<HttpResult>;
export type PublicRouteAction = (event: HttpEvent, context?: Context) => Promise<HttpResult>;
type HttpHandler = (event: HttpEvent, context?: Context) => Promise<HttpResult>;

/** The action a route runs: its own, or the one its `action` names (a key route's query form runs its path form's). */
const actionOf = (route: RouteSpec): string => route.action ?? route.operationId;

function routesOf(fn: FunctionName, actions: Record<string, unknown>, options: HandlerOptions = {}): Map<string, RouteSpec> {
  const routes = new Map<string, RouteSpec>(ROUTES.filter((r) => r.fn === fn).map((r) => [routeKey(r), r]));
  for (const route of routes.values()) {
    if (!actions[actionOf(route)]) throw new Error(`${fn} has no action for ${route.operationId}`);
    if (route.idempotent && (!options.idempotency || route.auth === 'none')) throw new Error(`${route.operationId} honours Idempotency-Key: give ${fn} its idempotency store (and an authenticated route)`);
  }
  return routes;
}

export interface HandlerOptions {
  /** The idempotency step of the routes the route table flags `idempotent` (loaded by the first request with a key). */
  idempotency?: () => Promise<IdempotencyRunner>;
}

async function dispatch(routes: Map<string, RouteSpec>, event: HttpEvent, run: (route: RouteSpec) => Promise<HttpResult>) {
  const route = routes.get(event.routeKey);
  let result: HttpResult;
  let error: AppError | undefined;
  try {
    if (!route) throw notFound('route', `no route ${event.routeKey}`);
    result = await run(route);
  } catch (thrown) {
    error = thrown instanceof AppError ? thrown : new AppError('internal_error');
    result = toHttpResponse(thrown);
    if (isFault(error!)) await logFault('request failed', thrown);
  }
  // Counted from the answer, written once per invocation (metric lines on stdout).
  if (route) countRouteMetrics(route.operationId, { status: result.statusCode ?? 200, error: error?.code }, metricsRecorder);
  await publishMetrics();
  return result;
}

/**
 * A function's Lambda handler from one action per route of the route table (keyed by operation
 * id): it authenticates as the route table says and maps anything thrown in one place. A function
 * with a public route (`auth: none`) besides gives its action in `publicActions`.
 */
export function createHttpHandler(fn: FunctionName, actions: Record<string, RouteAction>, authenticator: Authenticator, publicActions: Record<string, PublicRouteAction> = {}, options: HandlerOptions = {}): HttpHandler {
  const routes = routesOf(fn, { ...actions, ...publicActions }, options);
  return (event, context) =>
    dispatch(routes, event, async (route) => {
      if (route.auth === 'none') {
        const action = publicActions[actionOf(route)];
        if (!action) throw new Error(`${route.operationId} is public; give it in publicActions`);
        return action(event, context);
      }
      const principal = await authenticator.authenticate(event, route.auth, route.scope);
      const run = () => actions[actionOf(route)]!({ event, principal });
      // Only a request that sends a key loads the idempotency step.
      if (route.idempotent && event.headers?.['idempotency-key'] !== undefined) return (await options.idempotency!())({ route, event, principal, run });
      return run();
    });
}

/**
 * The same for routes that do their own checks (`auth: none`), such as the webhook receiver.
 * `functionUrlOperation`: the operation a request through the function's Lambda function URL runs
 * (its events' `routeKey` is `$default`; the API's `$default` route is another function's).
 */
export function createPublicHttpHandler(fn: FunctionName, actions: Record<string, PublicRouteAction>, options: { functionUrlOperation?: string } = {}): HttpHandler {
  const routes = routesOf(fn, actions);
  const functionUrlRoute = [...routes.values()].find((route) => route.operationId === options.functionUrlOperation);
  if (options.functionUrlOperation !== undefined && !functionUrlRoute) throw new Error(`${fn} has no route ${options.functionUrlOperation} for its function URL`);
  if (functionUrlRoute) routes.set(FUNCTION_URL_ROUTE_KEY, functionUrlRoute);
  return (event, context) => dispatch(routes, event, (route) => actions[actionOf(route)]!(event, context));
}
