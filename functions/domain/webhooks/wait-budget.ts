/**
 * How long a wait-mode delivery may wait for its flow, so that the service's own 504
 * `flow_timeout` always reaches the sender before API Gateway gives up with its bare 503.
 *
 * API Gateway HTTP APIs wait at most 30 s for an integration, counted from when the gateway
 * received the request, so a cold start and the reads before the flow (trigger, secret, execution
 * record) all come out of those 30 s; the function itself stops at its own timeout (29 s).
 * https://docs.aws.amazon.com/apigateway/latest/developerguide/http-api-quotas.html
 *
 *   gateway receives ─┬─ cold start ─ reads ─ flow runs ──────────────┬─ record outcome, answer ─┬─ 30 s: gateway 503
 *                     │                                               │◀── OUTCOME_RESERVE_MS ──▶│
 *                     └────────────── deadline: arrival + 30 s − reserve (or the function's end) ┘
 *
 * The wait therefore ends at the earliest of `WAIT_TIMEOUT_MS` after the flow starts, 28 s after
 * the gateway received the request, and 2 s before the function's own timeout.
 */
export const API_GATEWAY_INTEGRATION_TIMEOUT_MS = 30_000;
/** Time kept after the wait for the execution record's update and the answer itself. */
export const OUTCOME_RESERVE_MS = 2_000;
/** The most a deployment may set `WAIT_TIMEOUT_MS` to: never past the gateway's deadline. */
export const MAX_WAIT_TIMEOUT_MS = API_GATEWAY_INTEGRATION_TIMEOUT_MS - OUTCOME_RESERVE_MS;

/**
 * @param answerByMs epoch ms by which the answer must be sent (arrival + the gateway's limit, or
 *   the function's end, whichever is first); undefined when nothing outside bounds the wait.
 * @returns ms the flow may run; 0 or less means there is no time left to start it.
 */
export function flowWaitMs(input: { waitTimeoutMs: number; nowMs: number; answerByMs?: number }): number {
  if (input.answerByMs === undefined) return input.waitTimeoutMs;
  return Math.min(input.waitTimeoutMs, input.answerByMs - OUTCOME_RESERVE_MS - input.nowMs);
}

/**
 * The longest a wait-mode delivery can wait for `flow`, in whole seconds (rounded up): the
 * deployment's `WAIT_TIMEOUT_MS`, or the flow's own `TimeoutSeconds` when that is shorter (the flow
 * then fails first). What the console compares with a sender's delivery time-out.
 */
export function flowWaitLimitSeconds(input: { waitTimeoutMs: number; definition: Record<string, unknown> }): number {
  const own = input.definition.TimeoutSeconds;
  const waitSeconds = Math.ceil(input.waitTimeoutMs / 1000);
  return typeof own === 'number' && Number.isInteger(own) && own > 0 ? Math.min(own, waitSeconds) : waitSeconds;
}
