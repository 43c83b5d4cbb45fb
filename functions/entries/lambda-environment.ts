import { createAwsClients, type AwsClients } from '../adapters/aws/clients.js';
import type { FunctionName } from '../manifest.js';
import { readSettings, settingsReadBy, type Settings } from '../settings.js';
import { configureLogging } from '../shared/logger.js';

/**
 * What every Lambda entry is composed from, read once at init: the function's settings from the
 * environment Lambda gives it (the only place `process.env` is read), the logger set to their
 * level, and the handle its AWS clients are made for.
 */
export function fromLambdaEnvironment(fn: FunctionName): { settings: Settings; aws: AwsClients } {
  const settings = readSettings(fn, process.env);
  configureLogging(settings);
  const sfn = settingsReadBy(fn).includes('sfnEndpoint') ? settings.sfnEndpoint : undefined;
  const lambda = settingsReadBy(fn).includes('lambdaEndpoint') ? settings.lambdaEndpoint : undefined;
  return { settings, aws: createAwsClients(sfn || lambda ? { endpoints: { ...(sfn && { sfn }), ...(lambda && { lambda }) } } : {}) };
}
