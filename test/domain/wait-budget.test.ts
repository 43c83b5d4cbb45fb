import { describe, expect, it } from 'vitest';
import { API_GATEWAY_INTEGRATION_TIMEOUT_MS, flowWaitLimitSeconds, flowWaitMs, OUTCOME_RESERVE_MS } from '../../functions/domain/webhooks/wait-budget.js';

describe('flowWaitMs', () => {
  const arrivedAt = 1_000_000;
  const answerBy = arrivedAt + API_GATEWAY_INTEGRATION_TIMEOUT_MS;

  it('is the configured wait when the request arrived just now', () => {
    expect(flowWaitMs({ waitTimeoutMs: 25_000, nowMs: arrivedAt + 50, answerByMs: answerBy })).toBe(25_000);
  });

  it('shrinks by the time a cold start took, keeping the outcome reserve before the gateway\'s limit', () => {
    expect(flowWaitMs({ waitTimeoutMs: 25_000, nowMs: arrivedAt + 10_000, answerByMs: answerBy })).toBe(API_GATEWAY_INTEGRATION_TIMEOUT_MS - 10_000 - OUTCOME_RESERVE_MS);
  });

  it('leaves no time once the gateway\'s limit, less the reserve, has passed', () => {
    expect(flowWaitMs({ waitTimeoutMs: 25_000, nowMs: arrivedAt + 28_500, answerByMs: answerBy })).toBeLessThanOrEqual(0);
  });

  it('is the configured wait when nothing outside bounds it', () => {
    expect(flowWaitMs({ waitTimeoutMs: 7_000, nowMs: 5 })).toBe(7_000);
  });
});

describe('flowWaitLimitSeconds (GET /flows/{name}, which the console compares with a sender\'s time-out)', () => {
  it('is WAIT_TIMEOUT_MS in whole seconds, rounded up, for a flow without its own TimeoutSeconds', () => {
    expect(flowWaitLimitSeconds({ waitTimeoutMs: 25_000, definition: { StartAt: 'A', States: {} } })).toBe(25);
    expect(flowWaitLimitSeconds({ waitTimeoutMs: 2_500, definition: {} })).toBe(3);
  });

  it('is the flow\'s own TimeoutSeconds when that is shorter, and ignores one that is not a positive integer', () => {
    expect(flowWaitLimitSeconds({ waitTimeoutMs: 25_000, definition: { TimeoutSeconds: 2 } })).toBe(2);
    expect(flowWaitLimitSeconds({ waitTimeoutMs: 8_000, definition: { TimeoutSeconds: 60 } })).toBe(8);
    expect(flowWaitLimitSeconds({ waitTimeoutMs: 8_000, definition: { TimeoutSeconds: '2' } })).toBe(8);
  });
});
