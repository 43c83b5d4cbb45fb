import { composeAccounts } from '../handlers/accounts.js';
import { fromLambdaEnvironment } from './lambda-environment.js';

const { settings, aws } = fromLambdaEnvironment('accounts');

/** Lambda entry of the accounts function: settings and clients once per execution environment. */
export const handler = composeAccounts(settings, aws);
