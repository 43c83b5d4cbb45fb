import type { Logger } from '@aws-lambda-powertools/logger';
import { onFirstUse } from '../adapters/lazy.js';

/**
 * One structured logger (Powertools) per execution environment. Nothing secret is ever passed to
 * it: secrets, keys, codes and tokens stay out of log calls and out of error details.
 *
 * Most invocations log nothing, and Powertools Logger took about 6 ms of every function's import:
 * it is loaded by the first log line. Each call resolves once its line is written, and every
 * caller awaits it before its invocation ends, so no line waits for the next invocation (or is
 * lost when the environment is frozen).
 */
const powertools = onFirstUse(async () => {
  const logger = (await import('./powertools-logger.js')).createLogger();
  if (levelOverride) logger.setLogLevel(levelOverride);
  return logger;
});
let levelOverride: Parameters<Logger['setLogLevel']>[0] | undefined;

export const logInfo = async (message: string, extra: Record<string, unknown>): Promise<void> => (await powertools()).info(message, extra);
export const logWarn = async (message: string, extra: Record<string, unknown>): Promise<void> => (await powertools()).warn(message, extra);

export async function logFault(message: string, error: unknown): Promise<void> {
  const logger = await powertools();
  if (error instanceof Error) logger.error(message, error);
  else logger.error(message, { error: String(error) });
}

/** The local stack's level for this process (deployed, Lambda's application log level sets it). */
export async function setLogLevel(level: Parameters<Logger['setLogLevel']>[0]): Promise<void> {
  levelOverride = level;
  (await powertools()).setLogLevel(level);
}

export const logLevelName = async (): Promise<string> => (await powertools()).getLevelName();
