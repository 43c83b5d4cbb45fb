import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { AppError } from './errors.js';
import { isPlainObject, parseJson } from './json.js';

export type HttpEvent = APIGatewayProxyEventV2;
export type HttpResult = APIGatewayProxyStructuredResultV2;

/** The exact bytes the client sent; API Gateway base64-encodes bodies it does not treat as text. */
export function rawBody(event: HttpEvent): Buffer {
  if (event.body === undefined || event.body === null) return Buffer.alloc(0);
  return event.isBase64Encoded ? Buffer.from(event.body, 'base64') : Buffer.from(event.body, 'utf8');
}

/** A request header by its lower-case name (API Gateway HTTP APIs lower-case header names). */
export function header(event: HttpEvent, name: string): string | undefined {
  return event.headers?.[name];
}

/** The media type of the request without parameters, lower case (`application/json`). */
export function mediaType(event: HttpEvent): string {
  return (header(event, 'content-type') ?? '').split(';')[0]!.trim().toLowerCase();
}

/**
 * Reads a JSON object body. Requires `application/json` (415 otherwise) unless `optional` and
 * the body is empty, in which case `{}` is returned.
 */
export function jsonObjectBody(event: HttpEvent, options: { optional?: boolean } = {}): Record<string, unknown> {
  const bytes = rawBody(event);
  if (bytes.length === 0 && options.optional) return {};
  if (mediaType(event) !== 'application/json') throw new AppError('unsupported_media_type');
  const value = parseJson(bytes);
  if (!isPlainObject(value)) throw new AppError('validation_error', undefined, undefined, 'the body must be a JSON object');
  return value;
}

export function json(statusCode: number, body: unknown, headers: Record<string, string> = {}): HttpResult {
  return { statusCode, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) };
}

export const ok = (data: unknown): HttpResult => json(200, { data });
export const created = (data: unknown): HttpResult => json(201, { data });
export const accepted = (data: unknown): HttpResult => json(202, { data });
export const noContent = (): HttpResult => ({ statusCode: 204, headers: {}, body: '' });

/** A path parameter, required by the route that matched. */
export function pathParam(event: HttpEvent, name: string): string {
  const value = event.pathParameters?.[name];
  if (value === undefined) throw new AppError('not_found', `missing path parameter ${name}`);
  return value;
}

/**
 * A greedy `{name+}` path parameter, read as the tail of `rawPath` after the route's literal head.
 * HTTP APIs decode the path once to route it and once more for `rawPath`, which live captures pin
 * down; whether `pathParameters` get the second decoding is not documented and reports disagree
 * (sources: local/api-gateway.ts). Reading `rawPath` gives the same value either way. The head is
 * searched for, not assumed at the start, in case a custom domain's API mapping precedes it.
 */
export function greedyPathParam(event: HttpEvent, name: string): string {
  const template = event.routeKey.slice(event.routeKey.indexOf(' ') + 1);
  const at = template.indexOf(`{${name}+}`);
  if (at === -1) throw new AppError('not_found', `route has no greedy parameter ${name}`);
  const head = template.slice(0, at).replace(/\{([A-Za-z_]+)\}/g, (_, param: string) => pathParam(event, param));
  const start = event.rawPath.indexOf(head);
  if (start === -1) throw new AppError('not_found', `rawPath does not follow ${template}`);
  return event.rawPath.slice(start + head.length);
}

/** The query parameter that names a key on the key routes' query form (`…/value?key=`, `…/object?key=`). */
export const KEY_QUERY_PARAMETER = 'key';

/**
 * The key a key route names, from whichever of its two forms the request took:
 *
 * - the query form (a route without `{key+}`): `?key=` percent-encoded once, as every URL
 *   library encodes a query value. Nothing in the query is decoded by API Gateway before the
 *   function sees it (`rawQueryString` is as sent), so any key survives: `/`, `?`, `#`, `%`, `+`.
 * - the path form (`…/{key+}`), kept for existing callers: the key percent-encoded twice. API
 *   Gateway decodes the path once to route it, and a `?` that decoding makes ends the path, so a
 *   key encoded once arrives cut (`report%3Fdraft` as `report`) with nothing left to see
 *   (local/api-gateway.ts has the captures). What the function can see is a query string: the path
 *   routes take none, so one means the URL was split at a `?` that belonged to the key (sent
 *   unencoded) or a parameter meant for the query form. It is refused, naming the query form.
 *
 * A route may take other parameters beside the key (`also`, e.g. `ttl_seconds` on a KV put), in
 * either form: each at most once, and read with {@link queryParam} once this has passed. On the
 * path form a query string made only of them is taken as theirs; anything else is still refused.
 *
 * @param queryForm the query form's route path, named in the path form's refusal.
 * @param suffix what the path form's route has after the key (`/url`), taken off the greedy parameter.
 * @param also the other query parameters this route takes.
 */
export function keyParam(event: HttpEvent, queryForm: string, suffix = '', also: readonly string[] = []): string {
  const method = event.routeKey.slice(0, event.routeKey.indexOf(' '));
  const safeForm = `${method} ${queryForm}?${KEY_QUERY_PARAMETER}=<the key, percent-encoded once>`;
  if (!event.routeKey.includes('{key+}')) return keyQueryParam(event, safeForm, also);
  if (event.rawQueryString && !onlyParameters(event.rawQueryString, also)) {
    const others = also.length > 0 ? ` (${also.join(', ')} excepted)` : '';
    throw new AppError('validation_error', 'query string on a path-form key route', undefined,
      `A key in the path takes no query string${others}, so this URL was cut at a ? that may belong to the key. Send the key as a query parameter instead: ${safeForm}.`);
  }
  const path = greedyPathParam(event, 'key');
  if (!suffix) return path;
  if (!path.endsWith(suffix)) throw new AppError('not_found', `path must end in ${suffix}`);
  return path.slice(0, -suffix.length);
}

const parameterName = (pair: string): string => (pair.includes('=') ? pair.slice(0, pair.indexOf('=')) : pair);

/** Whether a query string names only `allowed` parameters, each once. */
function onlyParameters(raw: string, allowed: readonly string[]): boolean {
  const names = raw.split('&').map(parameterName);
  return names.every((name) => allowed.includes(name)) && new Set(names).size === names.length;
}

/**
 * `?key=` read from `rawQueryString` as sent: exactly one `key` and, beside it, only the route's
 * `also` parameters, each at most once (an `&` sent unencoded in a key would otherwise split it
 * silently), `+` a space as in every query string, and strict percent-decoding to UTF-8 (a stray
 * `%` is 400, never a guessed key). API Gateway's `queryStringParameters` join a repeated
 * parameter with commas, so they are not used for the key.
 */
function keyQueryParam(event: HttpEvent, safeForm: string, also: readonly string[]): string {
  const refuse = (detail: string, message: string) => new AppError('validation_error', detail, undefined, `${message} Send ${safeForm}.`);
  const raw = event.rawQueryString ?? new URLSearchParams(event.queryStringParameters as Record<string, string> | undefined).toString();
  const values: string[] = [];
  const seen = new Set<string>();
  for (const pair of raw ? raw.split('&') : []) {
    const name = parameterName(pair);
    if (also.includes(name)) {
      if (seen.has(name)) throw refuse(`repeated ${name} parameter`, `Give ${name} once.`);
      seen.add(name);
      continue;
    }
    if (name !== KEY_QUERY_PARAMETER) {
      const only = also.length === 0 ? `parameter here is ${KEY_QUERY_PARAMETER}` : `parameters here are ${[KEY_QUERY_PARAMETER, ...also].join(', ')}`;
      throw refuse('unknown query parameter', `The only query ${only}: an & in a key must be sent as %26.`);
    }
    values.push(pair.includes('=') ? pair.slice(pair.indexOf('=') + 1) : '');
  }
  if (values.length === 0) throw refuse('no key parameter', `The ${KEY_QUERY_PARAMETER} query parameter is required.`);
  if (values.length > 1) throw refuse('repeated key parameter', `Give ${KEY_QUERY_PARAMETER} once.`);
  try {
    return decodeURIComponent(values[0]!.replaceAll('+', ' '));
  } catch {
    throw refuse('key parameter not percent-encoded UTF-8', `The ${KEY_QUERY_PARAMETER} parameter is not percent-encoded UTF-8: a % in a key must be sent as %25.`);
  }
}

export function queryParam(event: HttpEvent, name: string): string | undefined {
  return event.queryStringParameters?.[name];
}

/** Parses `limit` for list routes: an integer in [1, max], `fallback` when absent. */
export function limitParam(event: HttpEvent, fallback: number, max: number): number {
  const raw = queryParam(event, 'limit');
  if (raw === undefined) return fallback;
  if (!/^[0-9]{1,6}$/.test(raw)) throw new AppError('validation_error', undefined, undefined, `limit must be an integer from 1 to ${max}`);
  const limit = Number(raw);
  if (limit < 1 || limit > max) throw new AppError('validation_error', undefined, undefined, `limit must be an integer from 1 to ${max}`);
  return limit;
}
