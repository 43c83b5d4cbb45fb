import type { Logger } from '@aws-lambda-powertools/logger';
import { onFirstUse } from '../adapters/lazy.js';
import type { LogLevel } from '../settings.js';

/**
 * One structured logger (Powertools) per execution environment. Nothing secret is ever passed to
 * it: secrets, keys, codes and tokens stay out of log calls and out of error details.
 *
 * The level is the `logLevel` setting, applied here rather than by Lambda: Lambda's application
 * log level drops every line below it, and the metric lines (`metric-line-writer.ts`) carry no level,
 * so Lambda reads them as INFO; at WARN it would drop every metric. The stack keeps Lambda's level
 * at INFO at the most (`lib/constructs/service-function.ts`), and this logger filters itself, the
 * same way deployed and on the local stack.
 *
 * Most invocations log nothing, and Powertools Logger took about 6 ms of every function's import:
 * it is loaded by the first line that passes the level. Each call resolves once its line is
 * written, and every caller awaits it before its invocation ends, so no line waits for the next
 * invocation (or is lost when the environment is frozen).
 */

/** How much each level lets through: a line is written when its rank is at least the level's. */
const RANK: Record<LogLevel, number> = { TRACE: 0, DEBUG: 1, INFO: 2, WARN: 3, ERROR: 4, CRITICAL: 5, SILENT: 6 };

let level: LogLevel = 'INFO';
let loaded: Logger | undefined;

/** Powertools' own level: Lambda's when Lambda sets one (never above ours), ours otherwise. */
const applyLevel = (logger: Logger) => {
  if (level !== 'SILENT') logger.setLogLevel(level);
};

const powertools = onFirstUse(async () => {
  const logger = (await import('./powertools-logger.js')).createLogger();
  applyLevel(logger);
  loaded = logger;
  return logger;
});

/**
 * Sets the level of this process's logger from the function's settings: the Lambda entry does it
 * at init, the local stack when it starts (one logger per process, as one per execution environment).
 */
export function configureLogging(settings: { logLevel: LogLevel }): void {
  level = settings.logLevel;
  if (loaded) applyLevel(loaded);
}

/** The level lines are filtered at. */
export const logLevelName = (): LogLevel => level;

const passes = (lineLevel: LogLevel) => RANK[lineLevel] >= RANK[level];

export async function logInfo(message: string, extra: Record<string, unknown>): Promise<void> {
  if (passes('INFO')) (await powertools()).info(message, extra);
}

export async function logWarn(message: string, extra: Record<string, unknown>): Promise<void> {
  if (passes('WARN')) (await powertools()).warn(message, extra);
}

export async function logFault(message: string, error: unknown): Promise<void> {
  if (!passes('ERROR')) return;
  const logger: Logger = await powertools();
  if (error instanceof Error) logger.error(message, error);
  else logger.error(message, { error: String(error) });
}
