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
 * The words a 4xx carries when its call site gives none: one fixed line per code, the same for every
 * cause, so a refusal of a credential, a signature or another account's resource says what to check
 * without saying which check failed. 5xx codes have none: the caller has nothing to fix (`internal_error`
 * never says more; `unavailable` carries words only where its call site gives a retry rule).
 */
export const DEFAULT_MESSAGE: Partial<Record<ErrorCode, string>> = {
  validation_error: 'the request is not valid',
  invalid_code: 'the code is not valid',
  unauthorized: 'send a valid token or API key',
  invalid_signature: "the signature does not match: check the trigger's secret and the sender's signing settings",
  ip_not_allowed: "this address is not in the trigger's allow list",
  forbidden: 'this credential may not do this',
  mfa_required: 'send a fresh step-up proof in X-MFA-Token',
  not_found: 'not found',
  method_not_allowed: 'see Allow for the methods',
  already_exists: 'it already exists',
  already_registered: 'the user already has a factor',
  conflict: 'it changed meanwhile: retry',
  not_replayable: 'this execution cannot be replayed',
  stream_full: 'the stream is full',
  idempotency_key_reused: 'the key came with another request',
  idempotency_key_in_flight: "the key's request is still running",
  precondition_failed: 'If-Match does not match',
  payload_too_large: 'the body is too large',
  headers_too_large: 'the headers are too large',
  unsupported_media_type: 'send content-type: application/json',
  range_not_satisfiable: 'the range is outside the object',
  too_many_attempts: 'retry after Retry-After',
};

/**
 * The one error type of the service. Domain code and adapters throw it; `toHttpResponse`
 * turns it into `{"error": code, "message": …}` with its status. `detail` is for logs only, never sent;
 * `publicMessage` is sent as the `message`: words for the caller that say which of its own fields is
 * wrong and what to send instead (never anything of ours: no table, key, ARN or route). A 4xx without
 * one gets its code's `DEFAULT_MESSAGE`.
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
    const said = detail ?? publicMessage;
    super(said ? `${code}: ${said}` : code);
    this.name = 'AppError';
    this.status = status ?? ERROR_STATUS[code];
  }
}

export const isAppError = (error: unknown): error is AppError => error instanceof AppError;

/**
 * What a 404 says, by the kind of thing asked for: which thing is not there and, where it helps,
 * where to look; never why, so a resource that never existed, was deleted or is another account's
 * reads the same. A webhook URL that leads nowhere keeps `DEFAULT_MESSAGE`: a sender learns nothing.
 */
export const NOT_FOUND = {
  route: 'no route for this method and path (GET /openapi.json lists them)',
  trigger: 'no trigger with this id in this account (an id is 32 hex characters; GET /triggers lists them)',
  execution: 'no execution with this id on this trigger',
  flow: 'no flow of this name is deployed (GET /flows lists them)',
  apiKey: 'no API key with this id in this account',
  bucket: 'no KV bucket of this name in this account',
  bucketDeleted: 'the bucket was deleted meanwhile',
  value: 'no value under this key (or it expired)',
  store: 'no object store of this name in this account',
  storeDeleted: 'the object store was deleted meanwhile',
  object: 'no object under this key (or it expired)',
  upload: 'no open upload with this id: it was completed, aborted or has expired',
  stream: 'no stream of this name in this account',
  consumer: 'no consumer of this name on this stream',
  message: 'no message with this sequence number (not published yet, expired or skipped)',
  notPending: 'this message is not pending for this consumer: it was acked, or never fetched',
  index: 'no search index of this name in this account',
  document: 'no document with this id in this index',
  file: 'no such file',
} as const;

/** A 404 saying `NOT_FOUND[what]`; `detail` (logs only) may say more. */
export const notFound = (what: keyof typeof NOT_FOUND, detail?: string): AppError =>
  new AppError('not_found', detail ?? NOT_FOUND[what], undefined, NOT_FOUND[what]);

/**
 * The single mapping from anything thrown to an HTTP response. Unknown errors become a plain
 * 500 `internal_error`: no message, no stack, nothing internal reaches the client.
 */
/** Errors that are faults to log (the caller logs them): not answers such as refusals or flow outcomes. */
export const isFault = (error: AppError): boolean => error.code === 'internal_error' || error.code === 'unavailable';

export function toHttpResponse(error: unknown): APIGatewayProxyStructuredResultV2 {
  const appError = isAppError(error) ? error : new AppError('internal_error');
  const message = appError.publicMessage ?? DEFAULT_MESSAGE[appError.code];
  return {
    statusCode: appError.status,
    headers: { 'content-type': 'application/json', ...appError.headers },
    body: JSON.stringify(message === undefined ? { error: appError.code } : { error: appError.code, message }),
  };
}
