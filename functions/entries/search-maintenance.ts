import { composeSearchMaintenance } from '../handlers/search-maintenance.js';
import { fromLambdaEnvironment } from './lambda-environment.js';

const { settings, aws } = fromLambdaEnvironment('searchMaintenance');

/** Lambda entry of the searchMaintenance function: the search engine (loaded on the first job) runs the queue's jobs. */
export const handler = composeSearchMaintenance(settings, aws);
