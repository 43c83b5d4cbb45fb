import { createAwsClients } from '../adapters/aws/clients.js';
import { composeWebhook } from '../handlers/webhook.js';
import { readSettings } from '../settings.js';

/** Lambda entry of the webhook function: settings and clients once per execution environment. */
export const handler = composeWebhook(readSettings('webhook', process.env), createAwsClients());
