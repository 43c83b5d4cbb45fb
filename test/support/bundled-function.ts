import { execFile } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';

const RESULT = 'RESULT ';

export interface BundledInvocation {
  /** What the handler returned. */
  result: any;
  /** Every line the function wrote to stdout, as Lambda would collect them. */
  lines: string[];
  /** stdout and stderr together, for messages. */
  logs: string;
}

/**
 * Imports a bundle in a new `node` with only `env` (plus PATH), calls its handler with `event`
 * and returns the result with what the function wrote.
 */
export async function invokeBundled(bundle: string, event: unknown, env: Record<string, string>): Promise<BundledInvocation> {
  const script = `const { handler } = await import(${JSON.stringify(pathToFileURL(bundle).href)});
const result = await handler(JSON.parse(process.env.TEST_EVENT));
console.log(${JSON.stringify(RESULT)} + JSON.stringify(result));`;
  const { stdout, stderr } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], {
    env: { PATH: process.env.PATH ?? '', TEST_EVENT: JSON.stringify(event), ...env },
    timeout: 20_000,
  });
  const all = stdout.trim().split('\n');
  const resultLine = all.find((line) => line.startsWith(RESULT));
  if (!resultLine) throw new Error(`the bundle returned nothing:\n${stdout}\n${stderr}`);
  const lines = all.filter((line) => !line.startsWith(RESULT));
  return { result: JSON.parse(resultLine.slice(RESULT.length)), lines, logs: [...lines, stderr].join('\n') };
}

/** Lambda's application log levels, least to most severe. */
const LAMBDA_LEVELS = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR', 'FATAL'] as const;

/**
 * The lines Lambda keeps at an application log level, in JSON log format: a line below the level
 * is dropped, and a line with no `level` field (a metric line) counts as INFO.
 * https://docs.aws.amazon.com/lambda/latest/dg/monitoring-cloudwatchlogs-log-level.html
 */
export function linesLambdaKeeps(lines: readonly string[], applicationLogLevel: string): string[] {
  const threshold = LAMBDA_LEVELS.indexOf(applicationLogLevel as (typeof LAMBDA_LEVELS)[number]);
  if (threshold < 0) throw new Error(`not a Lambda application log level: ${applicationLogLevel}`);
  return lines.filter((line) => {
    let level = 'INFO';
    try {
      const parsed = JSON.parse(line) as { level?: unknown };
      if (typeof parsed.level === 'string') level = parsed.level.toUpperCase() === 'CRITICAL' ? 'FATAL' : parsed.level.toUpperCase();
    } catch {
      // Plain text counts as INFO too.
    }
    return LAMBDA_LEVELS.indexOf(level as (typeof LAMBDA_LEVELS)[number]) >= threshold;
  });
}
