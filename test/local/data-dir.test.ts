import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalTokenSigner } from '../../functions/adapters/local-token-signer.js';
import { DataDirError, dataDirFrom, openDataDir } from '../../local/data-dir.js';

let root: string;
let counter = 0;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'flowgate-data-dir-unit-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});
const fresh = () => join(root, `dir-${++counter}`);
const mode = async (path: string) => (await stat(path)).mode & 0o777;

describe('dataDirFrom(FLOWGATE_DATA_DIR, cwd)', () => {
  it('is .flowgate in the working directory by default, a path resolved against it when given, and nothing for :memory:', () => {
    expect(dataDirFrom(undefined, '/home/me/app')).toBe('/home/me/app/.flowgate');
    expect(dataDirFrom('', '/home/me/app')).toBe('/home/me/app/.flowgate');
    expect(dataDirFrom('data', '/home/me/app')).toBe('/home/me/app/data');
    expect(dataDirFrom('/var/lib/flowgate', '/home/me/app')).toBe('/var/lib/flowgate');
    expect(dataDirFrom(':memory:', '/home/me/app')).toBeUndefined();
  });
});

describe('openDataDir', () => {
  it('makes the directory for its owner alone, with the secrets a restart needs, and reads the same secrets when reopened', async () => {
    const path = fresh();
    const first = await openDataDir(path);
    expect(first).toMatchObject({ path, created: true, dynamodbPath: join(path, 'dynamodb') });
    expect(Buffer.from(first.secrets.localSecretsKey, 'base64')).toHaveLength(32);
    expect(await mode(path)).toBe(0o700);
    expect(await mode(join(path, 'secrets.json'))).toBe(0o600);
    expect(JSON.parse(await readFile(join(path, 'layout.json'), 'utf8'))).toEqual({ layout: 1 });
    await first.release();

    const second = await openDataDir(path);
    expect(second.created).toBe(false);
    expect(second.secrets).toEqual(first.secrets);
    await second.release();
  });

  it('gives a directory made before step-up proofs a signing key on its next start, and keeps it from then on', async () => {
    const path = fresh();
    const first = await openDataDir(path);
    await first.release();
    const secretsPath = join(path, 'secrets.json');
    const { mfa_signing_key: _key, ...older } = JSON.parse(await readFile(secretsPath, 'utf8'));
    await writeFile(secretsPath, JSON.stringify(older));
    const upgraded = await openDataDir(path);
    await upgraded.release();
    expect(upgraded.secrets).toMatchObject({ localSecretsKey: first.secrets.localSecretsKey, jwtSecret: first.secrets.jwtSecret });
    expect(upgraded.secrets.mfaSigningKey).not.toBe(first.secrets.mfaSigningKey);
    expect(await new LocalTokenSigner([upgraded.secrets.mfaSigningKey]).publicKeys()).toHaveLength(1);
    const again = await openDataDir(path);
    await again.release();
    expect(again.secrets).toEqual(upgraded.secrets);
    expect(await mode(secretsPath)).toBe(0o600);
  });

  it('refuses a directory held open, naming its holder, and takes it once released; a pid file alone decides nothing', async () => {
    const path = fresh();
    const first = await openDataDir(path);
    await expect(openDataDir(path)).rejects.toThrow(new DataDirError(`The data directory ${path} is in use by another local stack (pid ${process.pid}); stop it, or choose another directory with FLOWGATE_DATA_DIR`));
    await first.release();

    // A pid that is gone, or one that runs but holds nothing (a zombie, a reused pid): not a lock.
    for (const pid of [spawnSync(process.execPath, ['-e', '']).pid, process.ppid]) {
      await writeFile(join(path, 'flowgate.pid'), `${pid}\n`);
      const opened = await openDataDir(path);
      expect((await readFile(join(path, 'flowgate.pid'), 'utf8')).trim()).toBe(String(process.pid));
      await opened.release();
    }
  });

  it('refuses a directory whose secrets are damaged or missing, rather than making new ones the stored data cannot be opened with', async () => {
    const path = fresh();
    await (await openDataDir(path)).release();
    await writeFile(join(path, 'secrets.json'), '{"local_secrets_key": "c2hvcnQ="}');
    await expect(openDataDir(path)).rejects.toThrow(/secrets\.json is damaged/);
    await rm(join(path, 'secrets.json'));
    await expect(openDataDir(path)).rejects.toThrow(/secrets\.json is missing/);
    // Refusing takes no lock.
    await expect(stat(join(path, 'flowgate.pid'))).rejects.toThrow();
  });

  it('refuses a file, and a path through one', async () => {
    const file = join(root, 'a-file');
    await writeFile(file, '');
    await expect(openDataDir(file)).rejects.toThrow(`The data directory ${file} is a file, not a directory`);
    await expect(openDataDir(join(file, 'data'))).rejects.toThrow(/part of its path is a file/);
  });
});
