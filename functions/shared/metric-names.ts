/**
 * The service's own CloudWatch metrics: written by the functions in Embedded Metric Format
 * (`metrics.ts`), graphed by the dashboard (`lib/constructs/alarms.ts`). Every metric carries the
 * `service` dimension (`flowgate`; each metric is written by one function); a few carry one more, always from a bounded set of values,
 * never an id (each distinct dimension value is a metric of its own, billed as such).
 */
export const METRICS_NAMESPACE = 'Flowgate';
/** The `service` dimension of every metric, and the `service` of every log line: the service's name. */
export const METRICS_SERVICE = 'flowgate';

export const METRIC = {
  /** Every request to a trigger URL. */
  webhooksReceived: 'WebhooksReceived',
  /** Deliveries that start the flow: queued (acknowledge) or run while the sender waits (wait). */
  webhooksAccepted: 'WebhooksAccepted',
  /** Deliveries the trigger's event filter leaves out. */
  webhooksIgnored: 'WebhooksIgnored',
  /** Repeats of an event id already delivered within the dedup window. */
  webhooksDuplicate: 'WebhooksDuplicate',
  /** Deliveries answered with an error, by `reason` (the error code: `invalid_signature`, `not_found`, …). */
  webhooksRefused: 'WebhooksRefused',
  /** Refused deliveries past a trigger's budget of 10 recorded per minute (`refusal-budget.ts`): counted here, not stored; each still has its metric line (reason, trigger, request id). */
  webhookRefusalsNotRecorded: 'WebhookRefusalsNotRecorded',
  /** Deliveries replayed (`POST …/replay`): each runs its flow again as a new, queued execution. */
  deliveriesReplayed: 'DeliveriesReplayed',
  /** Flow runs by outcome (dimension `flow`: a deployed flow's name), from the receiver and the worker. */
  flowRunsSucceeded: 'FlowRunsSucceeded',
  flowRunsFailed: 'FlowRunsFailed',
  flowRunsTimedOut: 'FlowRunsTimedOut',
  /** How long a flow run took, in milliseconds (dimension `flow`). */
  flowRunDuration: 'FlowRunDuration',
  /** Purges of a KV bucket (each starts a sweep). */
  kvPurges: 'KvPurges',
  /** Items of old generations the sweeper deleted. */
  kvItemsReclaimed: 'KvItemsReclaimed',
  /** TOTP confirmation codes that did not match. */
  totpConfirmationsFailed: 'TotpConfirmationsFailed',
  /** Code and step-up checks (confirm, verify, recovery, removal, regeneration) refused because the user had used up their attempts (429). */
  totpLockouts: 'TotpLockouts',
} as const;
export type MetricName = (typeof METRIC)[keyof typeof METRIC];

/** The one extra dimension a metric may carry. */
export const METRIC_DIMENSION = { reason: 'reason', flow: 'flow' } as const;
