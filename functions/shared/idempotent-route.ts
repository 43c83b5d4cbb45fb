import type { Principal } from '../domain/authenticator.js';
import type { Clock } from '../domain/clock.js';
import { IDEMPOTENCY_KEY_HEADER, idempotencyKeyOf, runIdempotent, type IdempotencyStore } from '../domain/idempotency.js';
import type { RandomBytes } from '../domain/random-bytes.js';
import type { RouteSpec } from '../manifest.js';
import { header, rawBody, type HttpEvent, type HttpResult } from './http.js';
import { logFault } from './logger.js';

/** Runs an idempotent route's action under the request's `Idempotency-Key`, or plainly when it sent none. */
export type IdempotencyRunner = (input: { route: RouteSpec; event: HttpEvent; principal: Principal; run: () => Promise<HttpResult> }) => Promise<HttpResult>;

/**
 * The shared handler's idempotency step over one store (functions/domain/idempotency.ts says how
 * keys work). Scoped by the caller's account and credential; the request is identified by its
 * operation, raw path, raw query and body bytes.
 */
export const idempotentRoutes = (deps: { store: IdempotencyStore; now: Clock; randomBytes: RandomBytes }): IdempotencyRunner =>
  async ({ route, event, principal, run }) => {
    const key = idempotencyKeyOf(header(event, IDEMPOTENCY_KEY_HEADER));
    if (key === undefined) return run();
    const answer = await runIdempotent({
      ...deps,
      scope: { accountId: principal.accountId, subject: principal.subject },
      key,
      request: { operationId: route.operationId, path: event.rawPath ?? '', query: event.rawQueryString ?? '', body: rawBody(event) },
      run: async () => {
        const result = await run();
        return { statusCode: result.statusCode ?? 200, headers: Object.fromEntries(Object.entries(result.headers ?? {}).map(([n, v]) => [n, String(v)])), body: result.body ?? '', ...(result.isBase64Encoded && { isBase64Encoded: true }) };
      },
      onStoreFailure: (error) => logFault('idempotency record not stored', error),
    });
    return answer;
  };
