/**
 * How large a webhook body the receiver can be configured to take, derived from how the body
 * travels to the function. Lambda takes at most 6 MB (6,291,456 bytes) per synchronous invocation
 * (https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html), and the body rides
 * inside API Gateway's JSON event: base64 for bodies it treats as binary (4 bytes per 3), and a
 * JSON string for text bodies, where each control byte becomes a six-byte `\u00XX` escape. A body
 * of control bytes sent as `application/json` is the worst case, 6 bytes per byte; a larger one
 * would fail the invocation, and the sender would get API Gateway's bare 500 instead of our 413.
 */
export const LAMBDA_INVOCATION_PAYLOAD_BYTES = 6 * 1024 * 1024;
/** Worst-case growth of one body byte in the event (`\u00XX`). */
export const EVENT_BODY_EXPANSION = 6;
/**
 * The rest of the event: headers and query (HTTP APIs cap the request line and headers at 10 KB,
 * and the event carries path and query twice), request context, field names.
 */
export const EVENT_ENVELOPE_RESERVE_BYTES = 64 * 1024;
/** 1,037,653 bytes: the largest `WEBHOOK_MAX_BODY_BYTES` that always fits one invocation. */
export const MAX_WEBHOOK_BODY_BYTES = Math.floor((LAMBDA_INVOCATION_PAYLOAD_BYTES - EVENT_ENVELOPE_RESERVE_BYTES) / EVENT_BODY_EXPANSION);
/**
 * The default limit. Any event that starts a flow must also fit Step Functions' 256 KiB input
 * (`MAX_FLOW_INPUT_BYTES`), which binds first; this one keeps a body that is filtered out,
 * answered as a duplicate or a Slack challenge from costing more than a megabyte to read.
 */
export const DEFAULT_WEBHOOK_MAX_BODY_BYTES = 1_000_000;
