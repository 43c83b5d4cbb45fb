import type { Command } from 'commander';
import { readFileSync } from 'node:fs';
import { act, define, type Context } from '../command.js';
import { triggerId } from '../trigger-ref.js';
import { CliError, usage } from '../errors.js';
import { FIXTURES, fixtureContext, fixturesOf, type Fixture } from '../fixtures/events.js';
import { info, printJson, printTable, statusText } from '../output.js';
import { senderRow, signAs } from '../sign.js';

interface TriggerOptions { to?: string; secret?: string; secretFile?: string; data: string[]; list?: boolean }

/** `--data a.b=1`: the value as JSON when it parses (numbers, true, null, objects), else as text. */
function parseData(entries: string[]): [string[], unknown, string][] {
  return entries.map((entry) => {
    const at = entry.indexOf('=');
    if (at <= 0) throw usage(`--data: expected key=value (a dotted path such as data.object.amount=500), got "${entry}"`);
    const text = entry.slice(at + 1);
    let value: unknown = text;
    try {
      value = JSON.parse(text);
    } catch {
      // Text as it is.
    }
    return [entry.slice(0, at).split('.'), value, text];
  });
}

function setPath(target: unknown, path: string[], value: unknown): void {
  let node = target as Record<string, unknown>;
  path.forEach((key, i) => {
    if (i === path.length - 1) {
      node[key] = value;
      return;
    }
    if (typeof node[key] !== 'object' || node[key] === null) node[key] = {};
    node = node[key] as Record<string, unknown>;
  });
}

function readPath(value: unknown, path: readonly string[]): unknown {
  return path.reduce<unknown>((node, key) => (typeof node === 'object' && node !== null ? (node as Record<string, unknown>)[key] : undefined), value);
}

function chooseFixture(sender: string, event: string | undefined): Fixture {
  const own = fixturesOf(sender);
  if (own.length === 0) {
    const senders = [...new Set(FIXTURES.map((f) => f.sender))].join(', ');
    throw usage(`sender: no events for "${sender}" (senders with events: ${senders}; flowgate trigger --list)`);
  }
  if (event === undefined) return own[0]!;
  const found = own.find((f) => f.event === event);
  if (!found) throw usage(`event: "${event}" is not one of ${sender}'s: ${own.map((f) => f.event).join(', ')}`);
  return found;
}

async function send(context: Context, sender: string | undefined, event: string | undefined, options: TriggerOptions): Promise<void> {
  if (options.list) {
    const rows = FIXTURES.filter((f) => sender === undefined || f.sender === sender).map((f) => ({ sender: f.sender, event: f.event, description: f.description }));
    if (context.json) return printJson(rows);
    return printTable(['SENDER', 'EVENT', 'DESCRIPTION'], rows.map((r) => [r.sender, r.event, r.description]));
  }
  if (sender === undefined) throw usage("missing required argument 'sender' (flowgate trigger --list shows them)");
  if (!options.to) throw usage("required option '--to <trigger>' not specified");
  const fixture = chooseFixture(sender, event);
  const api = context.api();
  let url: string;
  let signedBy: string | undefined;
  if (/^https?:\/\//.test(options.to)) url = options.to;
  else {
    const trigger = await api.get<{ url: string; signature: { service: string } | null }>(`/triggers/${await triggerId(api, options.to)}`);
    url = trigger.url;
    signedBy = trigger.signature?.service;
    if (signedBy !== undefined && signedBy !== sender) info(`warning: trigger ${options.to} verifies ${signedBy}, not ${sender}: expect 401 invalid_signature`);
  }
  const secret = options.secretFile ? readFileSync(options.secretFile, 'utf8').trim() : options.secret ?? process.env.FLOWGATE_SIGNING_SECRET;
  const unsigned = signedBy === undefined && !/^https?:\/\//.test(options.to);
  if (!secret && !unsigned) throw usage(`option '--secret <secret>' is required: the trigger's ${sender} signing secret (or --secret-file, or FLOWGATE_SIGNING_SECRET)`);

  const ctx = fixtureContext();
  const built = fixture.build(ctx);
  const overrides = parseData(options.data);
  let contentType = 'application/json';
  let bytes: Buffer;
  if (built.body instanceof URLSearchParams) {
    contentType = 'application/x-www-form-urlencoded';
    for (const [path, , text] of overrides) built.body.set(path.join('.'), text);
    bytes = Buffer.from(built.body.toString(), 'utf8');
  } else {
    for (const [path, value] of overrides) setPath(built.body, path, value);
    bytes = Buffer.from(JSON.stringify(built.body), 'utf8');
  }
  let headers: Record<string, string> = { 'content-type': contentType, 'user-agent': 'flowgate-cli', ...built.headers };
  if (!unsigned && secret) headers = { 'user-agent': 'flowgate-cli', ...(await signAs(sender, { url, body: bytes, headers: built.headers ?? {}, contentType, secret, nowSeconds: ctx.nowSeconds })) };

  let response: Response;
  try {
    response = await fetch(url, { method: 'POST', headers, body: bytes });
  } catch (error) {
    throw new CliError(`cannot reach ${url}: ${((error as Error).cause as Error | undefined)?.message ?? (error as Error).message}`);
  }
  const text = await response.text();
  let answer: unknown = text;
  try {
    answer = JSON.parse(text);
  } catch {
    // Not JSON: the text.
  }
  const row = senderRow(sender);
  const idAt = row?.delivery_id as { from: string; path?: string[]; name?: string } | undefined;
  const eventId = idAt?.from === 'json' && !(built.body instanceof URLSearchParams) ? readPath(built.body, idAt.path!) : idAt?.from === 'header' ? headers[idAt.name!] : undefined;
  if (context.json) printJson({ sender, event: fixture.event, ...(eventId !== undefined && { event_id: eventId }), status: response.status, answer });
  else {
    process.stdout.write(`${statusText(response.status)} ${sender} ${fixture.event}${eventId !== undefined ? ` (${String(eventId)})` : ''}\n`);
    process.stdout.write(`${typeof answer === 'string' ? answer : JSON.stringify(answer, null, 2)}\n`);
  }
  if (!response.ok) process.exitCode = 1;
}

export function registerTrigger(program: Command): void {
  define(program, 'trigger', 'Send a realistic event of a sender to a trigger, signed exactly as the sender signs, and print the answer', [
    'flowgate trigger --list',
    'flowgate trigger stripe payment_intent.succeeded --to <trigger id> --secret whsec_…',
    'flowgate trigger github pull_request --to <trigger id> --secret "$GITHUB_SECRET" --data action=closed',
    'flowgate trigger twilio --to <trigger id> --secret "$TWILIO_AUTH_TOKEN" --data Body="STOP"',
    'flowgate trigger sendgrid --to <trigger id> --secret-file sendgrid-private.pem',
  ])
    .argument('[sender]', 'a sender id (stripe, github, shopify, slack, twilio, …)')
    .argument('[event]', "one of the sender's events (default: its first)")
    .option('--to <trigger>', 'the trigger: its id or name (the URL is looked up), or its webhook URL')
    .option('--secret <secret>', "the trigger's signing secret (default FLOWGATE_SIGNING_SECRET)")
    .option('--secret-file <path>', 'read the secret from a file (a PEM private key for senders that sign with one)')
    .option('--data <key=value>', 'set a field of the body (a dotted path; repeat)', (v: string, prev: string[]) => [...prev, v], [] as string[])
    .option('--list', 'list the senders and events there are fixtures for')
    .action(act(send));
}
