import { Option, type Command } from 'commander';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import WebSocket from 'ws';
import { act, collect, define, positiveInt, type Context } from '../command.js';
import { triggerIds } from '../trigger-ref.js';
import { CliError, usage } from '../errors.js';
import { info, printJsonLine, statusText, style } from '../output.js';
import { parseSince } from '../since.js';
import { refusal, type Api } from '../api.js';

/** What the listen endpoint sends (see functions/domain/listen/protocol.ts). */
interface DeliveryMessage {
  type: 'delivery';
  trigger_id: string;
  execution_id: string;
  event_id: string;
  event_type?: string;
  received_at: string;
  status: string;
  sender?: string;
  replayed?: true;
  request: { method: string; headers: Record<string, string>; query: Record<string, string>; body?: string; body_encoding?: 'utf8' | 'base64'; body_bytes: number; body_url?: string };
}
interface ListenedTrigger { id: string; name: string; sender?: string; response_mode: string; answer_from_listener: boolean }

/** The most of a local answer sent back for the sender (answer_from_listener); over it, only its status. */
const MAX_ANSWER_BODY_BYTES = 64 * 1024;
/** Headers that belong to a hop, not to the delivery: the local request gets its own. */
const HOP_HEADERS = new Set(['host', 'connection', 'content-length', 'transfer-encoding', 'keep-alive', 'upgrade', 'te', 'trailer', 'proxy-connection', 'expect']);
const REDACTED = '[redacted]';
const RECONNECT_MAX_MS = 15_000;
/**
 * How often a `listen` of every trigger (no `--trigger`) looks for triggers made since it connected:
 * a connection chooses its triggers when it opens, so one made later is taken by connecting again.
 * `FLOWGATE_LISTEN_REFRESH_MS` sets it (tests use a short one).
 */
const REFRESH_MS = Number(process.env.FLOWGATE_LISTEN_REFRESH_MS) > 0 ? Number(process.env.FLOWGATE_LISTEN_REFRESH_MS) : 15_000;
/** Deliveries remembered to drop the ones a resumed connection's replay sends again. */
const SEEN_KEPT = 10_000;

/** API Gateway's WebSocket frame limit: a longer message goes in several frames (up to its 128 KB message limit). */
const MAX_FRAME_BYTES = 32 * 1024;

/** Sends a text message in frames of at most 32 KB each, as API Gateway takes them. */
function sendInFrames(socket: WebSocket, text: string): void {
  const bytes = Buffer.from(text, 'utf8');
  for (let at = 0; at < bytes.length || at === 0; at += MAX_FRAME_BYTES) {
    const end = Math.min(at + MAX_FRAME_BYTES, bytes.length);
    socket.send(bytes.subarray(at, end), { binary: false, fin: end === bytes.length });
    if (end === bytes.length) break;
  }
}

interface LocalAnswer { status?: number; ms: number; error?: string; headers?: Record<string, string>; body?: Buffer }

/** Re-sends a delivery to the local server: its method, headers and exact body bytes. */
function forward(target: URL, delivery: DeliveryMessage, body: Buffer, timeoutMs: number): Promise<LocalAnswer> {
  const url = new URL(target);
  for (const [name, value] of Object.entries(delivery.request.query)) if (value !== REDACTED && !url.searchParams.has(name)) url.searchParams.set(name, value);
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(delivery.request.headers)) if (!HOP_HEADERS.has(name) && value !== REDACTED) headers[name] = value;
  headers['content-length'] = String(body.length);
  headers['x-flowgate-execution-id'] = delivery.execution_id;
  const started = performance.now();
  return new Promise((resolve) => {
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = send(url, { method: delivery.request.method, headers, timeout: timeoutMs }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({
        status: res.statusCode ?? 0,
        ms: performance.now() - started,
        headers: Object.fromEntries(Object.entries(res.headers).map(([name, value]) => [name, Array.isArray(value) ? value.join(', ') : value ?? ''])),
        body: Buffer.concat(chunks),
      }));
      res.on('error', (error) => resolve({ ms: performance.now() - started, error: error.message }));
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', (error: NodeJS.ErrnoException) => resolve({ ms: performance.now() - started, error: error.code ?? error.message }));
    req.end(body);
  });
}

async function bodyOf(api: Api, delivery: DeliveryMessage): Promise<Buffer> {
  const { request } = delivery;
  if (request.body_url !== undefined) {
    // Over the WebSocket message limit: fetched whole from the inspector, with this profile's credentials.
    const detail = await api.get<{ request?: { body?: string; body_encoding?: string } }>(new URL(request.body_url).pathname);
    return Buffer.from(detail.request?.body ?? '', detail.request?.body_encoding === 'base64' ? 'base64' : 'utf8');
  }
  return Buffer.from(request.body ?? '', request.body_encoding === 'base64' ? 'base64' : 'utf8');
}

interface ListenOptions { forwardTo?: string; trigger?: string[]; events?: string[]; since?: string; listenUrl?: string; timeout: number; print?: boolean }

async function listen(context: Context, options: ListenOptions): Promise<void> {
  const api = context.api();
  const endpoint = options.listenUrl ?? api.profile.listen_url;
  if (!endpoint) throw usage('no listen endpoint: pass --listen-url, or log in with --listen-url (flowgate login --local sets it)');
  if (!options.forwardTo && !options.print) throw usage("option '--forward-to <url>' is required (or --print to only show deliveries)");
  let target: URL | undefined;
  if (options.forwardTo) {
    try {
      target = new URL(options.forwardTo);
      if (target.protocol !== 'http:' && target.protocol !== 'https:') throw new Error();
    } catch {
      throw usage(`--forward-to: not an http(s) URL: ${options.forwardTo}`);
    }
  }
  const names = new Map<string, ListenedTrigger>();
  const seen = new Set<string>();
  let resumeFrom = options.since;
  let stopping = false;
  let firstConnect = true;

  const print = (delivery: DeliveryMessage, answer: LocalAnswer | undefined) => {
    const trigger = names.get(delivery.trigger_id);
    const local = answer?.status;
    if (context.json) {
      return printJsonLine({
        time: delivery.received_at, trigger_id: delivery.trigger_id, trigger: trigger?.name ?? null, sender: delivery.sender ?? null, type: delivery.event_type ?? null,
        event_id: delivery.event_id, execution_id: delivery.execution_id, status: delivery.status, local_status: local ?? null, ms: answer ? Math.round(answer.ms) : null,
        ...(answer?.error && { error: answer.error }), ...(delivery.replayed && { replayed: true }),
        ...(delivery.request.body_url !== undefined && { body_by_reference: true }),
      });
    }
    const time = new Date(delivery.received_at).toISOString().slice(11, 23);
    const cells = [
      style.dim(time), trigger?.name ?? delivery.trigger_id, delivery.sender ?? '-', delivery.event_type ?? '-',
      answer ? (local !== undefined ? statusText(local) : style.red(answer.error ?? 'failed')) : style.dim(delivery.status),
      answer ? `${Math.round(answer.ms)} ms` : '', delivery.replayed ? style.dim('(replayed)') : '',
    ];
    process.stdout.write(`${cells.join('  ').trimEnd()}\n`);
  };

  const handle = async (socket: WebSocket, delivery: DeliveryMessage) => {
    if (seen.has(delivery.execution_id)) return;
    seen.add(delivery.execution_id);
    if (seen.size > SEEN_KEPT) seen.delete(seen.values().next().value!);
    if (!resumeFrom || delivery.received_at > resumeFrom) resumeFrom = delivery.received_at;
    if (!target) return print(delivery, undefined);
    const answer = await forward(target, delivery, await bodyOf(api, delivery), options.timeout);
    print(delivery, answer);
    if (socket.readyState !== WebSocket.OPEN) return;
    const body = answer.body && answer.body.length <= MAX_ANSWER_BODY_BYTES ? answer.body : undefined;
    sendInFrames(socket, JSON.stringify({
      action: 'answer', trigger_id: delivery.trigger_id, execution_id: delivery.execution_id, ms: Math.round(answer.ms),
      ...(answer.status !== undefined && { status: answer.status }),
      ...(answer.error !== undefined && { error: answer.error }),
      ...(answer.headers && { headers: answer.headers }),
      ...(body && { body: body.toString('base64'), body_encoding: 'base64' }),
    }));
  };

  // Names become ids once, before the first connection: a reconnect listens to the same triggers.
  const triggers = options.trigger?.length ? await triggerIds(api, options.trigger) : undefined;
  let announce = true;
  // Triggers connected again for that the endpoint did not list (past its 1,000): not asked for again.
  const sought = new Set<string>();
  const unlisted = new Set<string>();
  const connect = async (): Promise<'closed' | 'stopped' | 'refreshed'> => {
    const url = new URL(endpoint);
    if (triggers?.length) url.searchParams.set('triggers', triggers.join(','));
    if (options.events?.length) url.searchParams.set('events', options.events.join(','));
    if (resumeFrom) url.searchParams.set('since', resumeFrom);
    const socket = new WebSocket(url, { headers: await api.credentials() });
    return new Promise((resolve, reject) => {
      let ready = false;
      let refreshed = false;
      let refresh: NodeJS.Timeout | undefined;
      // Without --trigger, a trigger made meanwhile is listened to by connecting again, resuming
      // from the last delivery seen (or from when the endpoint said ready: nothing is missed).
      const lookForNewTriggers = () => {
        let looking = false;
        refresh = setInterval(async () => {
          if (looking || socket.readyState !== WebSocket.OPEN) return;
          looking = true;
          try {
            const fresh: { id: string; name: string }[] = [];
            for await (const trigger of api.client().triggers.list()) if (!names.has(trigger.id) && !unlisted.has(trigger.id)) fresh.push(trigger);
            if (fresh.length > 0 && socket.readyState === WebSocket.OPEN && !stopping) {
              info(style.dim(`New trigger${fresh.length === 1 ? '' : 's'} (${fresh.map((t) => t.name).join(', ')}): connecting again to listen to ${fresh.length === 1 ? 'it' : 'them'} too.`));
              for (const trigger of fresh) sought.add(trigger.id);
              refreshed = true;
              announce = true;
              socket.close(1000);
            }
          } catch {
            // The next look tries again; the connection itself is unaffected.
          } finally {
            looking = false;
          }
        }, REFRESH_MS);
      };
      const stop = () => {
        stopping = true;
        socket.close(1000);
      };
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
      // The endpoint answers `ready` (and the replay) to this first message: API Gateway cannot send before $connect has returned.
      socket.on('open', () => socket.send(JSON.stringify({ action: 'hello', ...(resumeFrom && { since: resumeFrom }) })));
      socket.on('unexpected-response', (_req, res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', async () => {
          const error = await refusal(new Response(Buffer.concat(chunks), { status: res.statusCode ?? 500, headers: { 'content-type': String(res.headers['content-type'] ?? '') } }));
          // A refusal is final (wrong credentials, another account's trigger); a server in trouble is retried.
          if ((res.statusCode ?? 500) < 500) reject(error);
          else resolve('closed');
        });
      });
      // Deliveries are forwarded one at a time, in the order they came, so the local server sees the sender's order.
      let chain = Promise.resolve();
      socket.on('message', (data) => {
        let message: { type: string } & Record<string, unknown>;
        try {
          message = JSON.parse(data.toString('utf8'));
        } catch {
          return;
        }
        if (message.type === 'ready') {
          ready = true;
          // A connection made again (a new trigger, a lost connection) resumes from here at the
          // latest, by the endpoint's clock: the laptop's may run ahead, and deliveries between
          // two connections would then be missed. An older endpoint says no time: this clock.
          resumeFrom ??= typeof message.server_time === 'string' ? message.server_time : new Date().toISOString();
          for (const trigger of message.triggers as ListenedTrigger[]) names.set(trigger.id, trigger);
          for (const id of sought) if (!names.has(id)) unlisted.add(id);
          sought.clear();
          if (!triggers && !refresh) lookForNewTriggers();
          if (announce) {
            firstConnect = false;
            announce = false;
            const list = [...names.values()].map((t) => t.name).join(', ') || 'none';
            info(`${style.green('Ready')}: listening to ${names.size} trigger${names.size === 1 ? '' : 's'} (${list})${target ? ` → ${target}` : ''}. Ctrl-C stops.`);
          } else info(style.dim('Reconnected; catching up.'));
        } else if (message.type === 'delivery') {
          const delivery = message as unknown as DeliveryMessage;
          chain = chain.then(() => handle(socket, delivery)).catch((error: unknown) => info(style.red(`could not forward ${delivery.execution_id}: ${(error as Error).message}`)));
        } else if (message.type === 'replayed') {
          info(style.dim(`Replayed ${message.count as number} deliver${message.count === 1 ? 'y' : 'ies'} since then${message.truncated ? ' (only the newest: more arrived than a replay sends)' : ''}.`));
        } else if (message.type === 'error') {
          info(style.red(`listen endpoint: ${message.error as string}: ${message.message as string}`));
        }
      });
      socket.on('error', (error) => {
        if (!ready && firstConnect) reject(new CliError(`cannot connect to ${endpoint}: ${(error as NodeJS.ErrnoException).code ?? error.message}`));
      });
      socket.on('close', () => {
        clearInterval(refresh);
        process.removeListener('SIGINT', stop);
        process.removeListener('SIGTERM', stop);
        void chain.then(() => resolve(stopping ? 'stopped' : refreshed ? 'refreshed' : 'closed'));
      });
    });
  };

  let delay = 500;
  for (;;) {
    const started = Date.now();
    const outcome = await connect();
    if (outcome === 'stopped' || stopping) return;
    if (outcome === 'refreshed') continue;
    if (Date.now() - started > 30_000) delay = 500;
    info(style.yellow(`Connection lost; reconnecting in ${Math.round(delay / 1000)} s (resuming from ${resumeFrom ?? 'now'}).`));
    await new Promise((done) => setTimeout(done, delay));
    delay = Math.min(delay * 2, RECONNECT_MAX_MS);
  }
}

export function registerListen(program: Command): void {
  define(program, 'listen', "Forward each delivery to your triggers, as it arrives, to a local server: same method, headers and body bytes, so its own signature check passes; its answer is recorded on the delivery", [
    'flowgate listen --forward-to http://localhost:4000/hooks',
    'flowgate listen --forward-to http://localhost:4000/stripe --trigger 3f2a… --events payment_intent.*,charge.refunded',
    'flowgate listen --forward-to http://localhost:4000/hooks --since 30m      # what arrived in the last 30 minutes first',
    'flowgate listen --print --json | jq .type',
  ])
    .option('--forward-to <url>', 'the local URL each delivery is sent to')
    .option('--trigger <id>', 'a trigger to listen to, by id or name (repeat, or comma-separate); default: every trigger of the account', collect)
    .option('--events <types>', 'only these event types (comma-separated; a trailing * matches a prefix)', collect)
    .addOption(new Option('--since <time>', 'first replay what arrived since then: an ISO time or a duration (10m, 2h, 1d)').argParser((v) => parseSince(v)))
    .option('--listen-url <url>', 'the listen endpoint (default: the profile\'s)')
    .option('--timeout <ms>', 'how long the local server has to answer, in milliseconds', positiveInt('--timeout'), 30_000)
    .option('--print', 'only print deliveries, forward nothing')
    .action(act(listen));
}
