import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';

/** The error codes a client can see, each with its HTTP status. */
export const ERROR_STATUS = {
  validation_error: 400,
  invalid_code: 400,
  unauthorized: 401,
  invalid_signature: 401,
  ip_not_allowed: 403,
  forbidden: 403,
  mfa_required: 403,
  not_found: 404,
  method_not_allowed: 405,
  already_exists: 409,
  already_registered: 409,
  conflict: 409,
  not_replayable: 409,
  stream_full: 409,
  idempotency_key_reused: 409,
  idempotency_key_in_flight: 409,
  precondition_failed: 412,
  payload_too_large: 413,
  headers_too_large: 431,
  unsupported_media_type: 415,
  range_not_satisfiable: 416,
  too_many_attempts: 429,
  internal_error: 500,
  flow_failed: 502,
  unavailable: 503,
  flow_timeout: 504,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

/**
 * The one error type of the service. Domain code and adapters throw it; `toHttpResponse`
 * turns it into `{"error": code}` with its status. `detail` is for logs only, never sent;
 * `message`, when given, is sent as `{"error": code, "message": …}`: words for the caller that
 * say which of its own fields is wrong (never anything of ours).
 */
export class AppError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    readonly detail?: string,
    readonly headers?: Record<string, string>,
    readonly publicMessage?: string,
    /** Only where one code means two things by operation: `invalid_code` is 401 at sign-in, 400 at enrolment. */
    status?: 401,
  ) {
    super(detail ? `${code}: ${detail}` : code);
    this.name = 'AppError';
    this.status = status ?? ERROR_STATUS[code];
  }
}

export const isAppError = (error: unknown): error is AppError => error instanceof AppError;

/**
 * The single mapping from anything thrown to an HTTP response. Unknown errors become a plain
 * 500 `internal_error`: no message, no stack, nothing internal reaches the client.
 */
/** Errors that are faults to log (the caller logs them): not answers such as refusals or flow outcomes. */
export const isFault = (error: AppError): boolean => error.code === 'internal_error' || error.code === 'unavailable';

export function toHttpResponse(error: unknown): APIGatewayProxyStructuredResultV2 {
  const appError = isAppError(error) ? error : new AppError('internal_error');
  return {
    statusCode: appError.status,
    headers: { 'content-type': 'application/json', ...appError.headers },
    body: JSON.stringify(appError.publicMessage === undefined ? { error: appError.code } : { error: appError.code, message: appError.publicMessage }),
  };
}
