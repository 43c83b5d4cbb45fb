// Twilio signs the URL followed by the sorted form parameters, or for JSON bodies the URL alone
// with a `bodySHA256` query parameter: https://www.twilio.com/docs/usage/webhooks/webhooks-security
// Mirrors `validateRequest`/`validateRequestWithBody` in twilio-node (lib/webhooks/webhooks.js).
import { createHash } from 'node:crypto';
import { parse as parseQuery, stringify as stringifyQuery } from 'node:querystring';
import { decodeUtf8 } from '../../../shared/json.js';
import { headerValue } from '../headers.js';
import { constantTimeEqual } from './hmac.js';
import type { SignedRequest } from './request.js';

const FORM_MEDIA_TYPE = 'application/x-www-form-urlencoded';

/**
 * What Twilio signs for `request`: one of `urls` (tried lazily, most likely first) followed by
 * `params`; `undefined` when the body is not what a signature could bind. Shared with the sender
 * catalog's HMAC primitive, whose `twilio` content builder this is.
 */
export function twilioSignedContent(request: SignedRequest): { urls: Iterable<string>; params: string } | undefined {
  const params = signedParams(request);
  return params === undefined ? undefined : { urls: candidateUrls(request.url), params };
}

/**
 * The parameter part of the signed content: sorted form parameters, or empty for other bodies,
 * whose bytes are bound by the `bodySHA256` query parameter instead. `undefined` when invalid.
 */
function signedParams(request: SignedRequest): string | undefined {
  const mediaType = headerValue(request.headers, 'content-type')?.split(';')[0]?.trim().toLowerCase();
  if (mediaType === FORM_MEDIA_TYPE) {
    try {
      return sortedFormParams(decodeUtf8(request.rawBody));
    } catch {
      return undefined;
    }
  }
  return bodyHashMatches(request) ? '' : undefined;
}

/**
 * Names sorted, each followed by its value; a repeated name contributes each distinct value,
 * sorted, as twilio-node's `toFormUrlEncodedParam` does (`Array.from(new Set(values)).sort()`).
 */
function sortedFormParams(body: string): string {
  // Stable, by UTF-16 code units: the order of Array#sort in twilio-node, with values kept in order.
  const params = parseForm(body).sort(byName);
  let signed = '';
  for (let start = 0; start < params.length; ) {
    const name = params[start]![0];
    let end = start + 1;
    while (end < params.length && params[end]![0] === name) end++;
    if (end - start === 1) signed += name + params[start]![1];
    else for (const value of [...new Set(params.slice(start, end).map((param) => param[1]))].sort()) signed += name + value;
    start = end;
  }
  return signed;
}

const byName = (a: [string, string], b: [string, string]) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0);

/**
 * The WHATWG `application/x-www-form-urlencoded` parse, as `URLSearchParams` does it, but on
 * plain arrays: iterating a `URLSearchParams` costs more than the HMAC of a small form.
 * `decodeURIComponent` gives the same text as the WHATWG percent-decode wherever it succeeds;
 * where it throws (a stray `%`, bytes that are not UTF-8), `URLSearchParams` decides.
 */
function parseForm(body: string): [string, string][] {
  const params: [string, string][] = [];
  try {
    for (const field of body.split('&')) {
      if (field === '') continue;
      const eq = field.indexOf('=');
      params.push(eq === -1 ? [decodeFormText(field), ''] : [decodeFormText(field.slice(0, eq)), decodeFormText(field.slice(eq + 1))]);
    }
    return params;
  } catch {
    return [...new URLSearchParams(body)];
  }
}

function decodeFormText(text: string): string {
  const spaced = text.includes('+') ? text.replaceAll('+', ' ') : text;
  return spaced.includes('%') ? decodeURIComponent(spaced) : spaced;
}

function bodyHashMatches(request: SignedRequest): boolean {
  const claimed = queryParameter(request.url, 'bodySHA256');
  if (!claimed) return false;
  const actual = createHash('sha256').update(request.rawBody).digest('hex');
  return constantTimeEqual(Buffer.from(claimed), Buffer.from(actual));
}

/**
 * One query parameter's first value, read as `new URL(url).searchParams.get(name)` would but
 * without parsing the whole URL (which costs as much as hashing a small body).
 */
function queryParameter(url: string, name: string): string | null {
  const queryStart = url.indexOf('?');
  if (queryStart === -1) return null;
  const fragmentStart = url.indexOf('#', queryStart);
  const query = url.slice(queryStart + 1, fragmentStart === -1 ? undefined : fragmentStart);
  return new URLSearchParams(query).get(name);
}

/**
 * The URLs twilio-node tries: as received without and with the default port, then as
 * normalised by `new URL()`, also with the query re-encoded the legacy `querystring` way.
 * Generated lazily: the URL as received nearly always matches, and normalising costs more than
 * the HMAC of a small body.
 */
function* candidateUrls(url: string): Generator<string> {
  // Twilio signs the URL it called, which is what the receiver rebuilt: try it untouched first.
  yield url;
  const tried = new Set<string>([url]);
  const fresh = (candidate: string) => !tried.has(candidate) && Boolean(tried.add(candidate));
  for (const candidate of [removePort(url), addPort(url)]) if (fresh(candidate)) yield candidate;
  let normalized: string;
  try {
    normalized = new URL(url).toString();
  } catch {
    return;
  }
  const withoutPort = removePort(normalized);
  const withPort = addPort(normalized);
  for (const candidate of [withoutPort, withPort, withLegacyQuery(withoutPort), withLegacyQuery(withPort)]) {
    if (fresh(candidate)) yield candidate;
  }
}

interface UrlParts {
  scheme: string;
  userInfo: string;
  host: string;
  port: string;
  rest: string;
}

/** Splits a URL without normalising it, so the path and query keep the characters Twilio signed. */
function splitUrl(url: string): UrlParts | undefined {
  const match = /^([a-z][a-z0-9+.-]*:\/\/)([^/?#]*)/i.exec(url);
  if (!match) return undefined;
  const [prefix, scheme = '', authority = ''] = match;
  const userInfoEnd = authority.lastIndexOf('@');
  const hostAndPort = authority.slice(userInfoEnd + 1);
  // A colon only starts the port after the closing bracket of an IPv6 literal.
  const portStart = hostAndPort.indexOf(':', hostAndPort.lastIndexOf(']') + 1);
  return {
    scheme,
    userInfo: authority.slice(0, userInfoEnd + 1),
    host: portStart === -1 ? hostAndPort : hostAndPort.slice(0, portStart),
    port: portStart === -1 ? '' : hostAndPort.slice(portStart),
    rest: url.slice(prefix.length),
  };
}

function addPort(url: string): string {
  const parts = splitUrl(url);
  if (!parts || parts.port) return url;
  const port = parts.scheme.toLowerCase() === 'https://' ? ':443' : ':80';
  return parts.scheme + parts.userInfo + parts.host + port + parts.rest;
}

function removePort(url: string): string {
  const parts = splitUrl(url);
  return parts ? parts.scheme + parts.userInfo + parts.host + parts.rest : url;
}

function withLegacyQuery(url: string): string {
  const queryStart = url.indexOf('?');
  if (queryStart === -1 || queryStart === url.length - 1) return url;
  return `${url.slice(0, queryStart)}?${stringifyQuery(parseQuery(url.slice(queryStart + 1)))}`;
}
