import type { ErrorCode } from './errors.js';
import { METRIC, METRIC_DIMENSION } from './metric-names.js';
import type { MetricsRecorder } from './metrics.js';

/** How an answer on a route ended: its status and, for an error, its code. */
export interface RouteOutcome {
  status: number;
  error?: ErrorCode;
}

/**
 * The metrics an answer counts, by the route's operation id: read from the answer alone, so the
 * use cases stay free of metrics. (Accepted, ignored and duplicate deliveries are counted where the
 * receiver records them, and flow runs where they run: see `functions/adapters/metered-*.ts`.)
 */
/** Every code or proof check refused while the user's attempts are used up. */
function countLockout(outcome: RouteOutcome, metrics: MetricsRecorder): void {
  if (outcome.error === 'too_many_attempts') metrics.count(METRIC.totpLockouts);
}

const ROUTE_METRICS: Record<string, (outcome: RouteOutcome, metrics: MetricsRecorder) => void> = {
  receiveWebhook(outcome, metrics) {
    metrics.count(METRIC.webhooksReceived);
    // A wait-mode flow that failed or timed out was accepted; its run is counted as failed.
    if (outcome.error && outcome.error !== 'flow_failed' && outcome.error !== 'flow_timeout') {
      metrics.count(METRIC.webhooksRefused, 1, { name: METRIC_DIMENSION.reason, value: outcome.error });
    }
  },
  purgeKVBucket(outcome, metrics) {
    if (outcome.status < 300) metrics.count(METRIC.kvPurges);
  },
  confirmTotpRegistration(outcome, metrics) {
    if (outcome.error === 'invalid_code') metrics.count(METRIC.totpConfirmationsFailed);
    countLockout(outcome, metrics);
  },
  verifyTotp: countLockout,
  verifyRecoveryCode: countLockout,
  removeFactor: countLockout,
  regenerateRecoveryCodes: countLockout,
  startTotpRegistration: countLockout,
};

export function countRouteMetrics(operationId: string, outcome: RouteOutcome, metrics: MetricsRecorder): void {
  ROUTE_METRICS[operationId]?.(outcome, metrics);
}
