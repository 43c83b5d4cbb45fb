/** Loaded by `logger.ts` on the first log line: Powertools Logger, one chunk of the bundle. */
import { Logger } from '@aws-lambda-powertools/logger';
import { METRICS_SERVICE } from './metric-names.js';

/** The service's one name, on log lines as on metrics. */
export const createLogger = () => new Logger({ serviceName: METRICS_SERVICE });
