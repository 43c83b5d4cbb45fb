import { AppError } from '../../shared/errors.js';

type Key = Record<string, unknown>;

/** DynamoDB refuses a sort key over 1,024 bytes, also as an `ExclusiveStartKey` (a 500 if it got that far). */
const MAX_SORT_KEY_BYTES = 1024;

/**
 * Opaque list cursors. Only the sort key travels; the partition is always re-derived from the
 * caller's own account, so a forged cursor can never page through another account's items.
 */
export function encodeCursor(lastKey: Key | undefined): string | null {
  if (!lastKey) return null;
  return Buffer.from(JSON.stringify({ sk: lastKey.sk }), 'utf8').toString('base64url');
}

/**
 * @param skPrefix the `begins_with` prefix of the query the cursor continues. A forged cursor
 *   outside it, or longer than a sort key can be, would reach DynamoDB as a start key it refuses
 *   with a ValidationException (a 500); it is a 400 `validation_error` here instead.
 */
export function decodeCursor(cursor: string | undefined, pk: string, skPrefix = ''): Key | undefined {
  if (cursor === undefined) return undefined;
  try {
    if (cursor.length > 4096) throw new Error('too long');
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    const sk = (value as { sk?: unknown }).sk;
    if (typeof sk !== 'string' || sk.length === 0) throw new Error('bad cursor');
    if (!sk.startsWith(skPrefix) || Buffer.byteLength(sk, 'utf8') > MAX_SORT_KEY_BYTES) throw new Error('cursor outside this listing');
    return { pk, sk };
  } catch {
    throw new AppError('validation_error', undefined, undefined, 'cursor is not valid');
  }
}
