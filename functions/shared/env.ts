import { AppError } from './errors.js';
import { QUEUES, TABLES, type QueueName, type TableName } from '../manifest.js';

/** A required setting; its absence is a deployment fault, reported as `internal_error`. */
export function requireEnv(name: string): string {
  const value = process.env[name];
  if (!value) throw new AppError('internal_error', `environment variable ${name} is not set`);
  return value;
}

export const tableName = (table: TableName): string => requireEnv(TABLES[table].env);
export const queueUrl = (queue: QueueName): string => requireEnv(QUEUES[queue].env);

/** A non-negative integer setting with a default, e.g. `WAIT_TIMEOUT_MS`. */
export function intEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < 0) throw new AppError('internal_error', `${name} must be a non-negative integer`);
  return value;
}
