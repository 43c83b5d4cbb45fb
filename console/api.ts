/**
 * The console's one way to the API: credentials kept in this tab's session storage, requests to
 * the origin the console was served from, and the API's error codes in words.
 */
import { ApiError } from './api-errors.js';

/** `hostedUi`: a token from the Cognito hosted UI, whose own session "Sign out" ends too. */
export type Credentials = { kind: 'token' | 'apiKey'; value: string; via?: 'hostedUi' };

const STORAGE_KEY = 'flowgate.credentials';

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
