import { Option, type Command } from 'commander';
import { act, collect, define, positiveInt, type Context } from '../command.js';
import { triggerId, triggerIds } from '../trigger-ref.js';
import { usage } from '../errors.js';
import { info, printJson, printJsonLine, printTable, style } from '../output.js';
import { parseSince } from '../since.js';

interface Delivery { execution_id: string; event_id: string; received_at: string; type?: string; status: string; attempts: number; forwarded?: { status?: number }[] }

const STATUSES = ['queued', 'running', 'succeeded', 'failed', 'ignored', 'duplicate', 'refused', 'handshake'];

const row = (d: Delivery, trigger?: string) => [
  ...(trigger !== undefined ? [trigger] : []), d.received_at, d.execution_id, d.type ?? '-', d.status, d.event_id, d.forwarded?.length ? String(d.forwarded.at(-1)?.status ?? 'failed') : '',
];
const COLUMNS = ['RECEIVED', 'EXECUTION', 'TYPE', 'STATUS', 'EVENT ID', 'LOCAL'];

interface ListOptions { trigger: string; status?: string[]; type?: string; since?: string; limit: number }

async function list(context: Context, options: ListOptions): Promise<void> {
  const client = context.api().client();
  const found: Delivery[] = [];
  for await (const delivery of client.deliveries.list(await triggerId(context.api(), options.trigger), {
    ...(options.status && { status: options.status.join(',') }), ...(options.type && { type: options.type }), ...(options.since && { since: options.since }),
  } as never)) {
    found.push(delivery as Delivery);
    if (found.length >= options.limit) break;
  }
  if (context.json) return printJson(found);
  printTable(COLUMNS, found.map((d) => row(d)));
}

interface TailOptions { trigger?: string[]; status?: string[]; type?: string; interval: number; since?: string }

/** Follows new deliveries (oldest first) of the chosen triggers, or all the account's, by polling the list. */
async function tail(context: Context, options: TailOptions): Promise<void> {
  const client = context.api().client();
  const names = new Map<string, string>();
  if (options.trigger?.length) for (const id of await triggerIds(context.api(), options.trigger)) names.set(id, (await client.triggers.get(id)).name);
  else for await (const trigger of client.triggers.list()) names.set(trigger.id, trigger.name);
  let since = options.since ?? new Date().toISOString();
  const seen = new Set<string>();
  let stopping = false;
  const stop = () => {
    stopping = true;
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  info(`${style.green('Following')} ${names.size} trigger${names.size === 1 ? '' : 's'} (${[...names.values()].join(', ') || 'none'}). Ctrl-C stops.`);
  while (!stopping) {
    const fresh: (Delivery & { trigger_id: string })[] = [];
    for (const id of names.keys()) {
      for await (const delivery of client.deliveries.list(id, { since, ...(options.status && { status: options.status.join(',') }), ...(options.type && { type: options.type }) } as never)) {
        const d = delivery as Delivery;
        if (!seen.has(d.execution_id)) fresh.push({ ...d, trigger_id: id });
      }
    }
    fresh.sort((a, b) => a.received_at.localeCompare(b.received_at));
    for (const d of fresh) {
      seen.add(d.execution_id);
      if (d.received_at > since) since = d.received_at;
      if (context.json) printJsonLine({ ...d, trigger: names.get(d.trigger_id) });
      else process.stdout.write(`${row(d, names.get(d.trigger_id)).join('  ')}\n`);
    }
    await new Promise((done) => setTimeout(done, options.interval));
  }
}

export function registerDeliveries(program: Command): void {
  const deliveries = program.command('deliveries').description("A trigger's deliveries: list, show, follow and replay them");
  deliveries.addHelpText('after', '\nExamples:\n  $ flowgate deliveries list --trigger <id> --status failed\n  $ flowgate deliveries tail\n');

  define(deliveries, 'list', "A trigger's deliveries, newest first", [
    'flowgate deliveries list --trigger <id>',
    'flowgate deliveries list --trigger <id> --status failed,refused --since 1h --json',
  ])
    .requiredOption('--trigger <id>', 'the trigger: its id, or its name')
    .addOption(new Option('--status <statuses>', `only these (comma-separated: ${STATUSES.join(', ')})`).argParser(collect))
    .option('--type <type>', 'only this event type (a trailing * matches a prefix)')
    .addOption(new Option('--since <time>', 'received since then: an ISO time or a duration (10m, 2h, 1d)').argParser((v) => parseSince(v)))
    .option('--limit <n>', 'at most this many', positiveInt('--limit'), 50)
    .action(act(list));

  define(deliveries, 'show', 'One delivery: its request, its attempts, and what listeners answered', [
    'flowgate deliveries show <trigger id> <execution id>',
    'flowgate deliveries show <trigger id> <execution id> --json | jq .request.headers',
  ])
    .argument('<trigger>', 'the trigger: its id, or its name')
    .argument('<execution>', 'the execution id')
    .action(act(async (context, trigger: string, execution: string) => {
      const detail = await context.api().client().deliveries.get(await triggerId(context.api(), trigger), execution) as Delivery & { request?: { method: string; headers: Record<string, string>; body?: string; body_bytes: number }; timeline: { attempt: number; status: string; started_at: string }[]; error?: string };
      if (context.json) return printJson(detail);
      process.stdout.write(`${style.bold(detail.execution_id)}  ${detail.status}  ${detail.type ?? '-'}  event ${detail.event_id}  received ${detail.received_at}\n`);
      if (detail.error) process.stdout.write(`error: ${detail.error}\n`);
      for (const attempt of detail.timeline ?? []) process.stdout.write(`  attempt ${attempt.attempt}: ${attempt.status} at ${attempt.started_at}\n`);
      for (const f of detail.forwarded ?? []) process.stdout.write(`  forwarded: ${JSON.stringify(f)}\n`);
      if (detail.request) {
        process.stdout.write(`\n${detail.request.method} (${detail.request.body_bytes} bytes)\n`);
        for (const [name, value] of Object.entries(detail.request.headers)) process.stdout.write(`${style.dim(name)}: ${value}\n`);
        if (detail.request.body !== undefined) process.stdout.write(`\n${detail.request.body}\n`);
      }
    }));

  define(deliveries, 'tail', 'Follow new deliveries as they are recorded, oldest first, filtered by trigger, status and type', [
    'flowgate deliveries tail',
    'flowgate deliveries tail --trigger <id> --status failed --json',
  ])
    .option('--trigger <id>', 'only this trigger, by id or name (repeat); default every trigger of the account', collect)
    .addOption(new Option('--status <statuses>', 'only these statuses (comma-separated)').argParser(collect))
    .option('--type <type>', 'only this event type (a trailing * matches a prefix)')
    .addOption(new Option('--since <time>', 'start from then rather than now').argParser((v) => parseSince(v)))
    .option('--interval <ms>', 'how often to look, in milliseconds', positiveInt('--interval'), 1000)
    .action(act(tail));

  define(deliveries, 'replay', "Run a stored delivery's flow again (a new execution, replay_of the old)", [
    'flowgate deliveries replay <trigger id> <execution id>',
  ])
    .argument('<trigger>', 'the trigger: its id, or its name')
    .argument('<execution>', 'the execution id')
    .action(act(async (context, trigger: string, execution: string) => {
      if (!/^[\w-]+$/.test(execution)) throw usage(`execution: not an execution id: ${execution}`);
      const replay = await context.api().client().deliveries.replay(await triggerId(context.api(), trigger), execution);
      if (context.json) return printJson(replay);
      process.stdout.write(`Replaying ${execution}: ${JSON.stringify(replay)}\n`);
    }));
}
