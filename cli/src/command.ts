import { Command, InvalidArgumentError } from 'commander';
import { Api } from './api.js';
import { resolveProfile } from './config.js';

/** What every action gets: the global options, and the profile's API once asked for. */
export interface Context {
  json: boolean;
  api(): Api;
}

export function contextOf(command: Command): Context {
  const globals = command.optsWithGlobals<{ json?: boolean; profile?: string }>();
  let api: Api | undefined;
  return {
    json: globals.json === true,
    api: () => (api ??= new Api(resolveProfile(globals.profile))),
  };
}

/**
 * A subcommand with its description and examples shown by `--help` (every command has some), whose
 * action gets its arguments, its options and the context.
 */
export function define(parent: Command, spec: string, description: string, examples: string[]): Command {
  const command = parent.command(spec).description(description);
  command.addHelpText('after', `\nExamples:\n${examples.map((line) => `  $ ${line}`).join('\n')}\n`);
  return command;
}

/** Runs `action` with the command's context; `this` is the command commander calls it on. */
export function act<A extends unknown[]>(action: (context: Context, ...args: A) => Promise<void>) {
  return async function (this: Command, ...args: unknown[]) {
    await action(contextOf(this), ...(args.slice(0, -1) as A));
  };
}

export const positiveInt = (name: string) => (value: string): number => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError(`${name} must be a whole number of at least 1`);
  return n;
};

export const collect = (value: string, previous: string[] = []): string[] => [...previous, ...value.split(',').map((v) => v.trim()).filter(Boolean)];
