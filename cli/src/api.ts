import { createClient, type FlowgateClient } from '../../client/src/index.node.js';
import { CliError } from './errors.js';
import type { Profile } from './config.js';
import { localToken, tokenExpired } from './local-token.js';

export interface ApiAnswer<T = unknown> {
  status: number;
  headers: Headers;
  body: T;
}

export interface RequestOptions {
  query?: Record<string, string | number | boolean | undefined>;
  json?: unknown;
  body?: string | Uint8Array | Blob | ReadableStream;
  headers?: Record<string, string>;
  /** Answer the body as bytes rather than parsed JSON. */
  bytes?: boolean;
  /** Statuses answered rather than thrown. */
  accept?: number[];
  signal?: AbortSignal;
}

/**
 * The profile's HTTP access to the API: its credential on every request (a local profile's token
 * minted again when it has expired), and a refusal turned into a `CliError` carrying the service's
 * `error` code and message.
 */
export class Api {
  private token: string | undefined;

  constructor(readonly profile: Profile) {
    this.token = profile.token;
  }

  private typed: FlowgateClient | undefined;

  /** The typed client (`@flowgate/client`) with this profile's credential; a local profile's token minted as needed. */
  client(): FlowgateClient {
    if (this.typed) return this.typed;
    const { base_url: baseUrl, api_key: apiKey } = this.profile;
    const usesToken = this.profile.local !== undefined || this.profile.token !== undefined;
    if (!usesToken && !apiKey) throw new CliError('this profile has no credentials: run flowgate login with --token or --api-key', 2);
    this.typed = usesToken
      ? createClient({ baseUrl, token: async () => (await this.credentials()).authorization!.slice('Bearer '.length) })
      : createClient({ baseUrl, apiKey: apiKey! });
    return this.typed;
  }

  get baseUrl(): string {
    return this.profile.base_url;
  }

  /** The credential headers: `Authorization: Bearer …` or `X-Api-Key`. */
  async credentials(): Promise<Record<string, string>> {
    if (this.profile.local && (!this.token || tokenExpired(this.token))) this.token = await localToken(this.profile.local.data_dir, this.profile.local.sub);
    if (this.token) return { authorization: `Bearer ${this.token}` };
    if (this.profile.api_key) return { 'x-api-key': this.profile.api_key };
    throw new CliError('this profile has no credentials: run flowgate login with --token or --api-key', 2);
  }

  url(path: string, query?: RequestOptions['query']): string {
    const url = new URL(this.baseUrl + path);
    for (const [name, value] of Object.entries(query ?? {})) if (value !== undefined) url.searchParams.set(name, String(value));
    return url.toString();
  }

  async request<T = any>(method: string, path: string, options: RequestOptions = {}): Promise<ApiAnswer<T>> {
    const headers: Record<string, string> = { ...(await this.credentials()), ...options.headers };
    let body = options.body;
    if (options.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(options.json);
    }
    let response: Response;
    try {
      response = await fetch(this.url(path, options.query), { method, headers, ...(body !== undefined && { body }), ...(options.signal && { signal: options.signal }) });
    } catch (error) {
      if ((error as Error).name === 'AbortError') throw error;
      throw new CliError(`cannot reach ${this.baseUrl}: ${((error as Error).cause as Error | undefined)?.message ?? (error as Error).message}`);
    }
    if (!response.ok && !options.accept?.includes(response.status)) throw await refusal(response);
    if (options.bytes) return { status: response.status, headers: response.headers, body: new Uint8Array(await response.arrayBuffer()) as T };
    const text = await response.text();
    let parsed: unknown = text;
    if ((response.headers.get('content-type') ?? '').includes('json') && text) parsed = JSON.parse(text);
    return { status: response.status, headers: response.headers, body: parsed as T };
  }

  /** The `data` of an answer (every JSON answer of the API is `{"data": …}`). */
  async call<T = any>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    const { body } = await this.request<{ data?: T }>(method, path, options);
    return (typeof body === 'object' && body !== null && 'data' in body ? body.data : body) as T;
  }

  get<T = any>(path: string, query?: RequestOptions['query']): Promise<T> {
    return this.call<T>('GET', path, { ...(query && { query }) });
  }

  /** Every item of a paged list (its `key` list and `next_cursor`), following the cursor. */
  async *pages<T>(path: string, key: string, query: RequestOptions['query'] = {}): AsyncGenerator<T> {
    let cursor: string | undefined;
    do {
      const page = await this.get<Record<string, unknown>>(path, { ...query, ...(cursor && { cursor }) });
      for (const item of (page[key] as T[] | undefined) ?? []) yield item;
      cursor = (page.next_cursor as string | null | undefined) ?? undefined;
    } while (cursor);
  }
}

export async function refusal(response: Response): Promise<CliError> {
  const text = await response.text().catch(() => '');
  let code: string | undefined;
  let message = text.slice(0, 300) || response.statusText;
  try {
    const body = JSON.parse(text) as { error?: string; message?: string };
    code = body.error;
    // API Gateway's own refusals (a WebSocket authorizer's) carry only `message`.
    message = body.message ? (body.error ? `${body.error}: ${body.message}` : body.message) : body.error ?? message;
  } catch {
    // Not the service's JSON: its text as it is.
  }
  return new CliError(`${response.status} ${message}`, 1, code, response.status);
}
