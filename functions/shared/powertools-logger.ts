/** Loaded by `logger.ts` on the first log line: Powertools Logger, one chunk of the bundle. */
import { Logger } from '@aws-lambda-powertools/logger';

export const createLogger = () => new Logger({ serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? 'flowgate' });
