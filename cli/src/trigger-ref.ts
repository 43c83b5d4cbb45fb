import type { Api } from './api.js';
import { CliError } from './errors.js';

/** What the service gives a trigger as its id: 32 hex characters. */
const TRIGGER_ID = /^[0-9a-f]{32}$/;

/**
 * A trigger as a user names it on the command line: its id, or its name (`triggers create --name`)
 * when exactly one of the account's triggers has it. Names need not be unique, so two of one name
 * are refused with their ids rather than one chosen.
 */
export async function triggerId(api: Api, ref: string): Promise<string> {
  if (TRIGGER_ID.test(ref)) return ref;
  const named: string[] = [];
  for await (const trigger of api.client().triggers.list()) if (trigger.name === ref) named.push(trigger.id);
  if (named.length === 1) return named[0]!;
  if (named.length === 0) throw new CliError(`no trigger has the id or name "${ref}" (flowgate triggers list shows them)`);
  throw new CliError(`${named.length} triggers are named "${ref}": give one's id (${named.join(', ')})`);
}

/** `triggerId` for each of a list (`--trigger a,b`). */
export const triggerIds = (api: Api, refs: readonly string[]): Promise<string[]> => Promise.all(refs.map((ref) => triggerId(api, ref)));
