import { Option, type Command } from 'commander';
import { readFileSync } from 'node:fs';
import { act, collect, define, positiveInt } from '../command.js';
import { triggerId } from '../trigger-ref.js';
import { usage } from '../errors.js';
import { info, printJson, printTable } from '../output.js';

interface Trigger { id: string; name: string; flow: string; response_mode: string; url: string; enabled: boolean; signature: { service: string } | null; answer_from_listener?: boolean; api_key?: string }

const show = (t: Trigger) => [
  ['id', t.id], ['name', t.name], ['flow', t.flow], ['url', t.url], ['response_mode', t.response_mode], ['sender', t.signature?.service ?? '-'],
  ['enabled', String(t.enabled)], ['answer_from_listener', String(t.answer_from_listener ?? false)],
];

export function registerTriggers(program: Command): void {
  const triggers = program.command('triggers').description('Webhook triggers: list, create, show, rotate');
  triggers.addHelpText('after', '\nExamples:\n  $ flowgate triggers list\n  $ flowgate triggers create --flow echo --sender stripe --secret whsec_…\n');

  define(triggers, 'list', "The account's triggers", ['flowgate triggers list', 'flowgate triggers list --json | jq -r ".[].url"'])
    .action(act(async (context) => {
      const all: Trigger[] = [];
      for await (const trigger of context.api().client().triggers.list()) all.push(trigger as Trigger);
      if (context.json) return printJson(all);
      printTable(['ID', 'NAME', 'FLOW', 'MODE', 'SENDER', 'URL'], all.map((t) => [t.id, t.name, t.flow, t.response_mode, t.signature?.service, t.url]));
    }));

  define(triggers, 'create', 'Create a trigger: a URL a sender posts to, which runs a flow', [
    'flowgate triggers create --flow echo',
    'flowgate triggers create --flow echo --name stripe-dev --sender stripe --secret whsec_… --mode wait --answer-from-listener',
    'flowgate triggers create --flow echo --sender sendgrid --secret-file sendgrid-public.txt',
  ])
    .requiredOption('--flow <name>', 'the flow it runs (GET /flows lists them)')
    .option('--name <name>', 'a name of its own')
    .addOption(new Option('--mode <mode>', 'acknowledge (answer at once, run later) or wait (answer with the flow\'s output)').choices(['acknowledge', 'wait']))
    .option('--sender <id>', 'verify deliveries as this sender signs them (stripe, github, …)')
    .option('--secret <secret>', "the sender's signing secret")
    .option('--secret-file <path>', 'read the secret from a file (a public key, say)')
    .option('--events <types>', 'only run for these event types (comma-separated)', collect)
    .option('--api-key', 'protect the URL with an API key too (shown once)')
    .option('--answer-from-listener', 'wait mode: answer senders from a connected flowgate listen')
    .action(act(async (context, options: { flow: string; name?: string; mode?: 'acknowledge' | 'wait'; sender?: string; secret?: string; secretFile?: string; events?: string[]; apiKey?: boolean; answerFromListener?: boolean }) => {
      const secret = options.secretFile ? readFileSync(options.secretFile, 'utf8').trim() : options.secret;
      if (secret && !options.sender) throw usage('--secret needs --sender (whose scheme the secret is for)');
      const created = await context.api().client().triggers.create({
        flow: options.flow,
        ...(options.name && { name: options.name }),
        ...(options.mode && { response_mode: options.mode }),
        ...(options.sender && { signature: { service: options.sender, ...(secret && { secret }) } }),
        ...(options.events && { event_filter: options.events }),
        ...(options.apiKey && { api_key_enabled: true }),
        ...(options.answerFromListener && { answer_from_listener: true }),
      } as never) as Trigger;
      if (context.json) return printJson(created);
      printTable(['FIELD', 'VALUE'], show(created));
      if (created.api_key) info(`API key (shown once): ${created.api_key}`);
    }));

  define(triggers, 'show', 'One trigger', ['flowgate triggers show <id>', 'flowgate triggers show <id> --json'])
    .argument('<trigger>', 'the trigger: its id, or its name')
    .action(act(async (context, ref: string) => {
      const trigger = await context.api().client().triggers.get(await triggerId(context.api(), ref)) as Trigger;
      if (context.json) return printJson(trigger);
      printTable(['FIELD', 'VALUE'], show(trigger));
    }));

  define(triggers, 'rotate', "Replace a trigger's signing secret (the old one works for an overlap), its URL, or its API key", [
    'flowgate triggers rotate <id> --secret whsec_new… --overlap 3600',
    'flowgate triggers rotate <id> --url',
    'flowgate triggers rotate <id> --api-key',
  ])
    .argument('<trigger>', 'the trigger: its id, or its name')
    .option('--secret <secret>', 'the new signing secret')
    .option('--overlap <seconds>', 'how long the old secret or key keeps working', positiveInt('--overlap'))
    .option('--url', 'a new webhook URL; the old one stops at once')
    .option('--api-key', 'a new API key (shown once)')
    .action(act(async (context, ref: string, options: { secret?: string; overlap?: number; url?: boolean; apiKey?: boolean }) => {
      const chosen = [options.secret !== undefined, options.url === true, options.apiKey === true].filter(Boolean).length;
      if (chosen !== 1) throw usage('give one of --secret, --url or --api-key');
      const id = await triggerId(context.api(), ref);
      const triggers = context.api().client().triggers;
      const changed = (options.secret !== undefined
        ? await triggers.rotateSigningSecret(id, { secret: options.secret, ...(options.overlap && { previous_secret_expires_in_seconds: options.overlap }) } as never)
        : options.url ? await triggers.regenerateUrl(id)
          : await triggers.regenerateApiKey(id, options.overlap ? { previous_key_expires_in_seconds: options.overlap } : {})) as Trigger;
      if (context.json) return printJson(changed);
      printTable(['FIELD', 'VALUE'], show(changed));
      if (changed.api_key) info(`API key (shown once): ${changed.api_key}`);
    }));
}
