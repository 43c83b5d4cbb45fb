import { createAwsClients } from '../adapters/aws/clients.js';
import { composeAccounts } from '../handlers/accounts.js';
import { readSettings } from '../settings.js';

/** Lambda entry of the accounts function: settings and clients once per execution environment. */
export const handler = composeAccounts(readSettings('accounts', process.env), createAwsClients());
