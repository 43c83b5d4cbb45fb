import { ROUTES } from './manifest.js';

/**
 * Browser access (CORS) to the gateway, configured on API Gateway, deployed (the HTTP API's
 * `corsPreflight`) and locally (`local/cors.ts`) alike: both read this file.
 *
 * An HTTP API with a CORS configuration "automatically sends a response to preflight OPTIONS
 * requests, even if there isn't an OPTIONS route", "adds the configured CORS headers to the
 * response from an integration", and "ignores CORS headers returned from your backend integration";
 * it returns them only to a request whose `Origin` is allowed. But "the $default route catches
 * requests for all methods and routes that you haven't explicitly defined, including OPTIONS
 * requests", and so does the receiver's `ANY` route: every preflight reaches a function, which must
 * answer it with a 2xx ({@link isCorsPreflight}), as browsers require; API Gateway adds the headers.
 * https://docs.aws.amazon.com/apigateway/latest/developerguide/http-api-cors.html
 * The configuration is API-wide: it cannot leave out the webhook receiver. Senders call it from
 * servers, without `Origin`, so they never see CORS headers; a listed origin's page could call it
 * from a browser, which gives that page nothing it could not do with a server of its own.
 */

/**
 * Request headers a web app may send: the gateway's two credentials, the body's type, a step-up
 * proof (`x-mfa-token`), an object's conditions (`if-match`, `if-none-match`) and range, and `*`
 * for an object's metadata, whose names (`x-meta-<name>`) are the user's: CORS has no prefix
 * pattern. `*` is a wildcard only for requests without credentials mode, which the gateway never
 * allows (its credentials are headers, not cookies), and never covers `authorization`, so that one
 * is listed; the others are listed too for browsers that take no wildcard (Safari before 16.4).
 */
export const CORS_ALLOW_HEADERS = ['authorization', 'x-api-key', 'content-type', 'x-mfa-token', 'if-match', 'if-none-match', 'range', '*'] as const;
/**
 * Response headers a web app may read beyond the safelisted ones (`content-type`, `content-length`
 * …): when to retry a 429 or 503, an object's `etag`, its ranged read's `content-range`, where a
 * large one is (`location`), and `*` for its `x-meta-*` metadata, as above.
 */
export const CORS_EXPOSE_HEADERS = ['retry-after', 'etag', 'content-range', 'location', '*'] as const;
/** How long a browser may reuse a preflight answer (Chromium caps it at 2 hours). */
export const CORS_MAX_AGE_SECONDS = 600;

/** The methods the gateway's routes use (the webhook receiver's `ANY` is not for browsers). */
export const CORS_ALLOW_METHODS: readonly string[] = [...new Set(ROUTES.map((route) => route.method).filter((method) => method !== 'ANY'))].sort();

/**
 * Parses allowed origins, given as a list or comma-separated text, each an exact origin
 * (`https://app.example.com`, no path, no trailing slash). A wildcard is refused: the gateway
 * allows credentials headers (`Authorization`, `X-Api-Key`), and any site at all must not be able
 * to make a signed-in browser send them. `what` names the source in the error (e.g. `context corsAllowedOrigins`).
 */
export function parseCorsOrigins(raw: unknown, what: string): string[] {
  if (raw === undefined || raw === null || raw === '') return [];
  const items = Array.isArray(raw) ? raw : typeof raw === 'string' ? raw.split(',') : undefined;
  if (!items) throw new Error(`${what} must be a list of origins or comma-separated text`);
  const origins: string[] = [];
  for (const item of items) {
    if (typeof item !== 'string') throw new Error(`${what} must hold origins as text, not ${JSON.stringify(item)}`);
    const origin = item.trim();
    if (origin === '') continue;
    if (origin.includes('*')) {
      throw new Error(`${what} may not hold "${origin}": the gateway allows the Authorization and X-Api-Key headers, so only exact origins are allowed (e.g. https://app.example.com)`);
    }
    let parsed: URL | undefined;
    try {
      parsed = new URL(origin);
    } catch {
      parsed = undefined;
    }
    if (!parsed || (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') || parsed.origin !== origin) {
      throw new Error(`${what} must hold exact origins (scheme://host[:port], no path or trailing slash), not "${origin}"`);
    }
    if (!origins.includes(origin)) origins.push(origin);
  }
  return origins;
}

/**
 * A browser's CORS preflight: OPTIONS with `Origin` and `Access-Control-Request-Method` (header
 * names lower case, as API Gateway gives them). The functions API Gateway routes one to answer it
 * 204 with no body; whether the browser may go on is in the headers API Gateway adds, not in it.
 */
export function isCorsPreflight(method: string, headers: Readonly<Record<string, string | undefined>> | undefined): boolean {
  return method === 'OPTIONS' && headers?.origin !== undefined && headers['access-control-request-method'] !== undefined;
}

/** The functions' answer to a preflight: 204, nothing else (API Gateway adds the CORS headers). */
export const PREFLIGHT_ANSWER = { statusCode: 204, body: '' } as const;

/**
 * The objects bucket's CORS rule, deployed (`lib/constructs/object-storage.ts`) and on s3rver
 * (`local/engines.ts`): browsers send bytes to presigned URLs and fetch them from there, so S3 must
 * answer their preflights, and a multipart upload needs each part's `ETag` in JavaScript, which S3
 * shows only to origins it exposes it to. The origins are the API's own (the console) and the
 * gateway's CORS allowlist: a presigned URL is a credential already, and this only lets those pages use it.
 */
export const OBJECTS_CORS = {
  methods: ['GET', 'HEAD', 'PUT'],
  /**
   * A presigned PUT signs `content-type` (and whatever else its signature binds: conditions,
   * `x-amz-*`); a ranged download sends `range`.
   */
  headers: ['content-type', 'range', 'if-match', 'if-none-match', 'x-amz-*'],
  expose: ['etag', 'content-length', 'content-range'],
  maxAgeSeconds: CORS_MAX_AGE_SECONDS,
} as const;
