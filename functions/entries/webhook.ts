import { composeWebhook } from '../handlers/webhook.js';
import { fromLambdaEnvironment } from './lambda-environment.js';

const { settings, aws } = fromLambdaEnvironment('webhook');

/** Lambda entry of the webhook function: settings and clients once per execution environment. */
export const handler = composeWebhook(settings, aws);
