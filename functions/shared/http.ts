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
  if (!isPlainObject(value)) throw new AppError('validation_error', 'body must be a JSON object');
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

export function queryParam(event: HttpEvent, name: string): string | undefined {
  return event.queryStringParameters?.[name];
}

/** Parses `limit` for list routes: an integer in [1, max], `fallback` when absent. */
export function limitParam(event: HttpEvent, fallback: number, max: number): number {
  const raw = queryParam(event, 'limit');
  if (raw === undefined) return fallback;
  if (!/^[0-9]{1,6}$/.test(raw)) throw new AppError('validation_error', 'limit must be a positive integer');
  const limit = Number(raw);
  if (limit < 1 || limit > max) throw new AppError('validation_error', `limit must be between 1 and ${max}`);
  return limit;
}
