import { randomBytes } from 'node:crypto';
import { ClassicLevel } from 'classic-level';
import { chmod, mkdir, open, readdir, readFile, rename, stat, unlink, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { generateLocalSigningKey } from '../functions/adapters/local-token-signer.js';
import { ADDRESS_FILE, code, DataDirError, fsError, parseSecrets, SECRETS_FILE, type LocalAddress } from './data-dir-files.js';
import { finishInterrupted, migrate, MigrationError, MIGRATIONS, type LayoutMigration, type MigrationStepHook } from './layout-migrations.js';

export { DataDirError, readLocalAddress, readTokenSecret, type LocalAddress } from './data-dir-files.js';

/** `FLOWGATE_DATA_DIR` value that keeps everything in memory, as the local stack did before it had a data directory. */
export const IN_MEMORY = ':memory:';
/** Where `npm start` keeps its data unless told otherwise, relative to the working directory. */
export const DEFAULT_DATA_DIR = '.flowgate';
/**
 * The layout of a data directory this code reads and writes: the files below and the tables'
 * keys and indexes. A change an older Flowgate could not read (a table or index added, a key
 * changed) bumps it and adds its migration to `MIGRATIONS` (`layout-migrations.ts`), which a start
 * runs on a directory of a lower layout; a directory of a higher layout is refused rather than half understood.
 */
export const LAYOUT_VERSION = 1;

const LAYOUT_FILE = 'layout.json';
/** The pid of the process holding the lock, for the message a second start prints; never what decides. */
const PID_FILE = 'flowgate.pid';
/** A LevelDB of its own, held open for the life of the stack: its `LOCK` is the directory's lock. */
const LOCK_DIR = 'lock';
/** dynalite's LevelDB. */
const DYNAMODB_DIR = 'dynamodb';
/** s3rver's buckets: the object stores' bytes. */
const OBJECTS_DIR = 'objects';
/** LanceDB's tables: the search indexes (functions/adapters/lance/). */
const SEARCH_DIR = 'search-indexes';
/** Only the owner may read the secrets, or list and open the tables they protect. */
const DIR_MODE = 0o700;
const FILE_MODE = 0o600;


/** What a restart needs to open what the last run stored. */
export interface LocalSecrets {
  /** `LOCAL_SECRETS_KEY`: seals signing secrets and TOTP secrets at rest. */
  localSecretsKey: string;
  /** `AUTH_JWT_SECRET` when none is given: tokens minted before a restart stay valid. */
  jwtSecret: string;
  /** `LOCAL_MFA_SIGNING_KEYS`: the P-256 key of step-up proofs, so proofs and the JWKS survive a restart. */
  mfaSigningKey: string;
}

export interface DataDir {
  path: string;
  /** True when this start made the directory (or found it empty); false when it reopened stored data. */
  created: boolean;
  dynamodbPath: string;
  objectsPath: string;
  searchPath: string;
  secrets: LocalSecrets;
  /** The layouts this start migrated the directory between (or finished migrating), when it did. */
  migrated?: { from: number; to: number };
  /** Records where the stack answers (`readLocalAddress`), until `release`. */
  recordAddress(address: LocalAddress): Promise<void>;
  /** Removes this process's lock and address; the data stays. */
  release(): Promise<void>;
}



/** `FLOWGATE_DATA_DIR` as `npm start` reads it: `undefined` for in memory, else an absolute path. */
export function dataDirFrom(value: string | undefined, cwd: string): string | undefined {
  if (value === IN_MEMORY) return undefined;
  return resolve(cwd, value === undefined || value === '' ? DEFAULT_DATA_DIR : value);
}


/** Any file system failure, as one line naming the directory. */

/** Writes a file whole or not at all: a crash mid-write leaves the old file (or none), never half of one. */
async function writeAtomically(path: string, text: string): Promise<void> {
  const temporary = `${path}.${process.pid}.tmp`;
  await writeFile(temporary, text, { mode: FILE_MODE, flag: 'w' });
  await rename(temporary, path);
}

/** The same, on disk when it returns (the file and its rename fsync'd): a migration's commit survives a power loss. */
async function writeDurably(path: string, text: string): Promise<void> {
  const temporary = `${path}.${process.pid}.tmp`;
  const file = await open(temporary, 'w', FILE_MODE);
  try {
    await file.writeFile(text);
    await file.sync();
  } finally {
    await file.close();
  }
  await rename(temporary, path);
  const parent = await open(resolve(path, '..'), 'r');
  try {
    await parent.sync();
  } finally {
    await parent.close();
  }
}

const layoutFileText = (layout: number) => `${JSON.stringify({ layout }, null, 2)}\n`;

/**
 * Takes the directory for this process by opening a LevelDB of its own and keeping it open:
 * LevelDB locks its `LOCK` file with `fcntl`, which the operating system releases when the process
 * dies, SIGKILL included, and before its parent reaps it. Whether a recorded pid answers a signal
 * decided this before, and a killed stack left a zombie that answered, so an immediate restart on
 * its directory was refused. LevelDB refuses a second open inside one process as well.
 */
async function lock(dir: string): Promise<() => Promise<void>> {
  const held = new ClassicLevel(join(dir, LOCK_DIR));
  try {
    await held.open();
  } catch (error) {
    if ((error as { cause?: { code?: string } }).cause?.code !== 'LEVEL_LOCKED') throw (error as { cause?: Error }).cause ?? error;
    const pid = Number((await readFile(join(dir, PID_FILE), 'utf8').catch(() => '')).trim());
    const holder = Number.isSafeInteger(pid) && pid > 0 ? ` (pid ${pid})` : '';
    throw new DataDirError(`The data directory ${dir} is in use by another local stack${holder}; stop it, or choose another directory with FLOWGATE_DATA_DIR`);
  }
  const pidPath = join(dir, PID_FILE);
  await writeAtomically(pidPath, `${process.pid}\n`);
  return async () => {
    await unlink(join(dir, ADDRESS_FILE)).catch(() => undefined);
    await unlink(pidPath).catch(() => undefined);
    await held.close();
  };
}



const secretsFileText = (secrets: LocalSecrets) =>
  `${JSON.stringify({ local_secrets_key: secrets.localSecretsKey, auth_jwt_secret: secrets.jwtSecret, mfa_signing_key: secrets.mfaSigningKey }, null, 2)}\n`;

/** The layout a directory declares; `undefined` when it has no layout file. */
async function readLayout(dir: string): Promise<number | undefined> {
  const path = join(dir, LAYOUT_FILE);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if (code(error) === 'ENOENT') return undefined;
    throw error;
  }
  const layout = (() => {
    try {
      return (JSON.parse(text) as { layout?: unknown }).layout;
    } catch {
      return undefined;
    }
  })();
  if (!Number.isSafeInteger(layout) || (layout as number) < 1) throw new DataDirError(`${path} is damaged: it must say {"layout": <version>}`);
  return layout as number;
}

export interface OpenDataDirOptions {
  /** The layout this code reads; another only in tests, to act as an older or newer Flowgate. */
  layoutVersion?: number;
  /** The migrations up to `layoutVersion`; `MIGRATIONS` unless a test injects its own. */
  migrations?: readonly LayoutMigration[];
  /** Test hook: called at each step of a migration; a throw there stops it as a crash would (`layout-migrations.ts`). */
  onMigrationStep?: MigrationStepHook;
}

/** What a migration leaves alone: the running process's lock and pid, and the layout file it writes last. */
const NOT_MIGRATED = new Set([LOCK_DIR, PID_FILE, ADDRESS_FILE, LAYOUT_FILE]);

/**
 * Opens (or makes) a data directory for the local stack: checks its layout, locks it for this
 * process, migrates it when its layout is older (`layout-migrations.ts`: on a copy, committed by
 * the layout file, so a crash leaves the old layout readable), and reads the secrets a restart
 * needs (made and stored on first use). Everything that can go wrong is a `DataDirError`; a
 * directory refused is refused before anything in it is changed.
 */
export async function openDataDir(path: string, options: OpenDataDirOptions = {}): Promise<DataDir> {
  const { layoutVersion = LAYOUT_VERSION, migrations = MIGRATIONS, onMigrationStep } = options;
  const dir = resolve(path);
  try {
    let created = false;
    const found = await stat(dir).catch((error: unknown) => {
      if (code(error) === 'ENOENT') return undefined;
      throw error;
    });
    if (found && !found.isDirectory()) throw new DataDirError(`The data directory ${dir} is a file, not a directory; choose another with FLOWGATE_DATA_DIR`);
    if (!found) {
      await mkdir(dir, { recursive: true, mode: DIR_MODE });
      // mkdir's mode passes through the umask; the directory is the owner's alone whatever it is.
      await chmod(dir, DIR_MODE);
      created = true;
    }

    const layout = await readLayout(dir);
    if (layout === undefined) {
      // Only an empty directory becomes a data directory, never a folder that holds something else;
      // what a first start that stopped before writing the layout file left is made again.
      const entries = (await readdir(dir)).filter((name) => name !== PID_FILE && name !== ADDRESS_FILE && name !== LOCK_DIR && name !== SECRETS_FILE && !name.endsWith('.tmp'));
      if (entries.length > 0) throw new DataDirError(`${dir} is not a Flowgate data directory (it has no ${LAYOUT_FILE} and is not empty); choose another with FLOWGATE_DATA_DIR`);
      created = true;
    } else if (layout > layoutVersion) {
      throw new DataDirError(`The data directory ${dir} was written by a newer Flowgate (layout ${layout}; this one reads layout ${layoutVersion}); update Flowgate, or choose another directory with FLOWGATE_DATA_DIR`);
    }

    const release = await lock(dir);
    try {
      let migrated: DataDir['migrated'];
      if (layout !== undefined) {
        // What a start that stopped during a migration left: finished if it had committed, else thrown away.
        migrated = await finishInterrupted(dir, layout, onMigrationStep);
        if (layout < layoutVersion) {
          await migrate(dir, NOT_MIGRATED, {
            layout,
            target: layoutVersion,
            migrations,
            writeLayout: (to) => writeDurably(join(dir, LAYOUT_FILE), layoutFileText(to)),
            onStep: onMigrationStep,
          }).catch((error: unknown) => {
            if (error instanceof MigrationError) throw new DataDirError(`The data directory ${dir} cannot be migrated to layout ${layoutVersion}: ${error.message}; it was left as it was (layout ${layout}), and the next start tries again`);
            throw error;
          });
          migrated = { from: layout, to: layoutVersion };
        }
      }
      const secretsPath = join(dir, SECRETS_FILE);
      let secrets: LocalSecrets;
      if (created) {
        secrets = { localSecretsKey: randomBytes(32).toString('base64'), jwtSecret: randomBytes(32).toString('base64url'), mfaSigningKey: generateLocalSigningKey() };
        await writeAtomically(secretsPath, secretsFileText(secrets));
        // The layout file last: a directory without it is one whose first start did not finish, made again from nothing.
        await writeAtomically(join(dir, LAYOUT_FILE), layoutFileText(layoutVersion));
      } else {
        const stored = parseSecrets(await readFile(secretsPath, 'utf8').catch((error: unknown) => {
          if (code(error) === 'ENOENT') throw new DataDirError(`${secretsPath} is missing; without it the stored secrets cannot be opened (restore it, or choose another directory with FLOWGATE_DATA_DIR)`);
          throw error;
        }), secretsPath);
        secrets = { ...stored, mfaSigningKey: stored.mfaSigningKey ?? generateLocalSigningKey() };
        if (stored.mfaSigningKey === undefined) await writeAtomically(secretsPath, secretsFileText(secrets));
      }
      const dynamodbPath = join(dir, DYNAMODB_DIR);
      await mkdir(dynamodbPath, { recursive: true, mode: DIR_MODE });
      const objectsPath = join(dir, OBJECTS_DIR);
      await mkdir(objectsPath, { recursive: true, mode: DIR_MODE });
      const searchPath = join(dir, SEARCH_DIR);
      await mkdir(searchPath, { recursive: true, mode: DIR_MODE });
      const recordAddress = (address: LocalAddress) => writeAtomically(join(dir, ADDRESS_FILE), `${JSON.stringify(address, null, 2)}\n`);
      return { path: dir, created, dynamodbPath, objectsPath, searchPath, secrets, ...(migrated && { migrated }), recordAddress, release };
    } catch (error) {
      await release();
      throw error;
    }
  } catch (error) {
    throw fsError(dir, error);
  }
}
