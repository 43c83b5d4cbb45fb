import { composeListenAuthorizer } from '../handlers/listen.js';
import { fromLambdaEnvironment } from './lambda-environment.js';

const { settings, aws } = fromLambdaEnvironment('triggers');

/** Lambda entry of the listen endpoint's `$connect` authorizer. */
export const handler = composeListenAuthorizer(settings, aws);
