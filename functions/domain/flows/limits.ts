/**
 * Step Functions refuses an execution input (and fails an output) over 256 KiB of UTF-8:
 * https://docs.aws.amazon.com/step-functions/latest/dg/service-quotas.html#service-limits-task-executions
 * The receiver refuses at the door an event whose flow input would pass it (413), rather than
 * acknowledge an event whose flow can never start; the local engine enforces the same limit.
 */
export const MAX_FLOW_INPUT_BYTES = 256 * 1024;

/** Express workflows stop after five minutes in AWS; so does the local engine. */
export const EXPRESS_MAX_DURATION_MS = 5 * 60_000;

/** Retries back off from this delay, doubling each time (15 s, 30 s, 1 min, 2 min by default). */
export const DEFAULT_RETRY_BASE_SECONDS = 15;
/** No retry waits longer than this, whatever the attempt (also SQS's longest `DelaySeconds`). */
export const MAX_RETRY_DELAY_SECONDS = 15 * 60;
