import { AppError } from '../../shared/errors.js';
import { isExpired } from '../kv/service.js';
import type { ObjectInfo } from './types.js';

/** `If-None-Match: *` (`ifNoneMatch`) and `If-Match: <etag>` of a write: an object written through the API or a presigned upload. */
export interface WriteCondition {
  ifNoneMatch?: boolean;
  ifMatch?: string;
}

/** An etag as HTTP quotes it, whether or not the client quoted it. */
const quoted = (etag: string): string => (etag.startsWith('"') ? etag : `"${etag}"`);

/**
 * A write's condition against what the key holds (an expired object is nothing): 409 when
 * `If-None-Match: *` finds an object, 412 when `If-Match` does not name its etag. The catalog's
 * compare-and-swap on what was read then makes the check hold at the moment of the write.
 */
export function checkCondition(condition: WriteCondition, stored: ObjectInfo | undefined, nowMs: number): void {
  const live = stored && !isExpired(stored, nowMs) ? stored : undefined;
  if (condition.ifNoneMatch && live) throw new AppError('already_exists', undefined, undefined, 'the key exists and If-None-Match is *');
  if (condition.ifMatch !== undefined && (!live || (condition.ifMatch !== '*' && quoted(condition.ifMatch) !== live.etag))) {
    throw new AppError('precondition_failed', undefined, undefined, 'If-Match does not match the current etag: read it again');
  }
}
