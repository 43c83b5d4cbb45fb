import { OPERATIONS, type operations } from './generated/openapi.js';
import { errorFromResponse, FlowgateError } from './errors.js';

export type OperationId = keyof operations & keyof typeof OPERATIONS;

/** How a failed call is tried again: only on 429 and 503, and only for a call that is safe to repeat. */
export interface RetryOptions {
  /** Tries after the first; 0 turns retrying off. Default 3. */
  retries?: number;
  /** The first backoff's ceiling in milliseconds, doubled each try (full jitter). Default 200. */
  baseDelayMs?: number;
  /** No backoff waits longer than this. Default 10,000. */
  maxDelayMs?: number;
  /** A `Retry-After` longer than this is not waited for: the error is thrown at once. Default 60. */
  maxRetryAfterSeconds?: number;
}

export interface ClientOptions {
  /** Where the API is, e.g. `https://abc.execute-api.eu-west-1.amazonaws.com/prod` or the local stack's URL. */
  baseUrl: string;
  /** A user's access token (sent as `Authorization: Bearer`), or a function that returns a fresh one. */
  token?: string | (() => string | Promise<string>);
  /** An API key (sent as `X-Api-Key`). */
  apiKey?: string;
  /** The `fetch` to use; default the global one. */
  fetch?: typeof fetch;
  retry?: RetryOptions;
  /** Extra headers on every request (a tracing header, say). */
  headers?: Record<string, string>;
}

type Params<K extends OperationId> = operations[K]['parameters'];
/** The path parameters of an operation, an object of strings. */
export type PathOf<K extends OperationId> = Params<K> extends { path: infer P } ? (P extends Record<string, unknown> ? P : never) : never;
export type QueryOf<K extends OperationId> = Params<K> extends { query?: infer Q } ? Q : never;
/** An operation's JSON request body. */
export type BodyOf<K extends OperationId> = operations[K] extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never;
type SuccessStatus = 200 | 201 | 202;
/** An operation's JSON success answer (its `{"data": …}` envelope included). */
export type AnswerOf<K extends OperationId> = {
  [S in keyof operations[K]['responses'] & SuccessStatus]: operations[K]['responses'][S] extends { content: { 'application/json': infer J } } ? J : never;
}[keyof operations[K]['responses'] & SuccessStatus];
/** What an operation's answer carries in `data`. */
export type DataOf<K extends OperationId> = AnswerOf<K> extends { data: infer D } ? D : never;

export interface CallInput {
  path?: Record<string, string | number>;
  query?: Record<string, string | number | boolean | undefined>;
  headers?: Record<string, string | undefined>;
  /** Sent as JSON. */
  json?: unknown;
  /** Sent as is. A `ReadableStream` cannot be sent twice, so a call with one is never retried. */
  body?: RequestInit['body'] | Uint8Array;
  signal?: AbortSignal;
  /** Statuses that are answers, not errors (a 404 read as "absent"). */
  accept?: readonly number[];
  /** `manual`: a redirect is returned, not followed (so no credential goes to where it points). */
  redirect?: 'follow' | 'manual';
}

const SAFE_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS']);
const RETRIED_STATUSES: ReadonlySet<number> = new Set([429, 503]);

/** A random key for `Idempotency-Key`: one per logical call, the same on each of its retries. */
export function newIdempotencyKey(): string {
  return globalThis.crypto.randomUUID();
}

/** Resolves after `ms`, or rejects when `signal` aborts first. */
function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Sends operations by `operationId`: builds the URL from the generated table, adds the credential,
 * and retries a call that is safe to repeat. Every view of the client goes through `call`.
 */
export class Transport {
  readonly baseUrl: string;
  private readonly fetch: typeof fetch;
  private readonly retry: Required<RetryOptions>;

  constructor(private readonly options: ClientOptions) {
    if (typeof options.baseUrl !== 'string' || options.baseUrl === '') throw new TypeError('createClient: baseUrl is required');
    if (options.token !== undefined && options.apiKey !== undefined) throw new TypeError('createClient: pass token or apiKey, not both');
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    const f = options.fetch ?? globalThis.fetch;
    if (typeof f !== 'function') throw new TypeError('createClient: no fetch here; pass one as `fetch`');
    this.fetch = (input, init) => f(input, init); // called unbound: a browser's fetch must not get `this`
    this.retry = { retries: 3, baseDelayMs: 200, maxDelayMs: 10_000, maxRetryAfterSeconds: 60, ...options.retry };
  }

  /** A request outside the API (a presigned S3 URL): no credential, no retry. */
  rawFetch(url: string, init: RequestInit): Promise<Response> {
    return this.fetch(url, init);
  }

  /** The operation's URL: path parameters each encoded once, the query as `URLSearchParams` writes it. */
  url(operationId: OperationId, input: Pick<CallInput, 'path' | 'query'> = {}): string {
    const template: string = OPERATIONS[operationId].path;
    const path = template.replace(/\{([A-Za-z_]+)\}/g, (_, name: string) => {
      const value = input.path?.[name];
      if (value === undefined || value === '') throw new TypeError(`${operationId}: ${name} is required`);
      // A URL resolves `.` and `..` segments (encoded too, as `%2E`) before sending: a name like that
      // would reach another route. Every `/` is encoded, so no other value leaves its segment.
      if (/^(\.|%2e){1,2}$/i.test(String(value))) throw new TypeError(`${operationId}: ${name} cannot be "${value}"`);
      return encodeURIComponent(String(value));
    });
    const query = new URLSearchParams();
    for (const [name, value] of Object.entries(input.query ?? {})) if (value !== undefined) query.append(name, String(value));
    const search = query.toString();
    return `${this.baseUrl}${path}${search ? `?${search}` : ''}`;
  }

  private async credentialHeaders(): Promise<Record<string, string>> {
    if (this.options.apiKey !== undefined) return { 'x-api-key': this.options.apiKey };
    if (this.options.token === undefined) return {};
    const token = typeof this.options.token === 'function' ? await this.options.token() : this.options.token;
    return { authorization: `Bearer ${token}` };
  }

  /**
   * Sends one operation and returns its answer (a 2xx, or a status in `accept`); throws
   * {@link FlowgateError} for any other. A POST carries an `Idempotency-Key`, made once here, so its
   * retries are the same logical call; GET, HEAD, PUT and DELETE are safe to repeat as they are.
   */
  async call(operationId: OperationId, input: CallInput = {}): Promise<Response> {
    const { method } = OPERATIONS[operationId];
    const url = this.url(operationId, input);
    const headers: Record<string, string> = { ...this.options.headers };
    for (const [name, value] of Object.entries(input.headers ?? {})) if (value !== undefined) headers[name.toLowerCase()] = value;
    let body = input.body;
    if (input.json !== undefined) {
      body = JSON.stringify(input.json);
      headers['content-type'] ??= 'application/json';
    }
    if (method === 'POST') headers['idempotency-key'] ??= newIdempotencyKey();
    const streamed = typeof ReadableStream !== 'undefined' && body instanceof ReadableStream;
    const retriable = !streamed && (SAFE_METHODS.has(method) || headers['idempotency-key'] !== undefined);
    for (let attempt = 0; ; attempt++) {
      let response: Response;
      try {
        response = await this.fetch(url, {
          method,
          headers: { ...headers, ...(await this.credentialHeaders()) },
          body: body as RequestInit['body'],
          signal: input.signal,
          redirect: input.redirect,
          // Node's fetch needs `duplex` to send a stream; browsers ignore what they do not know.
          ...(streamed && { duplex: 'half' }),
        } as RequestInit);
      } catch (cause) {
        if (input.signal?.aborted) throw cause;
        throw new FlowgateError({ status: 0, error: 'network_error', message: `${operationId}: ${(cause as Error)?.message ?? cause}`, operationId, cause });
      }
      if (response.ok || input.accept?.includes(response.status) || (input.redirect === 'manual' && response.type === 'opaqueredirect')) return response;
      const error = await errorFromResponse(response, operationId);
      const delay = this.retryDelay(error, attempt);
      if (!retriable || !RETRIED_STATUSES.has(response.status) || delay === undefined) throw error;
      await sleep(delay, input.signal);
    }
  }

  /** How long to wait before try `attempt + 1`, or `undefined` to give up. */
  private retryDelay(error: FlowgateError, attempt: number): number | undefined {
    const { retries, baseDelayMs, maxDelayMs, maxRetryAfterSeconds } = this.retry;
    if (attempt >= retries) return undefined;
    if (error.retryAfter !== undefined) return error.retryAfter > maxRetryAfterSeconds ? undefined : error.retryAfter * 1000;
    // Full jitter (AWS Architecture Blog, "Exponential Backoff And Jitter"): many clients throttled
    // together do not come back together.
    return Math.random() * Math.min(maxDelayMs, baseDelayMs * 2 ** attempt);
  }

  /** Sends an operation and returns its JSON answer's `data`. */
  async data<K extends OperationId>(operationId: K, input: CallInput = {}): Promise<DataOf<K>> {
    const response = await this.call(operationId, input);
    return ((await response.json()) as { data: DataOf<K> }).data;
  }
}
