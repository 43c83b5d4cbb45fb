import { mintLocalToken } from '../local/token.js';

/** `npm run token -- <sub> [account_id]`: a one-hour bearer token for the local stack. */
const [sub = 'local-user', accountId] = process.argv.slice(2);
const secret = process.env.AUTH_JWT_SECRET;
if (!secret) {
  console.error('Set AUTH_JWT_SECRET to the secret the local stack printed (or was started with).');
  process.exit(2);
}
console.log(await mintLocalToken({ secret, sub, accountId }));
