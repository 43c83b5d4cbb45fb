import { AppError } from '../../shared/errors.js';
import type { ObjectCatalog, Store } from './types.js';

export interface UsageDelta {
  objects: number;
  bytes: number;
}

/**
 * Counts a write's bytes in the store's usage before they land, so that `max_bytes` holds: a
 * conditional update of the store item, at its current generation. 413 when the store is full;
 * 409 when the store was purged or deleted since it was read.
 */
export async function reserveUsage(catalog: ObjectCatalog, store: Store, delta: UsageDelta): Promise<void> {
  if (await catalog.adjustUsage(store, store, delta, store.config.maxBytes)) return;
  const now = await catalog.getStore(store);
  if (!now || now.id !== store.id || now.generation !== store.generation) throw new AppError('conflict', 'store changed during the write', undefined, 'the store was purged or deleted during the write');
  const message = `the store's max_bytes is ${store.config.maxBytes} bytes and it holds ${now.usage.bytes}`;
  throw new AppError('payload_too_large', message, undefined, message);
}

/** Gives bytes back; nothing when the store has moved to another generation (its usage started again at 0). */
export async function releaseUsage(catalog: ObjectCatalog, store: Store, delta: UsageDelta): Promise<void> {
  await catalog.adjustUsage(store, store, { objects: -delta.objects, bytes: -delta.bytes }, null);
}
