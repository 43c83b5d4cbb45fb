import { FUNCTION_URL_ROUTE_KEY } from '../../manifest.js';

/**
 * Which of the receiver's two doors a request came through, and so which trigger it names and
 * what URL its sender called (what URL-signing senders sign: Twilio, Square, HubSpot v3).
 *
 * - The HTTP API's `/webhooks/{webhook_id}` route: the id is the route's path parameter, the URL
 *   the API's (`WEBHOOK_BASE_URL`).
 * - The receiver's Lambda function URL: every path of it reaches the function, as a payload 2.0
 *   event whose `routeKey` is `$default` (no API route is `$default` to the receiver: the API's
 *   `$default` goes to another function). The trigger's URL there is `<function URL>/<webhook_id>`,
 *   so the id is the whole path. The URL is made from the event's `apiId`, which is the function
 *   URL's own id as AWS routed it, and the function's region: never from `Host`, `domainName` or
 *   `X-Forwarded-*`, which the caller may write, and which would let a signature made for another
 *   receiver of the same sender (with the same key) pass here.
 *
 * Behind a custom domain (`PUBLIC_WEBHOOK_BASE_URL`) the sender called the custom domain, through
 * either door.
 */
export interface ReceiverUrls {
  /** `PUBLIC_WEBHOOK_BASE_URL`, when webhooks are served from a custom domain. */
  publicBaseUrl?: string;
  /** `WEBHOOK_BASE_URL`: the API's `/webhooks`. */
  apiBaseUrl: string;
  /** `WEBHOOK_FUNCTION_URL_PATTERN`: the function URL with `{apiId}` for its id; unset without a function URL. */
  functionUrlPattern?: string;
}

export interface ReceivedOn {
  /** Which door: the function URL has no access log of its own, so the receiver's log says more there. */
  door: 'api' | 'function_url';
  /** The trigger's webhook id, or undefined when the path names none (answered 404). */
  webhookId: string | undefined;
  /** The base of the URL the sender called: `<base>/<webhook_id>`. */
  baseUrl: string;
}

/** What of a payload 2.0 event this reads: all of it set by AWS, none by the caller. */
export interface DoorEvent {
  routeKey: string;
  rawPath: string;
  pathParameters?: Record<string, string | undefined>;
  requestContext: { apiId: string };
}

/** A function URL's path that names a trigger: one segment, the id (its form is checked with the trigger's lookup). */
const FUNCTION_URL_PATH = /^\/([^/]+)$/;

export function receivedOn(event: DoorEvent, urls: ReceiverUrls): ReceivedOn {
  if (event.routeKey !== FUNCTION_URL_ROUTE_KEY) {
    return { door: 'api', webhookId: event.pathParameters?.webhook_id, baseUrl: urls.publicBaseUrl ?? urls.apiBaseUrl };
  }
  const pattern = urls.functionUrlPattern;
  // No function URL deployed (none of its events can come): it names no trigger.
  if (pattern === undefined) return { door: 'function_url', webhookId: undefined, baseUrl: urls.publicBaseUrl ?? urls.apiBaseUrl };
  return { door: 'function_url', webhookId: FUNCTION_URL_PATH.exec(event.rawPath)?.[1], baseUrl: urls.publicBaseUrl ?? pattern.replaceAll('{apiId}', event.requestContext.apiId) };
}
