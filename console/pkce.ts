/**
 * Signing in with an OAuth 2.0 authorization server (the stack's Cognito hosted UI) from the
 * browser: authorization code with PKCE (RFC 7636, S256) and a `state` checked on the way back.
 * No DOM here: the helpers take their randomness and `fetch`, so Node runs their tests.
 */

/** What `GET /console/config.json` says about the hosted UI; absent with an external issuer. */
export interface HostedUiConfig {
  /** `https://<prefix>.auth.<region>.amazoncognito.com` */
  domain: string;
  clientId: string;
}

/** RFC 4648 §5, unpadded, as RFC 7636 uses it. */
export function base64url(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

type RandomBytes = (size: number) => Uint8Array;
const webRandom: RandomBytes = (size) => crypto.getRandomValues(new Uint8Array(size));

/** A code verifier: 32 random bytes, 43 characters of base64url (RFC 7636 §4.1 asks for 43–128). */
export const createVerifier = (random: RandomBytes = webRandom): string => base64url(random(32));
/** An opaque `state`, bound to this tab's sign-in attempt. */
export const createState = (random: RandomBytes = webRandom): string => base64url(random(16));

/** The S256 code challenge: base64url(SHA-256(ASCII(verifier))) (RFC 7636 §4.2). */
export async function codeChallenge(verifier: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier));
  return base64url(new Uint8Array(digest));
}

/** Where the browser goes to sign in: Cognito's `/oauth2/authorize`. */
export function authorizeUrl(config: HostedUiConfig, request: { redirectUri: string; state: string; challenge: string }): string {
  const query = new URLSearchParams({
    response_type: 'code',
    client_id: config.clientId,
    redirect_uri: request.redirectUri,
    scope: 'openid email',
    state: request.state,
    code_challenge_method: 'S256',
    code_challenge: request.challenge,
  });
  return `${config.domain}/oauth2/authorize?${query}`;
}

/**
 * Where "Sign out" sends the browser after a hosted-UI sign-in: Cognito's `/logout` ends the hosted
 * UI's own session (else the next sign-in would pass without a password) and returns to the console.
 */
export function logoutUrl(config: HostedUiConfig, logoutUri: string): string {
  return `${config.domain}/logout?${new URLSearchParams({ client_id: config.clientId, logout_uri: logoutUri })}`;
}

/** Thrown when a sign-in cannot complete; `code` is one of the console's error words. */
export class SignInError extends Error {
  constructor(readonly code: 'sign_in_state' | 'sign_in_refused', detail: string) {
    super(detail);
  }
}

/**
 * Exchanges the authorization code at `/oauth2/token` (a public client: no secret, the verifier
 * proves it is the same client) and returns the ID token, which is what the API accepts.
 */
export async function exchangeCode(
  config: HostedUiConfig,
  request: { code: string; verifier: string; redirectUri: string },
  fetchFn: typeof fetch = fetch,
): Promise<string> {
  const response = await fetchFn(`${config.domain}/oauth2/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'authorization_code', client_id: config.clientId, code: request.code, redirect_uri: request.redirectUri, code_verifier: request.verifier }),
  });
  const payload = (await response.json().catch(() => ({}))) as { id_token?: unknown; error?: unknown };
  if (!response.ok || typeof payload.id_token !== 'string') throw new SignInError('sign_in_refused', `token endpoint answered ${response.status} ${String(payload.error ?? '')}`);
  return payload.id_token;
}

/** The state a pending sign-in keeps in session storage between leaving for the hosted UI and coming back. */
export interface PendingSignIn {
  state: string;
  verifier: string;
}

/**
 * Completes a sign-in from the callback's query (`code` and `state`, or `error`): the state must
 * be the one this tab sent, else the answer is someone else's and is refused.
 */
export async function completeSignIn(
  config: HostedUiConfig,
  query: URLSearchParams,
  pending: PendingSignIn | undefined,
  redirectUri: string,
  fetchFn: typeof fetch = fetch,
): Promise<string> {
  const state = query.get('state');
  if (!pending || !state || state !== pending.state) throw new SignInError('sign_in_state', 'state does not match this tab\'s sign-in');
  const code = query.get('code');
  if (!code) throw new SignInError('sign_in_refused', query.get('error') ?? 'no code');
  return exchangeCode(config, { code, verifier: pending.verifier, redirectUri }, fetchFn);
}
