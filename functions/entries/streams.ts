import { composeStreams } from '../handlers/streams.js';
import { fromLambdaEnvironment } from './lambda-environment.js';

const { settings, aws } = fromLambdaEnvironment('streams');

/** Lambda entry of the streams function: DynamoDB only, like the kv function. */
export const handler = composeStreams(settings, aws);
