import { header, type HttpEvent } from '../shared/http.js';

/** A host as API Gateway or the local stack reports it: a DNS name, IPv4 or bracketed IPv6, optional port. */
const HOST = /^(?:[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

/**
 * The base URL a request was served from, for the document's `servers`: API Gateway's
 * `requestContext.domainName` (the execute-api or custom domain; the local stack puts its Host
 * there), over https unless the request came in over plain http (`x-forwarded-proto`, which API
 * Gateway and the local stack set). An unusable host gives `/`, which OpenAPI reads as "where this
 * document was fetched from". A custom domain's API mapping path, if any, is not included.
 */
export function servedFromUrl(event: HttpEvent): string {
  const host = event.requestContext.domainName;
  if (!host || !HOST.test(host)) return '/';
  const scheme = header(event, 'x-forwarded-proto') === 'http' ? 'http' : 'https';
  return `${scheme}://${host}`;
}
