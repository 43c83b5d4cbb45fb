import type { Clock } from '../clock.js';
import type { ExecutionRef, ExecutionStore } from '../flows/ports.js';
import type { TriggerRecord } from '../triggers/trigger.js';
import type { TriggerStore } from '../triggers/trigger-store.js';
import { MAX_REPLY_HEADERS, replyRules } from '../webhooks/flow-reply.js';
import { MAX_ANSWER_BODY_BYTES, MAX_REPLAYED_PER_TRIGGER, MAX_REPLAY_READS_PER_HOUR, REPLAY_PAGE, deliveryMessage, typeMatches, type AnswerMessage, type ListenedTrigger, type ListenQuery, type ReadyMessage } from './protocol.js';
import type { ForwardedAttempts, ListenerAnswer, ListenerAnswers, ReplayBudget } from './ports.js';

/** One connected listener: whose it is, what it listens to, and how to send it a message. */
export interface ListenerConnection {
  id: string;
  accountId: string;
  triggers: ReadonlyMap<string, ListenedTrigger>;
  events?: readonly string[];
  /** Sends one message; false when the connection is gone. */
  send(text: string): Promise<boolean>;
}

export interface ListenerHubDeps {
  executions: Pick<ExecutionStore, 'get' | 'list'>;
  triggers: Pick<TriggerStore, 'get' | 'list'>;
  forwarded: ForwardedAttempts;
  answers: ListenerAnswers;
  /** The account's replay reads this hour, counted across its connections. */
  replayBudget: ReplayBudget;
  now: Clock;
  /** The API's base URL: a body too large for a message is fetched from its inspector route. */
  apiBaseUrl: string;
}

const MAX_TRIGGERS_LISTED = 1000;
/** The longest tolerance a sender's signed timestamp may have (a custom signature's `MAX_TOLERANCE_SECONDS`). */
const SIGNED_TIME_SLACK_MS = 3600 * 1000;
const HOUR_MS = 3600 * 1000;

/** Hop-by-hop and framing headers of the local answer are the local server's, never passed on to the sender. */
const NOT_PASSED_ON = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length', 'date', 'server', 'upgrade', 'proxy-connection', 'te', 'trailer']);

export class ListenError extends Error {
  constructor(readonly code: 'not_found' | 'validation_error', message: string) {
    super(message);
  }
}

const listened = (record: TriggerRecord): ListenedTrigger => ({
  id: record.id,
  name: record.name ?? record.flow,
  ...(record.signature && { sender: record.signature.service }),
  response_mode: record.response_mode,
  answer_from_listener: record.answer_from_listener === true,
});

/**
 * What the listen endpoint does for a connection (`functions/handlers/listen.ts`, behind API
 * Gateway's WebSocket API deployed and its emulator locally): resolves the triggers it may listen
 * to (its own account's only), says `ready` and replays `since`, records its local answers on the
 * deliveries, and keeps the answer a wait-mode sender gets when the trigger answers from a listener
 * (`ListenerAnswers`). The pushes of new deliveries are the receiver's (`DeliveryListeners`).
 */
export class ListenerHub {
  constructor(private readonly deps: ListenerHubDeps) {}

  /** The triggers a listener of `accountId` asked for (all of the account's when none): another account's are not found. */
  async resolve(accountId: string, query: ListenQuery): Promise<Map<string, ListenedTrigger>> {
    const chosen = new Map<string, ListenedTrigger>();
    if (query.triggers) {
      for (const id of query.triggers) {
        const record = await this.deps.triggers.get(accountId, id);
        if (!record) throw new ListenError('not_found', `trigger ${id} not found`);
        chosen.set(id, listened(record));
      }
      return chosen;
    }
    let cursor: string | undefined;
    do {
      const page = await this.deps.triggers.list(accountId, { limit: 100, ...(cursor && { cursor }) });
      page.items.forEach((record) => chosen.set(record.id, listened(record)));
      cursor = page.nextCursor ?? undefined;
    } while (cursor && chosen.size < MAX_TRIGGERS_LISTED);
    return chosen;
  }

  /**
   * Says `ready`, then sends what `since` asks for (live deliveries flow from the connection's
   * `$connect`): each trigger's records since then, oldest first, at most `MAX_REPLAYED_PER_TRIGGER`
   * a trigger (its newest). The records it lists count against the account's
   * `MAX_REPLAY_READS_PER_HOUR` (`ReplayBudget`), taken a round of pages at a time: listed a page
   * of each trigger per round, so a replay the budget cuts still has each trigger's newest.
   */
  async add(connection: ListenerConnection, since?: string): Promise<void> {
    const ready: ReadyMessage = { type: 'ready', connection_id: connection.id, triggers: [...connection.triggers.values()], server_time: new Date(this.deps.now()).toISOString() };
    if (!(await connection.send(JSON.stringify(ready))) || since === undefined) return;
    const found: { ref: ExecutionRef; receivedAt: string }[] = [];
    let truncated = false;
    let spent = false;
    // A record keyed on its signed timestamp sorts by that time, up to the sender's tolerance before
    // it arrived (`claim-record.ts`): list from that much earlier, keep what arrived since.
    const listedFrom = new Date(Date.parse(since) - SIGNED_TIME_SLACK_MS).toISOString();
    const hour = Math.floor(this.deps.now() / HOUR_MS);
    const lists = [...connection.triggers.keys()].map((triggerId) => ({ triggerId, cursor: undefined as string | undefined, listed: 0, done: false }));
    for (let active = lists; active.length > 0; active = active.filter((list) => !list.done)) {
      const wanted = active.reduce((sum, list) => sum + Math.min(REPLAY_PAGE, MAX_REPLAYED_PER_TRIGGER - list.listed), 0);
      const granted = await this.deps.replayBudget.take(connection.accountId, hour, wanted, MAX_REPLAY_READS_PER_HOUR);
      let left = granted;
      for (const list of active) {
        if (left === 0) break;
        const limit = Math.min(REPLAY_PAGE, MAX_REPLAYED_PER_TRIGGER - list.listed, left);
        const page = await this.deps.executions.list(list.triggerId, { since: listedFrom }, { limit, ...(list.cursor && { cursor: list.cursor }) });
        left = Math.max(0, left - page.items.length);
        list.listed += page.items.length;
        for (const item of page.items) {
          if (item.received_at >= since && typeMatches(connection.events, item.type)) found.push({ ref: { triggerId: list.triggerId, executionId: item.execution_id }, receivedAt: item.received_at });
        }
        list.cursor = page.nextCursor ?? undefined;
        if (!list.cursor) list.done = true;
        else if (list.listed >= MAX_REPLAYED_PER_TRIGGER) list.done = truncated = true;
      }
      if (left > 0) await this.deps.replayBudget.giveBack(connection.accountId, hour, left);
      if (granted < wanted && active.some((list) => !list.done)) {
        spent = truncated = true;
        break;
      }
    }
    found.sort((a, b) => a.receivedAt.localeCompare(b.receivedAt) || a.ref.executionId.localeCompare(b.ref.executionId));
    for (const { ref } of found) {
      const detail = await this.deps.executions.get(ref);
      const trigger = connection.triggers.get(ref.triggerId)!;
      if (detail && !(await connection.send(deliveryMessage(detail, { id: trigger.id, ...(trigger.sender !== undefined && { sender: trigger.sender }) }, this.deps.apiBaseUrl, { replayed: true })))) return;
    }
    if (spent) {
      const next = new Date((hour + 1) * HOUR_MS).toISOString().slice(11, 16);
      await connection.send(JSON.stringify({
        type: 'error', error: 'too_many_attempts',
        message: `this account's replays read ${MAX_REPLAY_READS_PER_HOUR.toLocaleString('en-US')} delivery records this hour, the most they may: this replay was cut (its oldest not sent); new deliveries still arrive, and a replay (connect again with since) reads more after ${next} UTC`,
      }));
    }
    await connection.send(JSON.stringify({ type: 'replayed', count: found.length, truncated }));
  }

  /**
   * A listener's answer, ignored unless the delivery is one of its triggers': when the trigger
   * answers a waiting sender from a listener, kept for the receiver first (the first answer wins;
   * one that could not reach its local server is counted), then recorded on the delivery as a
   * forwarded attempt, beside (never instead of) the flow's run.
   */
  async answered(connection: ListenerConnection, message: AnswerMessage): Promise<void> {
    const trigger = connection.triggers.get(message.trigger_id);
    if (!trigger) return;
    const ref = { triggerId: message.trigger_id, executionId: message.execution_id };
    const forSender = trigger.answer_from_listener && trigger.response_mode === 'wait';
    const answer = forSender ? this.senderAnswer(message) : undefined;
    const kept = forSender && await this.deps.answers.keep(ref, answer);
    await this.deps.forwarded.add(ref, {
      at: new Date(this.deps.now()).toISOString(),
      listener: connection.id,
      ...(message.status !== undefined && { status: message.status }),
      ...(message.ms !== undefined && { ms: Math.round(message.ms) }),
      ...(message.error !== undefined && { error: message.error.slice(0, 200) }),
      ...(kept && { answered_sender: true as const }),
    });
  }

  /**
   * The answer the sender gets, held to a flow's reply's rules (`flow-reply.ts`): the receiver shares
   * its origin with the console, so a `Set-Cookie` of the local server (or of whoever holds a
   * triggers key) is never passed on, nor are the local server's hop-by-hop headers; an answer HTTP
   * could not carry (a 1xx status, a header with a line break, a body that is not base64 though said
   * to be) is not kept, and the sender gets the flow's answer instead.
   */
  private senderAnswer(message: AnswerMessage): ListenerAnswer | undefined {
    if (message.status === undefined || message.status < 200) return undefined;
    const body = message.body ?? '';
    const isBase64Encoded = message.body_encoding === 'base64';
    if (isBase64Encoded && !replyRules.isBase64(body)) return undefined;
    const bytes = isBase64Encoded ? Buffer.from(body, 'base64').length : Buffer.byteLength(body, 'utf8');
    if (bytes > MAX_ANSWER_BODY_BYTES) return undefined;
    const entries = Object.entries(message.headers ?? {});
    if (entries.length > MAX_REPLY_HEADERS) return undefined;
    const headers: Record<string, string> = {};
    for (const [name, value] of entries) {
      const lower = name.toLowerCase();
      if (NOT_PASSED_ON.has(lower) || replyRules.forbidsHeader(lower)) continue;
      if (!replyRules.isHeaderName(name) || !replyRules.isHeaderValue(value)) return undefined;
      headers[lower] = value;
    }
    return { status: message.status, headers, body, isBase64Encoded };
  }
}
