import { SETTINGS } from '../functions/settings.js';
import { mintLocalToken } from '../local/token.js';

/**
 * `npm run token -- <sub> [account_id] [--admin]`: a one-hour bearer token for the local stack;
 * `--admin` puts the user in the administrators' group (`ADMIN_GROUP`, default flowgate-admins).
 */
const args = process.argv.slice(2);
const admin = args.includes('--admin');
const [sub = 'local-user', accountId] = args.filter((arg) => arg !== '--admin');
const secret = process.env.AUTH_JWT_SECRET;
if (!secret) {
  console.error('Set AUTH_JWT_SECRET to the secret the local stack printed (or was started with).');
  process.exit(2);
}
const claims = admin ? { 'cognito:groups': [SETTINGS.adminGroup.parse(process.env.ADMIN_GROUP)] } : undefined;
console.log(await mintLocalToken({ secret, sub, accountId, claims }));
