import { AppError } from '../../shared/errors.js';
import { isPlainObject } from '../../shared/json.js';
import { EXECUTION_STATUSES, type ExecutionFilter, type ExecutionStatus } from './ports.js';

const MAX_TYPE_LENGTH = 256;
const MAX_EVENT_ID_LENGTH = 256;
/** A date, or a date-time with seconds optional, fractions optional, and `Z` or an offset. */
const ISO_8601 = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2}))?$/;

const invalid = (message: string) => new AppError('validation_error', undefined, undefined, message);

function statuses(value: unknown): ExecutionStatus[] | undefined {
  if (value === undefined) return undefined;
  const list = typeof value === 'string' ? value.split(',') : value;
  if (!Array.isArray(list) || list.length === 0) throw invalid('status must be one or more statuses');
  for (const status of list) {
    if (!(EXECUTION_STATUSES as readonly unknown[]).includes(status)) throw invalid(`status must be among ${EXECUTION_STATUSES.join(', ')}`);
  }
  return [...new Set(list as ExecutionStatus[])];
}

function text(value: unknown, name: string, max: number): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.length === 0 || value.length > max) throw invalid(`${name} must be 1 to ${max} characters`);
  return value;
}

function type(value: unknown): string | undefined {
  const type = text(value, 'type', MAX_TYPE_LENGTH);
  if (type !== undefined && (type === '*' || type.slice(0, -1).includes('*'))) throw invalid('type may end in one * (a prefix), and have none elsewhere');
  return type;
}

/** An ISO 8601 time, normalised to `toISOString`'s form, which is how records store and compare it. */
function time(value: unknown, name: string): string | undefined {
  if (value === undefined) return undefined;
  const ms = typeof value === 'string' && ISO_8601.test(value) ? Date.parse(value) : Number.NaN;
  if (!Number.isFinite(ms)) throw invalid(`${name} must be an ISO 8601 date or date-time`);
  return new Date(ms).toISOString();
}

/** The filters from a query string or a JSON body: `status` (comma-separated or an array), `type`, `event_id`, `since`, `until`. */
export function parseExecutionFilter(input: Record<string, unknown>): ExecutionFilter {
  const filter: ExecutionFilter = {
    statuses: statuses(input.status),
    type: type(input.type),
    eventId: text(input.event_id, 'event_id', MAX_EVENT_ID_LENGTH),
    since: time(input.since, 'since'),
    until: time(input.until, 'until'),
  };
  if (filter.since !== undefined && filter.until !== undefined && filter.since >= filter.until) throw invalid('since must be before until');
  return Object.fromEntries(Object.entries(filter).filter(([, value]) => value !== undefined)) as ExecutionFilter;
}

export const MAX_REPLAYS_PER_CALL = 500;
const BULK_REPLAY_FIELDS: ReadonlySet<string> = new Set(['status', 'type', 'event_id', 'since', 'until', 'cursor', 'limit']);

export interface BulkReplayRequest {
  filter: ExecutionFilter;
  limit: number;
  cursor?: string;
}

/**
 * `POST /triggers/{id}/replay`'s body: the list's filters, at least one of `status` and `since`
 * (so that "replay everything ever" is never one careless call), `limit` up to 500, `cursor`.
 */
export function parseBulkReplay(body: unknown): BulkReplayRequest {
  if (!isPlainObject(body)) throw invalid('body must be a JSON object');
  const unknown = Object.keys(body).find((name) => !BULK_REPLAY_FIELDS.has(name));
  if (unknown !== undefined) throw invalid(`unknown field ${unknown}`);
  if (body.status !== undefined && !Array.isArray(body.status)) throw invalid('status must be an array of statuses');
  const filter = parseExecutionFilter(body);
  if (!filter.statuses && filter.since === undefined) throw invalid('status or since is required');
  const { limit = MAX_REPLAYS_PER_CALL, cursor } = body;
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > MAX_REPLAYS_PER_CALL) throw invalid(`limit must be an integer from 1 to ${MAX_REPLAYS_PER_CALL}`);
  if (cursor !== undefined && (typeof cursor !== 'string' || cursor.length === 0)) throw invalid('cursor must be a string');
  return { filter, limit, ...(cursor !== undefined && { cursor }) };
}
