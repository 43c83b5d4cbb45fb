import { logFault } from '../../shared/logger.js';
import type { Clock } from '../clock.js';
import type { ExecutionRef, ExecutionStore } from '../flows/ports.js';
import type { TriggerRecord } from '../triggers/trigger.js';
import type { TriggerStore } from '../triggers/trigger-store.js';
import { MAX_ANSWER_BODY_BYTES, MAX_REPLAYED_PER_TRIGGER, deliveryMessage, typeMatches, type AnswerMessage, type ListenedTrigger, type ListenQuery, type ReadyMessage } from './protocol.js';
import type { DeliveryListeners, ForwardedAttempts, ListenerAnswer } from './ports.js';

/** One connected listener: whose it is, what it listens to, and how to send it a message. */
export interface ListenerConnection {
  id: string;
  accountId: string;
  triggers: ReadonlyMap<string, ListenedTrigger>;
  events?: readonly string[];
  send(text: string): void;
}

export interface ListenerHubDeps {
  executions: Pick<ExecutionStore, 'get' | 'list'>;
  triggers: Pick<TriggerStore, 'get' | 'list'>;
  forwarded: ForwardedAttempts;
  now: Clock;
  /** The API's base URL: a body too large for a message is fetched from its inspector route. */
  apiBaseUrl: string;
}

/** How long an answer that came before anyone asked for it is kept (the push can beat the receiver's wait). */
const EARLY_ANSWER_MS = 30_000;
const MAX_TRIGGERS_LISTED = 1000;
/** The longest tolerance a sender's signed timestamp may have (a custom signature's `MAX_TOLERANCE_SECONDS`). */
const SIGNED_TIME_SLACK_MS = 3600 * 1000;

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

interface Waiter {
  triggerId: string;
  done(answer: ListenerAnswer | undefined): void;
}

/**
 * The listeners connected to this gateway: pushes each delivery, from the record the inspector
 * reads, to the connections of its trigger's account that chose it; replays `since`; records their
 * local answers on the deliveries; and hands a waiting receiver the first answer
 * (`answer_from_listener`). One per local stack; deployed, the connections table and the management
 * API play its part (`docs/cli.md`, "How it works").
 */
export class ListenerHub implements DeliveryListeners {
  private readonly connections = new Map<string, ListenerConnection>();
  private readonly waiters = new Map<string, Waiter>();
  private readonly early = new Map<string, { answer: ListenerAnswer; at: number }>();

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

  /** Adds a connection, says `ready`, then sends what `since` asks for; live deliveries flow from the moment it is added. */
  async add(connection: ListenerConnection, since?: string): Promise<void> {
    this.connections.set(connection.id, connection);
    const ready: ReadyMessage = { type: 'ready', connection_id: connection.id, triggers: [...connection.triggers.values()] };
    connection.send(JSON.stringify(ready));
    if (since === undefined) return;
    const found: { ref: ExecutionRef; receivedAt: string }[] = [];
    let truncated = false;
    // A record keyed on its signed timestamp sorts by that time, up to the sender's tolerance before
    // it arrived (`claim-record.ts`): list from that much earlier, keep what arrived since.
    const listedFrom = new Date(Date.parse(since) - SIGNED_TIME_SLACK_MS).toISOString();
    for (const triggerId of connection.triggers.keys()) {
      let cursor: string | undefined;
      let count = 0;
      do {
        const page = await this.deps.executions.list(triggerId, { since: listedFrom }, { limit: 100, ...(cursor && { cursor }) });
        for (const item of page.items) {
          if (item.received_at >= since && typeMatches(connection.events, item.type)) found.push({ ref: { triggerId, executionId: item.execution_id }, receivedAt: item.received_at });
        }
        count += page.items.length;
        cursor = page.nextCursor ?? undefined;
      } while (cursor && count < MAX_REPLAYED_PER_TRIGGER);
      if (cursor) truncated = true;
    }
    found.sort((a, b) => a.receivedAt.localeCompare(b.receivedAt) || a.ref.executionId.localeCompare(b.ref.executionId));
    for (const { ref } of found) {
      if (!this.connections.has(connection.id)) return;
      const detail = await this.deps.executions.get(ref);
      const trigger = connection.triggers.get(ref.triggerId)!;
      if (detail) connection.send(deliveryMessage(detail, { id: trigger.id, ...(trigger.sender !== undefined && { sender: trigger.sender }) }, this.deps.apiBaseUrl, { replayed: true }));
    }
    connection.send(JSON.stringify({ type: 'replayed', count: found.length, truncated }));
  }

  remove(connectionId: string): void {
    const connection = this.connections.get(connectionId);
    this.connections.delete(connectionId);
    if (!connection) return;
    for (const [executionId, waiter] of this.waiters) {
      if (!this.listening(waiter.triggerId)) {
        this.waiters.delete(executionId);
        waiter.done(undefined);
      }
    }
  }

  /** Connections listening to `triggerId` now. */
  listening(triggerId: string): number {
    let count = 0;
    for (const connection of this.connections.values()) if (connection.triggers.has(triggerId)) count++;
    return count;
  }

  async recorded(ref: ExecutionRef): Promise<void> {
    if (this.listening(ref.triggerId) === 0) return;
    void this.push(ref).catch((error: unknown) => logFault('delivery not pushed to listeners', error));
  }

  private async push(ref: ExecutionRef): Promise<void> {
    const detail = await this.deps.executions.get(ref);
    if (!detail) return;
    for (const connection of this.connections.values()) {
      const trigger = connection.triggers.get(ref.triggerId);
      if (!trigger || !typeMatches(connection.events, detail.type)) continue;
      connection.send(deliveryMessage(detail, { id: trigger.id, ...(trigger.sender !== undefined && { sender: trigger.sender }) }, this.deps.apiBaseUrl));
    }
  }

  answer(ref: ExecutionRef, withinMs: number): Promise<ListenerAnswer | undefined> {
    const early = this.early.get(ref.executionId);
    if (early) {
      this.early.delete(ref.executionId);
      return Promise.resolve(early.answer);
    }
    if (this.listening(ref.triggerId) === 0 || withinMs <= 0) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiters.delete(ref.executionId);
        resolve(undefined);
      }, withinMs);
      this.waiters.set(ref.executionId, {
        triggerId: ref.triggerId,
        done: (answer) => {
          clearTimeout(timer);
          resolve(answer);
        },
      });
    });
  }

  /**
   * A listener's answer: recorded on the delivery as a forwarded attempt when the delivery is one of
   * its triggers', and handed to a receiver waiting for it. Anything else is ignored.
   */
  async answered(connection: ListenerConnection, message: AnswerMessage): Promise<void> {
    if (!connection.triggers.has(message.trigger_id)) return;
    const ref = { triggerId: message.trigger_id, executionId: message.execution_id };
    const answer = this.senderAnswer(message);
    const waiter = this.waiters.get(ref.executionId);
    const forSender = waiter !== undefined && answer !== undefined;
    const added = await this.deps.forwarded.add(ref, {
      at: new Date(this.deps.now()).toISOString(),
      listener: connection.id,
      ...(message.status !== undefined && { status: message.status }),
      ...(message.ms !== undefined && { ms: Math.round(message.ms) }),
      ...(message.error !== undefined && { error: message.error.slice(0, 200) }),
      ...(forSender && { answered_sender: true as const }),
    });
    if (!added) return;
    if (waiter) {
      if (answer) {
        this.waiters.delete(ref.executionId);
        waiter.done(answer);
      } else if (this.listening(ref.triggerId) <= 1) {
        this.waiters.delete(ref.executionId);
        waiter.done(undefined);
      }
    } else if (answer && connection.triggers.get(ref.triggerId)!.answer_from_listener) {
      const now = this.deps.now();
      for (const [id, kept] of this.early) if (now - kept.at > EARLY_ANSWER_MS) this.early.delete(id);
      this.early.set(ref.executionId, { answer, at: now });
    }
  }

  private senderAnswer(message: AnswerMessage): ListenerAnswer | undefined {
    if (message.status === undefined) return undefined;
    const body = message.body ?? '';
    const isBase64Encoded = message.body_encoding === 'base64';
    const bytes = isBase64Encoded ? Buffer.from(body, 'base64').length : Buffer.byteLength(body, 'utf8');
    if (bytes > MAX_ANSWER_BODY_BYTES) return undefined;
    const headers = Object.fromEntries(Object.entries(message.headers ?? {}).filter(([name]) => !NOT_PASSED_ON.has(name.toLowerCase())).map(([name, value]) => [name.toLowerCase(), value]));
    return { status: message.status, headers, body, isBase64Encoded };
  }

  /** Ends every wait (the stack stops). */
  close(): void {
    for (const waiter of this.waiters.values()) waiter.done(undefined);
    this.waiters.clear();
    this.connections.clear();
  }
}
