import { afterAll, beforeAll } from 'vitest';
import { startLocalStack, type LocalStack, type LocalStackOptions } from '../../local/stack.js';

/**
 * Starts one local stack for the calling test file, with a 10 s visibility timeout: retries come
 * quickly, yet a worker run slowed down by a loaded machine is not redelivered as if it had failed and stops it afterwards. The returned object
 * is filled in `beforeAll`; read its fields inside tests, not at collection time.
 */
export function useLocalStack(options: LocalStackOptions = {}): LocalStack {
  const holder = {} as LocalStack;
  beforeAll(async () => {
    // Failed flows retry after 1 s, then 2, 4, 8 s: the whole retry path fits a test's time.
    Object.assign(holder, await startLocalStack({ port: 0, visibilityTimeoutSeconds: 10, ...options, env: { FLOW_RETRY_BASE_SECONDS: '1', ...options.env } }));
  });
  afterAll(async () => {
    await holder.stop?.();
  });
  return holder;
}

export interface CallOptions {
  token?: string;
  apiKey?: string;
  headers?: Record<string, string>;
  body?: unknown;
  rawBody?: string | Uint8Array;
}

/** A request to the local stack; `body` is sent as JSON. */
export async function call(stack: LocalStack, method: string, path: string, options: CallOptions = {}) {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.apiKey) headers['x-api-key'] = options.apiKey;
  let body: string | Uint8Array | undefined = options.rawBody;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  return readResponse(await fetch(stack.baseUrl + path, { method, headers, body }));
}

/** A fetch response read whole: its body as text, and as JSON when it parses (else `undefined`). */
export async function readResponse(response: Response) {
  const text = await response.text();
  let json: any;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: response.status, headers: response.headers, text, json };
}
