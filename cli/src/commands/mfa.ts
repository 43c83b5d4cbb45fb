import type { Command } from 'commander';
import { act, define, positiveInt } from '../command.js';
import { printJson, printTable } from '../output.js';

export function registerMfa(program: Command): void {
  const mfa = program.command('mfa').description("Your second factors: status and events");
  mfa.addHelpText('after', '\nExamples:\n  $ flowgate mfa status\n  $ flowgate mfa events --limit 20\n');

  define(mfa, 'status', 'Your factors and how many recovery codes remain', ['flowgate mfa status', 'flowgate mfa status --json'])
    .action(act(async (context) => {
      const factors = await context.api().client().accounts.listFactors() as { factors: { id: string; type: string; name?: string; created_at?: string }[]; recovery_codes_remaining?: number };
      if (context.json) return printJson(factors);
      printTable(['ID', 'TYPE', 'NAME', 'CREATED'], factors.factors.map((f) => [f.id, f.type, f.name, f.created_at]));
      process.stdout.write(`recovery codes remaining: ${factors.recovery_codes_remaining ?? 0}\n`);
    }));

  define(mfa, 'events', 'Your MFA events, newest first', ['flowgate mfa events', 'flowgate mfa events --limit 5 --json'])
    .option('--limit <n>', 'at most this many', positiveInt('--limit'), 50)
    .action(act(async (context, options: { limit: number }) => {
      const events: Record<string, unknown>[] = [];
      for await (const event of context.api().client().accounts.events()) {
        events.push(event as Record<string, unknown>);
        if (events.length >= options.limit) break;
      }
      if (context.json) return printJson(events);
      printTable(['AT', 'EVENT', 'DETAIL'], events.map((e) => [e.at as string ?? e.created_at as string, e.type as string ?? e.event as string, JSON.stringify(Object.fromEntries(Object.entries(e).filter(([k]) => !['at', 'created_at', 'type', 'event'].includes(k))))]));
    }));
}
