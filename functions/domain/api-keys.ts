import { createHash } from 'node:crypto';
import type { RandomBytes } from './random-bytes.js';

/** Prefix that makes a leaked key recognisable to secret scanners. */
export const API_KEY_PREFIX = 'fgk_';
/** 256 random bits per key. */
export const API_KEY_RANDOM_BYTES = 32;
/** A key as issued: the prefix and its random bytes in base64url (43 characters). */
export const API_KEY_PATTERN = new RegExp(`^${API_KEY_PREFIX}[A-Za-z0-9_-]{43}$`);
/** An id as `generateId` makes it by default (16 random bytes, hex): API keys' and triggers' ids. */
export const ID_PATTERN = /^[0-9a-f]{32}$/;

export const generateApiKey = (randomBytes: RandomBytes): string =>
  API_KEY_PREFIX + Buffer.from(randomBytes(API_KEY_RANDOM_BYTES)).toString('base64url');

export const generateId = (randomBytes: RandomBytes, bytes = 16): string => Buffer.from(randomBytes(bytes)).toString('hex');

/**
 * What is stored instead of a key. Keys carry 256 random bits, so a fast hash is enough: there is
 * nothing to brute-force, and a lookup by hash never compares the key itself.
 */
export const hashApiKey = (apiKey: string): string => createHash('sha256').update(apiKey, 'utf8').digest('hex');

/** A key as the owner sees it in a list: never the key or its hash. */
export interface ApiKeySummary {
  id: string;
  created_at: string;
}

/** Storage of gateway API keys. */
export interface ApiKeyStore {
  create(input: { accountId: string; id: string; keyHash: string; createdAt: string }): Promise<void>;
  /** The key's owner, or undefined for an unknown or revoked key. */
  findByHash(keyHash: string): Promise<{ accountId: string; id: string } | undefined>;
  list(accountId: string, page: { limit: number; cursor?: string }): Promise<{ items: ApiKeySummary[]; nextCursor: string | null }>;
  /** false when the account has no such key. */
  revoke(accountId: string, id: string): Promise<boolean>;
}
