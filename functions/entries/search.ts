import { composeSearch } from '../handlers/search.js';
import { fromLambdaEnvironment } from './lambda-environment.js';

const { settings, aws } = fromLambdaEnvironment('search');

/** Lambda entry of the search function: LanceDB (loaded on first use) over S3, DynamoDB for API keys and commits. */
export const handler = composeSearch(settings, aws);
