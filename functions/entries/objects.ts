import { composeObjects } from '../handlers/objects.js';
import { fromLambdaEnvironment } from './lambda-environment.js';

const { settings, aws } = fromLambdaEnvironment('objects');

/** Lambda entry of the objects function: the only one that loads the S3 client. */
export const handler = composeObjects(settings, aws);
