import { ID_PATTERN } from '../domain/api-keys.js';
import { LIST_STATUSES, OUTCOMES } from '../domain/stats/outcomes.js';
import { MAX_BUCKETS } from '../domain/stats/read-stats.js';
import { MAX_REFUSED_RECORDS_PER_MINUTE } from '../domain/webhooks/refusal-budget.js';
import { dataBody, errorBody, named, pageParameters, type OperationDocs, type Schema } from './types.js';

const count = { type: 'integer' } as const;
const OUTCOME_WORDS =
  'Outcomes: ' + OUTCOMES.map((outcome) => `\`${outcome}\` (list status ${LIST_STATUSES[outcome].map((s) => `\`${s}\``).join(' or ')})`).join(', ') + '. ' +
  '`queued` counts an acknowledged delivery whose run failed and waits for its retry (and, once the worker has taken it again, runs). ' +
  'A delivery between its acceptance and the end of its first run is counted only once that run ends: normally a second or two (a wait-mode one: its flow\'s time); ' +
  'counting it on arrival would cost every acknowledged delivery one more write unit.';
const counts = (description: string): Schema => ({
  type: 'object',
  description,
  required: [...OUTCOMES, 'total'],
  properties: { ...Object.fromEntries(OUTCOMES.map((outcome) => [outcome, count])), total: { ...count, description: 'The sum of the outcomes.' } },
});
const bucket: Schema = {
  ...counts('One bucket: the deliveries received from `start` for a minute or an hour.'),
  required: ['start', ...OUTCOMES, 'total'],
  properties: { start: { type: 'string', format: 'date-time' }, ...(counts('').properties as Record<string, Schema>) },
};
const period = {
  bucket: { type: 'string', enum: ['minute', 'hour'] },
  since: { type: 'string', format: 'date-time', description: 'The period counted: `since` rounded down to a whole bucket.' },
  until: { type: 'string', format: 'date-time', description: '`until` rounded up to a whole bucket (exclusive).' },
};
const triggerCounts = (extra: Record<string, Schema>): Schema => ({
  type: 'object',
  required: [...Object.keys(extra), 'buckets', 'totals'],
  properties: { ...extra, buckets: { type: 'array', items: bucket, description: 'Every bucket of the period, oldest first, zeros included.' }, totals: counts('The whole period.') },
});
const triggerId = { type: 'string', pattern: ID_PATTERN.source };

const parameters = [
  { name: 'since', in: 'query' as const, description: 'Received at or after (ISO 8601), rounded down to the bucket. Default: 60 minutes or 24 hours before `until`.', schema: { type: 'string' } },
  { name: 'until', in: 'query' as const, description: 'Received before (ISO 8601), rounded up to the bucket. Default: the end of the current minute or hour.', schema: { type: 'string' } },
  { name: 'bucket', in: 'query' as const, description: `\`minute\` (at most ${MAX_BUCKETS.minute} at once) or \`hour\` (at most ${MAX_BUCKETS.hour}); default \`hour\`.`, schema: { type: 'string', enum: ['minute', 'hour'], default: 'hour' } },
];
const invalidQuery = errorBody(
  `validation_error: \`bucket\` not \`minute\` or \`hour\`; \`since\`/\`until\` not ISO 8601, or \`since\` not before \`until\`; more than ${MAX_BUCKETS.minute} minutes or ${MAX_BUCKETS.hour} hours at once.`,
);

const HOW =
  `Counted as deliveries are recorded, never by reading the executions: the receiver adds the outcomes it decides (refused, as recorded: at most ${MAX_REFUSED_RECORDS_PER_MINUTE} a minute; ignored, duplicate, handshake; ` +
  'a wait-mode run\'s result) with one write each, and the flow worker adds a batch\'s outcomes with one write per trigger and minute. ' +
  'Each delivery is counted in the bucket of its `received_at`, so the counts agree with `GET /triggers/{id}/executions?since=&until=&status=` for the same period ' +
  '(`queued` with `status=queued,running`, less the deliveries still in their first run, above). Counts are kept 7 days, as the executions are. ';
const COST =
  'What a read costs: `bucket=minute` is one Query per shard (8) over the period\'s minute counters. `bucket=hour` reads one Query of hour totals; an hour that ended over 75 minutes ago ' +
  'is answered from its cached total, and the others (the last two or three, and any not read before) are summed from their minutes by one Query per shard and, once settled, cached ' +
  '(one write each, once). So a week by hours reads at most 168 hour items and the minutes of the last ~3 hours after its first read, which reads a week of minutes once.';

export const triggerStatsDocs: OperationDocs = {
  getTriggerStats: {
    description: `The trigger's deliveries counted by outcome, per minute or hour, with totals. ${HOW}${OUTCOME_WORDS} ${COST}`,
    parameters,
    responses: {
      '200': dataBody('Counts by bucket', named('TriggerStats', triggerCounts({ trigger_id: triggerId, ...period }))),
      '400': invalidQuery,
      '404': errorBody('not_found: no trigger with this id in the caller\'s account.'),
    },
  },
  listTriggerStats: {
    description:
      'The counts of `GET /triggers/{id}/stats` for a page of the caller\'s triggers (in the order of `GET /triggers`), over one period: what a dashboard or the triggers list ' +
      'needs in one request. Each trigger costs what its own stats read costs, and they are read four at a time. ' + OUTCOME_WORDS,
    parameters: [...pageParameters('Triggers', { max: 100, default: 20 }), ...parameters],
    responses: {
      '200': dataBody('Counts by trigger', {
        type: 'object',
        required: ['bucket', 'since', 'until', 'triggers', 'next_cursor'],
        properties: {
          ...period,
          triggers: { type: 'array', items: triggerCounts({ trigger_id: triggerId, name: { type: 'string', description: 'The trigger\'s name, or its flow\'s when it has none.' }, flow: { type: 'string' }, enabled: { type: 'boolean' } }) },
          next_cursor: { type: ['string', 'null'], description: 'Pass as `cursor` for the next page of triggers; `null` on the last page.' },
        },
      }),
      '400': errorBody(`${invalidQuery.description} Also \`limit\` not an integer from 1 to 100, or a malformed cursor.`),
    },
  },
};
