import { randomBytes } from 'node:crypto';
import type { IdempotencyRunner } from '../../shared/idempotent-route.js';
import { onFirstUse } from '../lazy.js';
import type { AwsClients } from './clients.js';

/**
 * The idempotency step of a function whose routes honour `Idempotency-Key`, with its records in
 * `table`: loaded by the first request that sends a key, so a function's init carries none of it.
 */
export const idempotencyOnFirstUse = (table: string, aws: AwsClients, now = Date.now): (() => Promise<IdempotencyRunner>) =>
  onFirstUse(async () => (await import('./first-use/idempotency.js')).idempotency(table, aws, now, randomBytes));
