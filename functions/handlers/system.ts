import { readFile } from 'node:fs/promises';
import { API_REFERENCE_FILES_NAME, CONSOLE_FILES_NAME, type ConsoleFiles } from '../console/assets.js';
import { onFirstUse } from '../adapters/lazy.js';
import { isCorsPreflight, PREFLIGHT_ANSWER } from '../cors.js';
import { servedFromUrl } from '../openapi/server-url.js';
import { ROUTES, routeKey } from '../manifest.js';
import { AppError, notFound, toHttpResponse } from '../shared/errors.js';
import { createPublicHttpHandler } from '../shared/handler.js';
import { greedyPathParam, json, type HttpEvent, type HttpResult } from '../shared/http.js';
import { RouteMatcher } from '../shared/route-match.js';
import type { Settings } from '../settings.js';

// Loaded and built by the first request for it, not at import: /health, the console and unknown
// routes never need it, and its schemas (zod, and every operation's docs) are most of this bundle.
const openApiJson = onFirstUse(async () => (await import('../openapi/document.js')).openApiJsonRenderer());
const matcher = new RouteMatcher(ROUTES);


/**
 * Every console response: scripts and styles from this origin only, requests to this origin only
 * (and to the hosted UI's token endpoint when there is one, and to the objects bucket, where the
 * Objects page sends and fetches bytes through presigned URLs), no inline script, no framing. The
 * token in the sign-in link's fragment is never sent anywhere.
 */
function consoleHeaders(hostedUi: HostedUiSettings | undefined, objectsOrigin: string | undefined): Record<string, string> {
  const connect = ["'self'", hostedUi?.domain, objectsOrigin].filter(Boolean).join(' ');
  return {
    'content-security-policy': `default-src 'none'; script-src 'self'; style-src 'self'; connect-src ${connect}; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
  };
}

/**
 * The reference page's policy: its scripts from this origin only (no inline script, no eval), its
 * requests to this origin only (the document; "Test request" calls this API), no framing. Styles
 * allow `'unsafe-inline'`: Scalar injects several `<style>` elements and style attributes as it
 * renders, and only its first carries a nonce (it reads `<meta property="csp-nonce">`), so a nonce
 * or hash policy breaks the page. Inline style runs no script, and with `connect-src`/`img-src`
 * limited to this origin it cannot send anything elsewhere.
 */
const API_REFERENCE_HEADERS: Record<string, string> = {
  'content-security-policy': "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; connect-src 'self'; img-src 'self' data:; font-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

/** The Cognito hosted UI the console signs in with (`console/pkce.ts`): its origin and the app client. */
export interface HostedUiSettings {
  /** An https origin, e.g. `https://<prefix>.auth.<region>.amazoncognito.com`. */
  domain: string;
  clientId: string;
}

/** The acknowledged events that wait for their flow, as `GET /health` shows them (the local stack's). */
export interface FlowBacklog {
  waiting: number;
  oldest_age_seconds: number | null;
}

export interface SystemDeps {
  /** The console's built files; called on the first console request only, never at init. */
  consoleFiles: () => Promise<ConsoleFiles>;
  /**
   * The flow queue's backlog, where it is cheap to know (the local stack keeps a ledger); deployed,
   * the function touches no AWS service, and the queue's metrics say it (docs/operating.md, Metrics and alarms).
   */
  backlog?: () => Promise<FlowBacklog>;
  /** Absent with an external token issuer: the console then offers token paste and API keys only. */
  hostedUi?: HostedUiSettings;
  /** The objects bucket's origin (`OBJECTS_TRANSFER_ORIGIN`): the console's presigned transfers go there. */
  objectsOrigin?: string;
  /** The API reference page's files (console/api-reference.ts); called on its first request only, never at init. Absent: 404. */
  apiReferenceFiles?: () => Promise<ConsoleFiles>;
}

/** What the console reads at `/console/config.json`; not a build asset, since the stack's values are known only at deploy. */
const CONFIG_ASSET = 'config.json';

/** The console as the bundling wrote it beside the deployed function's code (lib/constructs/esm-bundle.ts). */
export const readBundledConsoleFiles = async (): Promise<ConsoleFiles> =>
  JSON.parse(await readFile(new URL(`./${CONSOLE_FILES_NAME}`, import.meta.url), 'utf8')) as ConsoleFiles;

/** The reference page as the bundling wrote it beside the deployed function's code: read on its first request. */
export const readBundledApiReferenceFiles = async (): Promise<ConsoleFiles> =>
  JSON.parse(await readFile(new URL(`./${API_REFERENCE_FILES_NAME}`, import.meta.url), 'utf8')) as ConsoleFiles;

function createRouted(deps: SystemDeps) {
  const consoleFiles = onFirstUse(deps.consoleFiles);
  const referenceFiles = onFirstUse(deps.apiReferenceFiles ?? (() => Promise.reject(notFound('file'))));
  const headers = consoleHeaders(deps.hostedUi, deps.objectsOrigin);
  const config = JSON.stringify({ cognito: deps.hostedUi ? { domain: deps.hostedUi.domain, clientId: deps.hostedUi.clientId } : null });
  return createPublicHttpHandler('system', {
    getHealth: async () => json(200, deps.backlog ? { status: 'ok', backlog: await deps.backlog() } : { status: 'ok' }),
    // Advertises the URL it was served from, so clients generated from it call this deployment.
    getOpenApi: async (event) => ({ statusCode: 200, headers: { 'content-type': 'application/json' }, body: (await openApiJson())(servedFromUrl(event)) }),
    // The shell names the hashed assets of this build, so it is never cached; they are, for a year.
    getConsole: async () => ({
      statusCode: 200,
      headers: { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-cache', ...headers },
      body: (await consoleFiles()).html,
    }),
    getApiReference: async () => ({
      statusCode: 200,
      headers: { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-cache', ...API_REFERENCE_HEADERS },
      body: (await referenceFiles()).html,
    }),
    getApiReferenceAsset: async (event) => {
      const name = greedyPathParam(event, 'asset');
      const { assets } = await referenceFiles();
      const asset = Object.hasOwn(assets, name) ? assets[name] : undefined;
      if (!asset) throw notFound('file');
      return { statusCode: 200, headers: { 'content-type': asset.contentType, 'cache-control': 'public, max-age=31536000, immutable', 'x-content-type-options': 'nosniff' }, body: asset.body };
    },
    getConsoleAsset: async (event) => {
      const name = greedyPathParam(event, 'asset');
      if (name === CONFIG_ASSET) {
        return { statusCode: 200, headers: { 'content-type': 'application/json', 'cache-control': 'no-cache', ...headers }, body: config };
      }
      const { assets } = await consoleFiles();
      const asset = Object.hasOwn(assets, name) ? assets[name] : undefined;
      if (!asset) throw notFound('file');
      return {
        statusCode: 200,
        headers: { 'content-type': asset.contentType, 'cache-control': 'public, max-age=31536000, immutable', ...headers },
        body: asset.body,
      };
    },
  });
}

/**
 * API Gateway sends every request that matches no route to `$default`: answer a browser's CORS
 * preflight 204 (API Gateway adds the allow headers for a listed origin, `functions/cors.ts`), and
 * anything else 405 when the path exists with other methods, 404 otherwise, in the service's error shape.
 */
function noRoute(event: HttpEvent): HttpResult {
  if (isCorsPreflight(event.requestContext.http.method, event.headers)) return { ...PREFLIGHT_ANSWER };
  // `rawPath` is decoded once more than the path API Gateway routed on (local/api-gateway.ts), which
  // it does not pass on; the two differ only for paths with %25 in them, enough to tell 404 from 405.
  const lookup = matcher.lookup(event.requestContext.http.method, event.rawPath);
  if (lookup.kind === 'method_not_allowed') {
    return toHttpResponse(new AppError('method_not_allowed', undefined, { allow: lookup.allow.join(', ') }));
  }
  // A matched route should never reach $default; treat it as unknown rather than guess.
  return toHttpResponse(notFound('route', lookup.kind === 'matched' ? routeKey(lookup.match.route) : undefined));
}

/** Health, the OpenAPI document, the console and `$default`; it touches no AWS service. */
export function createSystemHandler(deps: SystemDeps): (event: HttpEvent) => Promise<HttpResult> {
  const routed = createRouted(deps);
  return async (event) => (event.routeKey === '$default' ? noRoute(event) : routed(event));
}

/** The hosted UI from the settings, when the stack configured one. */
export const hostedUiFrom = (settings: Pick<Settings, 'consoleCognitoDomain' | 'consoleCognitoClientId'>): HostedUiSettings | undefined =>
  settings.consoleCognitoDomain && settings.consoleCognitoClientId ? { domain: settings.consoleCognitoDomain, clientId: settings.consoleCognitoClientId } : undefined;

/** The deployed system function, serving the console built into its bundle. */
export const composeSystem = (settings: Settings) => createSystemHandler({ consoleFiles: readBundledConsoleFiles, apiReferenceFiles: readBundledApiReferenceFiles, hostedUi: hostedUiFrom(settings), objectsOrigin: settings.objectsTransferOrigin });
