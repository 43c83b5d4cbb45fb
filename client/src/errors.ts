import type { components } from './generated/openapi.js';

/**
 * What `FlowgateError.error` can be: one of the product's codes, `network_error` when no answer
 * came, or `http_<status>` for an answer that is not the product's JSON (a proxy's page, S3's XML).
 */
export type FlowgateErrorCode = components['schemas']['ErrorCode'] | 'network_error' | `http_${number}`;

/**
 * The one error the client throws for an answer that is not a success: the product's
 * `{"error", "message"}` with the HTTP status and, on 429 and 503, how long to wait.
 */
export class FlowgateError extends Error {
  override readonly name = 'FlowgateError';
  /** The HTTP status (0 when no answer came: the request failed before one). */
  readonly status: number;
  /** The product's error code (`validation_error`, `not_found`, `rate_limited`, …): what a program branches on. */
  readonly error: FlowgateErrorCode;
  /** Seconds the `Retry-After` header asked to wait, when it was sent. */
  readonly retryAfter: number | undefined;
  /** The operation that answered (its `operationId`). */
  readonly operationId: string | undefined;

  constructor(init: { status: number; error: FlowgateErrorCode; message?: string; retryAfter?: number; operationId?: string; cause?: unknown }) {
    super(init.message ?? init.error, init.cause === undefined ? undefined : { cause: init.cause });
    this.status = init.status;
    this.error = init.error;
    this.retryAfter = init.retryAfter;
    this.operationId = init.operationId;
  }
}

/** `Retry-After` in seconds: delta-seconds or an HTTP date (RFC 9110, 10.2.3); `undefined` when absent or unreadable. */
export function parseRetryAfter(value: string | null, now: number): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}

/** The error for a non-2xx answer, its body read as the product's `{"error","message"}` when it is one. */
export async function errorFromResponse(response: Response, operationId?: string): Promise<FlowgateError> {
  const text = await response.text().catch(() => '');
  let error: FlowgateErrorCode = `http_${response.status}`;
  let message: string | undefined;
  try {
    const body = JSON.parse(text) as { error?: unknown; message?: unknown };
    if (typeof body.error === 'string') error = body.error as FlowgateErrorCode;
    if (typeof body.message === 'string') message = body.message;
  } catch {
    // Not the product's JSON (a proxy's page, S3's XML): the status says what there is to say.
  }
  return new FlowgateError({
    status: response.status,
    error,
    message: message ?? `${operationId ?? 'request'} answered ${response.status} ${error}`,
    retryAfter: parseRetryAfter(response.headers.get('retry-after'), Date.now()),
    operationId,
  });
}
