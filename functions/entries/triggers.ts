import { createAwsClients } from '../adapters/aws/clients.js';
import { composeTriggers } from '../handlers/triggers.js';
import { readSettings } from '../settings.js';

/** Lambda entry of the triggers function: settings and clients once per execution environment. */
export const handler = composeTriggers(readSettings('triggers', process.env), createAwsClients());
