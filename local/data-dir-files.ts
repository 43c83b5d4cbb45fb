import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { LocalSecrets } from './data-dir.js';

/*
 * What of a data directory is read without opening it: its secrets (`npm run token`, `flowgate
 * token`) and where its stack answers (`flowgate login --local`). No native module is imported here,
 * so the CLI's single-file bundle can read them (classic-level, which `data-dir.ts` opens, finds its
 * binary from its own folder and cannot be bundled).
 */

export const SECRETS_FILE = 'secrets.json';
/**
 * Where the stack holding the directory answers, while it runs: `flowgate login --local` reads it, so
 * a stack started on other ports (`PORT=4000 npm start`) is found from another terminal.
 */
export const ADDRESS_FILE = 'address.json';

/** A data directory that cannot be used; its message is one line that says what to do. */
export class DataDirError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DataDirError';
  }
}

export const code = (error: unknown) => (error as NodeJS.ErrnoException).code;
const DENIED = new Set(['EACCES', 'EPERM', 'EROFS']);

/** Any failure to use the directory, as one line that says what to do. */
export function fsError(path: string, error: unknown): DataDirError {
  if (error instanceof DataDirError) return error;
  if (DENIED.has(code(error) ?? '')) return new DataDirError(`The data directory ${path} is not writable by this user; fix its permissions or choose another with FLOWGATE_DATA_DIR`);
  if (code(error) === 'ENOTDIR') return new DataDirError(`The data directory ${path} cannot be made: part of its path is a file; choose another with FLOWGATE_DATA_DIR`);
  if (code(error) === 'ENOSPC') return new DataDirError(`The disk holding the data directory ${path} is full`);
  return new DataDirError(`The data directory ${path} cannot be used: ${(error as Error).message.split('\n')[0]}`);
}

export function parseSecrets(text: string, path: string): Omit<LocalSecrets, 'mfaSigningKey'> & { mfaSigningKey?: string } {
  let stored: { local_secrets_key?: unknown; auth_jwt_secret?: unknown; mfa_signing_key?: unknown };
  try {
    stored = JSON.parse(text) as typeof stored;
  } catch {
    stored = {};
  }
  const key = typeof stored.local_secrets_key === 'string' ? Buffer.from(stored.local_secrets_key, 'base64') : Buffer.alloc(0);
  if (key.length !== 32 || typeof stored.auth_jwt_secret !== 'string' || stored.auth_jwt_secret.length < 32) {
    throw new DataDirError(`${path} is damaged (it must hold a 32-byte local_secrets_key and an auth_jwt_secret); without it the stored secrets cannot be opened`);
  }
  // Absent from directories made before step-up proofs existed: the caller adds one.
  const mfaSigningKey = typeof stored.mfa_signing_key === 'string' ? stored.mfa_signing_key : undefined;
  return { localSecretsKey: stored.local_secrets_key as string, jwtSecret: stored.auth_jwt_secret, ...(mfaSigningKey && { mfaSigningKey }) };
}

/**
 * The token secret a data directory keeps (`npm run token`): read without taking the directory, so
 * it works beside the `npm start` that uses it. One line that says what to do when there is none.
 */
export async function readTokenSecret(dir: string): Promise<string> {
  const path = join(dir, SECRETS_FILE);
  const text = await readFile(path, 'utf8').catch((error: unknown) => {
    if (code(error) === 'ENOENT') throw new DataDirError(`No token secret at ${path}: start the local stack once with npm start (FLOWGATE_DATA_DIR names another data directory), or set AUTH_JWT_SECRET`);
    throw fsError(dir, error);
  });
  return parseSecrets(text, path).jwtSecret;
}

/** Where a running local stack answers. */
export interface LocalAddress {
  base_url: string;
  listen_url: string;
}

/**
 * Where the stack that holds `dir` answers, read without taking the directory; `undefined` when no
 * stack has recorded one (none running, or one that stopped cleanly). A stack killed outright leaves
 * its address behind until the next start overwrites it; a caller that cannot reach it says so.
 */
export async function readLocalAddress(dir: string): Promise<LocalAddress | undefined> {
  const text = await readFile(join(resolve(dir), ADDRESS_FILE), 'utf8').catch(() => undefined);
  if (text === undefined) return undefined;
  try {
    const { base_url, listen_url } = JSON.parse(text) as Partial<LocalAddress>;
    return typeof base_url === 'string' && typeof listen_url === 'string' ? { base_url, listen_url } : undefined;
  } catch {
    return undefined;
  }
}
