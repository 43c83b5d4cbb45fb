import { SETTINGS } from '../functions/settings.js';
import { DataDirError, dataDirFrom, readTokenSecret } from '../local/data-dir.js';
import { mintLocalToken } from '../local/token.js';

/**
 * `npm run token -- [sub] [account_id] [--admin]`: prints a one-hour bearer token for the local
 * stack, and nothing else, for `TOKEN=$(npm run -s token)`. It signs with `AUTH_JWT_SECRET` when
 * set (as `npm start` verifies with it then), else with the secret the data directory keeps
 * (`.flowgate/secrets.json`, or `FLOWGATE_DATA_DIR`'s), which `npm start` made on its first run.
 * `--admin` puts the user in the administrators' group (`ADMIN_GROUP`, default flowgate-admins).
 */
const args = process.argv.slice(2);
const admin = args.includes('--admin');
const [sub = 'local-user', accountId] = args.filter((arg) => arg !== '--admin');

async function tokenSecret(): Promise<string> {
  if (process.env.AUTH_JWT_SECRET) return process.env.AUTH_JWT_SECRET;
  const dataDir = dataDirFrom(process.env.FLOWGATE_DATA_DIR, process.cwd());
  if (!dataDir) throw new DataDirError('FLOWGATE_DATA_DIR=:memory: keeps no secret: set AUTH_JWT_SECRET to the one npm start printed');
  return readTokenSecret(dataDir);
}

try {
  const secret = await tokenSecret();
  const claims = admin ? { 'cognito:groups': [SETTINGS.adminGroup.parse(process.env.ADMIN_GROUP)] } : undefined;
  console.log(await mintLocalToken({ secret, sub, accountId, claims }));
} catch (error) {
  console.error(error instanceof DataDirError ? error.message : error);
  process.exit(2);
}
