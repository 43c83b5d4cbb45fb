import { createHash } from 'node:crypto';
import { AppError } from '../shared/errors.js';
import type { RandomBytes } from './random-bytes.js';

/** Prefix that makes a leaked key recognisable to secret scanners. */
export const API_KEY_PREFIX = 'fgk_';
/** 256 random bits per key. */
export const API_KEY_RANDOM_BYTES = 32;
/** A key as issued: the prefix and its random bytes in base64url (43 characters). */
export const API_KEY_PATTERN = new RegExp(`^${API_KEY_PREFIX}[A-Za-z0-9_-]{43}$`);
/** An id as `generateId` makes it by default (16 random bytes, hex): API keys' and triggers' ids. */
export const ID_PATTERN = /^[0-9a-f]{32}$/;

/**
 * What a credential may reach, as Stripe's restricted keys and GitHub's fine-grained tokens have
 * it. `storage` is the KV buckets, object stores, streams and search indexes; `triggers` the webhook triggers,
 * their deliveries and flows; `:read` the reading routes only; `admin` all of them and the
 * account's view of its users' factors. `search:query` only queries, one search index named with the key
 * (and within its fixed filter, when it has one): a key a web page may hold. No scope reaches key management (users only) nor any
 * change to a factor (a user's own fresh step-up proof only).
 */
export const SCOPES = ['admin', 'storage', 'storage:read', 'triggers', 'triggers:read', 'search:query'] as const;
export type Scope = (typeof SCOPES)[number];

/** What any user may give a key they mint; `admin` needs an administrator and a fresh step-up proof. */
export const USER_MINTABLE_SCOPES: readonly Scope[] = ['storage', 'storage:read', 'triggers', 'triggers:read', 'search:query'];
/**
 * The scopes of a key stored before scopes existed (no `scopes` attribute), and of a key minted
 * without naming any: everything those keys could reach but the admin routes.
 */
export const DEFAULT_KEY_SCOPES: readonly Scope[] = ['storage', 'triggers'];

/** Whether a credential holding `held` may use a route that needs `needed`. */
export function grantsScope(held: readonly Scope[], needed: Scope): boolean {
  if (held.includes('admin') || held.includes(needed)) return true;
  // A query reads: any credential that may read storage may query.
  if (needed === 'search:query') return grantsScope(held, 'storage:read');
  return needed.endsWith(':read') && held.includes(needed.slice(0, -':read'.length) as Scope);
}

export const isScope = (value: unknown): value is Scope => typeof value === 'string' && (SCOPES as readonly string[]).includes(value);

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
  scopes: Scope[];
}

/**
 * What a `search:query` key is limited to: one index of its account and, when given, a filter
 * ANDed with every query it sends (one tenant's documents), so a caller can narrow it, never widen it.
 */
export interface SearchRestriction {
  index: string;
  /** The filter as given at minting (JSON), checked against the index's settings on each query. */
  filter?: Record<string, unknown>;
}

/** A key's owner and what the key may reach. */
export interface ApiKeyOwner {
  accountId: string;
  id: string;
  scopes: Scope[];
  search?: SearchRestriction;
}

/** Storage of gateway API keys. */
export interface ApiKeyStore {
  create(input: { accountId: string; id: string; keyHash: string; createdAt: string; scopes: readonly Scope[]; search?: SearchRestriction }): Promise<void>;
  /** The key's owner and scopes ({@link DEFAULT_KEY_SCOPES} for a key stored without), or undefined for an unknown or revoked key. */
  findByHash(keyHash: string): Promise<ApiKeyOwner | undefined>;
  list(accountId: string, page: { limit: number; cursor?: string }): Promise<{ items: ApiKeySummary[]; nextCursor: string | null }>;
  /** false when the account has no such key. */
  revoke(accountId: string, id: string): Promise<boolean>;
}

/** What happened to an account's API keys. */
export type ApiKeyEventType = 'api_key_created' | 'api_key_revoked';

/** One audit record of an account's keys: who, when, from where; never the key or its hash. */
export interface ApiKeyEvent {
  type: ApiKeyEventType;
  /** ISO 8601. */
  at: string;
  keyId: string;
  scopes?: Scope[];
  /** The `sub` of the user who did it. */
  actor: string;
  sourceIp?: string;
  userAgent?: string;
}

/** The audit log of an account's API keys (kept as long as the account's keys). */
export interface ApiKeyEventLog {
  record(accountId: string, event: ApiKeyEvent): Promise<void>;
  /** Newest first. */
  list(accountId: string, page: { limit: number; cursor?: string }): Promise<{ events: ApiKeyEvent[]; nextCursor: string | null }>;
}

/** Mints a key with `scopes` for the account and records who did it. The key is shown once: the answer. */
export async function mintApiKey(
  deps: { store: Pick<ApiKeyStore, 'create'>; events: Pick<ApiKeyEventLog, 'record'>; randomBytes: RandomBytes; now: () => number },
  input: { accountId: string; actor: string; scopes: readonly Scope[]; search?: SearchRestriction; client: { sourceIp?: string; userAgent?: string } },
): Promise<{ id: string; apiKey: string; createdAt: string; scopes: Scope[]; search?: SearchRestriction }> {
  const apiKey = generateApiKey(deps.randomBytes);
  const id = generateId(deps.randomBytes);
  const createdAt = new Date(deps.now()).toISOString();
  const scopes = [...input.scopes];
  await deps.store.create({ accountId: input.accountId, id, keyHash: hashApiKey(apiKey), createdAt, scopes, ...(input.search && { search: input.search }) });
  await deps.events.record(input.accountId, { type: 'api_key_created', at: createdAt, keyId: id, scopes, actor: input.actor, ...clientFields(input.client) });
  return { id, apiKey, createdAt, scopes, ...(input.search && { search: input.search }) };
}

/** A header is the caller's text: bounded, so an event stays small however long it was sent. */
export const clientFields = (client: { sourceIp?: string; userAgent?: string }) => ({
  ...(client.sourceIp !== undefined && { sourceIp: client.sourceIp }),
  ...(client.userAgent !== undefined && { userAgent: client.userAgent.slice(0, 256) }),
});

/**
 * The scopes a user asks for at `POST /api-keys`: none named is {@link DEFAULT_KEY_SCOPES};
 * otherwise 1 to 5 distinct names of {@link SCOPES}. `admin` is refused here (403 `forbidden`): it
 * is minted at `POST /api-keys/admin` by an administrator with a fresh step-up proof.
 */
export function userRequestedScopes(value: unknown): Scope[] {
  if (value === undefined) return [...DEFAULT_KEY_SCOPES];
  if (!Array.isArray(value) || value.length === 0 || value.length > SCOPES.length || !value.every(isScope) || new Set(value).size !== value.length) {
    throw new AppError('validation_error', 'bad scopes', undefined, `scopes must be a non-empty list of distinct names of ${SCOPES.join(', ')}`);
  }
  if (value.includes('admin')) {
    throw new AppError('forbidden', 'admin scope at POST /api-keys', undefined, 'an admin key is minted at POST /api-keys/admin by an administrator with a fresh step-up proof (purpose mint_admin_key)');
  }
  return value;
}

/** Index names as the search indexes take them (`domain/search/limits.ts`). */
const SEARCH_INDEX_NAME = /^[A-Za-z0-9_-]{1,64}$/;
/** A fixed filter as JSON: bounded, since it is stored with the key and sent on every query. */
export const MAX_SEARCH_FILTER_BYTES = 2048;

/**
 * `search` at `POST /api-keys`: required with the `search:query` scope (and only with it, alone),
 * `{"index": name, "filter": {...}}`. The filter's fields and values are checked against the
 * index's settings on each query (the index may not exist yet, and its settings may change).
 */
export function requestedSearchRestriction(value: unknown, scopes: readonly Scope[]): SearchRestriction | undefined {
  const searchOnly = scopes.includes('search:query');
  if (value === undefined && !searchOnly) return undefined;
  if (!searchOnly || scopes.length !== 1) {
    throw new AppError('validation_error', 'search restriction', undefined, 'search (one index, an optional fixed filter) goes with the scopes ["search:query"] alone, and that scope needs it');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new AppError('validation_error', 'search', undefined, 'search must be {"index": "<index name>", "filter": {...}}');
  const { index, filter, ...rest } = value as Record<string, unknown>;
  if (Object.keys(rest).length > 0) throw new AppError('validation_error', 'search fields', undefined, `unknown field search.${Object.keys(rest)[0]}; known: index, filter`);
  if (typeof index !== 'string' || !SEARCH_INDEX_NAME.test(index)) throw new AppError('validation_error', 'search.index', undefined, 'search.index must be an index name (1-64 letters, digits, _ or -)');
  if (filter === undefined) return { index };
  if (typeof filter !== 'object' || filter === null || Array.isArray(filter) || Object.keys(filter).length === 0 || Buffer.byteLength(JSON.stringify(filter)) > MAX_SEARCH_FILTER_BYTES) {
    throw new AppError('validation_error', 'search.filter', undefined, `search.filter must be a non-empty filter object of at most ${MAX_SEARCH_FILTER_BYTES} bytes as JSON`);
  }
  return { index, filter: filter as Record<string, unknown> };
}
