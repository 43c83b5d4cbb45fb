import { Command, CommanderError } from 'commander';
import { stderr } from 'node:process';
import { CliError, EXIT } from './errors.js';
import { FlowgateError } from '../../client/src/errors.js';
import { style } from './output.js';
import { registerLogin } from './commands/login.js';
import { registerListen } from './commands/listen.js';
import { registerTrigger } from './commands/trigger.js';
import { registerDeliveries } from './commands/deliveries.js';
import { registerTriggers } from './commands/triggers.js';
import { registerKv } from './commands/kv.js';
import { registerObjects } from './commands/objects.js';
import { registerStreams } from './commands/streams.js';
import { registerMfa } from './commands/mfa.js';

export function buildProgram(): Command {
  const program = new Command('flowgate')
    .description('Flowgate from a terminal: forward deliveries to your laptop, send signed test events, tail and replay deliveries, and reach KV, object stores and streams.')
    .option('--profile <name>', 'the profile to use (default: FLOWGATE_PROFILE, else the last one logged in to)')
    .option('--json', 'print data as JSON (one document, or one a line for streams)')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()
    .configureOutput({ outputError: (text, write) => write(style.errorRed(text)) });
  program.addHelpText('after', `
Environment: FLOWGATE_BASE_URL, FLOWGATE_TOKEN, FLOWGATE_API_KEY and FLOWGATE_LISTEN_URL override the profile.
Exit codes: 0 done, 1 failed, 2 usage.

Examples:
  $ flowgate login --local
  $ flowgate listen --forward-to http://localhost:4000/hooks
  $ flowgate trigger stripe payment_intent.succeeded --to <trigger id> --secret whsec_…
  $ flowgate deliveries tail --trigger <trigger id>
`);
  registerLogin(program);
  registerListen(program);
  registerTrigger(program);
  registerDeliveries(program);
  registerTriggers(program);
  registerKv(program);
  registerObjects(program);
  registerStreams(program);
  registerMfa(program);
  return program;
}

// `flowgate … | head` closes the pipe early: that is the reader's choice, not a failure.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(EXIT.ok);
  throw error;
});

export async function main(argv: string[]): Promise<number> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
    return EXIT.ok;
  } catch (error) {
    if (error instanceof CommanderError) {
      // --help and --version end here too, with code 0.
      return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    if (error instanceof FlowgateError) {
      stderr.write(style.errorRed(`error: ${error.status} ${error.error}${error.message && error.message !== error.error ? `: ${error.message.replace(/^[a-z_]+: /, '')}` : ''}\n`));
      return EXIT.failed;
    }
    if (error instanceof CliError) {
      stderr.write(style.errorRed(`error: ${error.message}\n`));
      return error.exitCode;
    }
    if (error instanceof TypeError && error.message === 'fetch failed') {
      stderr.write(style.errorRed(`error: cannot reach the API: ${(error.cause as Error | undefined)?.message ?? 'connection failed'}\n`));
      return EXIT.failed;
    }
    // Not expected: the one place a stack is printed, for a bug report.
    stderr.write(style.errorRed(`unexpected error: ${(error as Error)?.stack ?? String(error)}\n`));
    return EXIT.failed;
  }
}

process.exitCode = await main(process.argv);
