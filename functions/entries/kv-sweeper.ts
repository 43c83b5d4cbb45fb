import { createAwsClients } from '../adapters/aws/clients.js';
import { composeKvSweeper } from '../handlers/kv-sweeper.js';
import { readSettings } from '../settings.js';

/** Lambda entry of the kvSweeper function: settings and clients once per execution environment. */
export const handler = composeKvSweeper(readSettings('kvSweeper', process.env), createAwsClients());
