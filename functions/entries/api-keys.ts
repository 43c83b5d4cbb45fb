import { createAwsClients } from '../adapters/aws/clients.js';
import { composeApiKeys } from '../handlers/api-keys.js';
import { readSettings } from '../settings.js';

/** Lambda entry of the apiKeys function: settings and clients once per execution environment. */
export const handler = composeApiKeys(readSettings('apiKeys', process.env), createAwsClients());
