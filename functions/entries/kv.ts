import { composeKv } from '../handlers/kv.js';
import { fromLambdaEnvironment } from './lambda-environment.js';

const { settings, aws } = fromLambdaEnvironment('kv');

/** Lambda entry of the kv function: settings and clients once per execution environment. */
export const handler = composeKv(settings, aws);
