/** Exit codes: 0 done, 1 failed (the service refused, a connection failed), 2 usage (a wrong argument or option). */
export const EXIT = { ok: 0, failed: 1, usage: 2 } as const;

/**
 * An expected failure: printed as one line (`error: …`), never with a stack trace. `code` is the
 * service's error code when the service answered one.
 */
export class CliError extends Error {
  constructor(message: string, readonly exitCode: 1 | 2 = EXIT.failed, readonly code?: string, readonly status?: number) {
    super(message);
  }
}

export const usage = (message: string) => new CliError(message, EXIT.usage);
