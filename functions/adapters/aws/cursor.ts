import { AppError } from '../../shared/errors.js';

type Key = Record<string, unknown>;

/**
 * Opaque list cursors. Only the sort key travels; the partition is always re-derived from the
 * caller's own account, so a forged cursor can never page through another account's items.
 */
export function encodeCursor(lastKey: Key | undefined): string | null {
  if (!lastKey) return null;
  return Buffer.from(JSON.stringify({ sk: lastKey.sk }), 'utf8').toString('base64url');
}

export function decodeCursor(cursor: string | undefined, pk: string): Key | undefined {
  if (cursor === undefined) return undefined;
  try {
    if (cursor.length > 4096) throw new Error('too long');
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    const sk = (value as { sk?: unknown }).sk;
    if (typeof sk !== 'string' || sk.length === 0) throw new Error('bad cursor');
    return { pk, sk };
  } catch {
    throw new AppError('validation_error', 'cursor is not valid');
  }
}
