import { createAwsClients } from '../adapters/aws/clients.js';
import { composeKv } from '../handlers/kv.js';
import { readSettings } from '../settings.js';

/** Lambda entry of the kv function: settings and clients once per execution environment. */
export const handler = composeKv(readSettings('kv', process.env), createAwsClients());
