import { composeApiKeys } from '../handlers/api-keys.js';
import { fromLambdaEnvironment } from './lambda-environment.js';

const { settings, aws } = fromLambdaEnvironment('apiKeys');

/** Lambda entry of the apiKeys function: settings and clients once per execution environment. */
export const handler = composeApiKeys(settings, aws);
