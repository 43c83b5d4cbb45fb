import { Logger } from '@aws-lambda-powertools/logger';

/**
 * One structured logger per execution environment. Nothing secret is ever passed to it: secrets,
 * keys, codes and tokens stay out of log calls and out of error details.
 */
export const logger = new Logger({ serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? 'flowgate' });

export const logFault = (message: string, error: unknown): void => {
  if (error instanceof Error) logger.error(message, error);
  else logger.error(message, { error: String(error) });
};
