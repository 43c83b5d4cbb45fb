/**
 * The console's one way to the API: credentials kept in this tab's session storage, requests to
 * the origin the console was served from, and the API's error codes in words.
 */

/** `hostedUi`: a token from the Cognito hosted UI, whose own session "Sign out" ends too. */
export type Credentials = { kind: 'token' | 'apiKey'; value: string; via?: 'hostedUi' };

const STORAGE_KEY = 'flowgate.credentials';

/** The API's error codes in words; anything else falls back to the code itself. */
export const ERROR_WORDS: Record<string, string> = {
  unauthorized: 'Your sign-in was not accepted: the token or API key is wrong or has expired. Sign out and sign in again; on the local stack, npm run token prints a new token.',
  validation_error: 'The service did not accept these settings. Check the fields and try again.',
  invalid_code: 'That code was not accepted. Enter the 6-digit code your authenticator app shows now.',
  already_registered: 'An authenticator is already set up for this account.',
  mfa_required: 'This needs a current code from your authenticator. Enter it and try again.',
  ip_not_allowed: 'The request came from an address the trigger does not allow.',
  invalid_signature: 'The signature was not accepted.',
  not_found: 'It no longer exists: it may have been deleted elsewhere.',
  method_not_allowed: 'The service does not allow that here.',
  conflict: 'It was changed elsewhere at the same time. Reload and try again.',
  already_exists: 'It already exists.',
  too_many_attempts: 'Too many attempts. Wait a minute and try again.',
  payload_too_large: 'That is too large for the service.',
  unsupported_media_type: 'The service did not accept that kind of content.',
  internal_error: 'The service failed unexpectedly. Try again in a moment.',
  unavailable: 'The service is starting or unavailable. Try again in a moment.',
  network: 'The service could not be reached. Check your connection and try again.',
  // Signing in through the Cognito hosted UI (console/pkce.ts).
  sign_in_state: 'The sign-in did not come back to the tab that started it. Start the sign-in again.',
  sign_in_refused: 'The identity provider did not sign you in. Start the sign-in again.',
};

/**
 * An API error in words. `detail` is the API's own `message` when it sends one (a 400 about a
 * signature names the field and what it expected: `signature.secret: …`), told after the words.
 */
export class ApiError extends Error {
  constructor(readonly code: string, readonly status: number, readonly detail?: string) {
    const words = ERROR_WORDS[code] ?? `The service answered "${code}" (HTTP ${status}).`;
    super(detail ? `${words} It said: ${detail}` : words);
  }
}

export const credentials = {
  get(): Credentials | undefined {
    const raw = sessionStorage.getItem(STORAGE_KEY);
    return raw ? (JSON.parse(raw) as Credentials) : undefined;
  },
  set(value: Credentials) {
    sessionStorage.setItem(STORAGE_KEY, JSON.stringify(value));
  },
  clear() {
    sessionStorage.removeItem(STORAGE_KEY);
  },
};

function authHeaders(as: Credentials | undefined): Record<string, string> {
  if (as?.kind === 'token') return { authorization: `Bearer ${as.value}` };
  if (as?.kind === 'apiKey') return { 'x-api-key': as.value };
  return {};
}

async function send(path: string, init: RequestInit): Promise<Response> {
  let response: Response;
  try {
    response = await fetch(path, init);
  } catch {
    throw new ApiError('network', 0);
  }
  if (!response.ok) {
    const payload = (await response.json().catch(() => ({}))) as { error?: string; message?: unknown };
    throw new ApiError(payload.error ?? 'internal_error', response.status, typeof payload.message === 'string' ? payload.message : undefined);
  }
  return response;
}

/** A JSON request; resolves to the response's `data` (undefined for 204). `extraHeaders`: e.g. a step-up proof (`x-mfa-token`). */
export async function api<T>(method: string, path: string, body?: unknown, as: Credentials | undefined = credentials.get(), extraHeaders: Record<string, string> = {}): Promise<T> {
  const headers = { ...authHeaders(as), ...extraHeaders };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await send(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  if (response.status === 204) return undefined as T;
  const payload = (await response.json().catch(() => ({}))) as { data?: T };
  return payload.data as T;
}

/** A value's raw body, for the KV routes that store bytes rather than JSON. */
export async function apiBytes(method: 'GET' | 'PUT', path: string, body?: string): Promise<{ bytes: Uint8Array; contentType: string }> {
  const headers = authHeaders(credentials.get());
  if (body !== undefined) headers['content-type'] = 'text/plain; charset=utf-8';
  const response = await send(path, { method, headers, body });
  return { bytes: new Uint8Array(await response.arrayBuffer()), contentType: response.headers.get('content-type') ?? '' };
}

/**
 * A KV value's URL: the key in `?key=`, encoded once, which any key survives (docs/kv.md, "Keys in
 * URLs"); a key in the path would be cut at a `?` by API Gateway unless encoded twice.
 */
export const keyPath = (bucket: string, key: string): string =>
  `/storage/kv/${encodeURIComponent(bucket)}/value?${new URLSearchParams({ key })}`;
