import { DeleteCommand, GetCommand, PutCommand, QueryCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { ExecutionRef, ExecutionStore } from '../../domain/flows/ports.js';
import type { DeliveryListeners, ListenerAnswer, ListenerAnswers, ReplayBudget } from '../../domain/listen/ports.js';
import { deliveryMessage, typeMatches } from '../../domain/listen/protocol.js';
import { logFault } from '../../shared/logger.js';
import { ifConditionHolds } from './conditional.js';
import type { PostToConnection } from './connection-poster.js';

// Loaded with this module by the receiver's first push (`handlers/webhook.ts`), so its post goes with it.
export { managementPosterFor } from './connection-poster.js';

/*
 * The listen endpoint deployed: API Gateway's WebSocket API keeps the sockets, this table says who
 * listens to what, and messages go out through its management API (`@connections`).
 *
 *   LISTEN#<trigger id> / <connection id>   one item per trigger a connection listens to (the push reads these)
 *   CONN#<connection id> / CONN             the connection: account, triggers, events (its $disconnect reads it)
 *   ANSWER#<trigger id>#<execution id> / ANSWER   a listener's answer for a waiting sender (answer_from_listener)
 *   HELLO#<connection id> / HELLO           the connection's one `hello` was answered (a second is refused)
 *   REPLAY#<account id> / H#<epoch hour>    the delivery records the account's replays read that hour (`ReplayBudget`)
 *
 * Connection items expire (`expires_at`, TTL) a little after API Gateway's 2-hour connection limit,
 * so a connection whose $disconnect never ran leaves nothing for long; an answer item a few minutes
 * after the longest wait. TTL deletes within days, not at once (and dynalite, the local engine, not
 * at all: https://github.com/architect/dynalite/issues/103), so every read here also checks `expires_at`.
 */

/** API Gateway closes a WebSocket connection after 2 hours; its items outlive that by a few minutes. */
export const CONNECTION_TTL_SECONDS = 2 * 3600 + 300;
/** An answer matters while its sender waits (API Gateway's 30 seconds at most); kept a little longer. */
export const ANSWER_TTL_SECONDS = 300;
/** The receiver reads a wait's answer item this often, starting at the first and growing by it to the second. */
export const ANSWER_POLL_FIRST_MS = 50;
export const ANSWER_POLL_MAX_MS = 250;
/** And checks this often that some listener of the trigger is still connected (none: the flow answers). */
export const LISTENERS_RECHECK_MS = 1000;

export interface ConnectionRecord {
  connectionId: string;
  accountId: string;
  triggers: { id: string; sender?: string }[];
  events?: string[];
}

/** A listener's answer as kept for the receiver, or how many listeners could not reach their local server. */
export interface KeptAnswer {
  answer?: ListenerAnswer;
  unreached: number;
}

export class DynamoListenConnections implements ListenerAnswers, ReplayBudget {
  constructor(private readonly client: DynamoDBDocumentClient, private readonly table: string, private readonly nowSeconds: () => number) {}

  async add(connection: ConnectionRecord): Promise<void> {
    const expires_at = this.nowSeconds() + CONNECTION_TTL_SECONDS;
    await this.client.send(new PutCommand({ TableName: this.table, Item: { pk: `CONN#${connection.connectionId}`, sk: 'CONN', account_id: connection.accountId, triggers: connection.triggers, ...(connection.events && { events: connection.events }), expires_at } }));
    await Promise.all(connection.triggers.map((trigger) => this.client.send(new PutCommand({
      TableName: this.table,
      Item: { pk: `LISTEN#${trigger.id}`, sk: connection.connectionId, ...(trigger.sender && { sender: trigger.sender }), ...(connection.events && { events: connection.events }), expires_at },
    }))));
  }

  async get(connectionId: string): Promise<ConnectionRecord | undefined> {
    const { Item } = await this.client.send(new GetCommand({ TableName: this.table, Key: { pk: `CONN#${connectionId}`, sk: 'CONN' } }));
    if (!Item || (Item.expires_at as number) <= this.nowSeconds()) return undefined;
    return { connectionId, accountId: Item.account_id as string, triggers: Item.triggers as ConnectionRecord['triggers'], ...(Item.events && { events: Item.events as string[] }) };
  }

  async remove(connectionId: string): Promise<void> {
    const connection = await this.get(connectionId);
    await Promise.all([
      ...(connection?.triggers ?? []).map((trigger) => this.client.send(new DeleteCommand({ TableName: this.table, Key: { pk: `LISTEN#${trigger.id}`, sk: connectionId } }))),
      this.client.send(new DeleteCommand({ TableName: this.table, Key: { pk: `CONN#${connectionId}`, sk: 'CONN' } })),
      this.client.send(new DeleteCommand({ TableName: this.table, Key: { pk: `HELLO#${connectionId}`, sk: 'HELLO' } })),
    ]);
  }

  /**
   * Records the connection's `hello`; false when it had one already. An item of its own (one write
   * unit), not a mark on the connection's item, which is billed whole and holds up to 1,000 triggers.
   */
  async firstHello(connectionId: string): Promise<boolean> {
    return ifConditionHolds(() => this.client.send(new PutCommand({
      TableName: this.table,
      Item: { pk: `HELLO#${connectionId}`, sk: 'HELLO', expires_at: this.nowSeconds() + CONNECTION_TTL_SECONDS },
      ConditionExpression: 'attribute_not_exists(pk)',
    })));
  }

  /**
   * Takes up to `wanted` of the account's replay reads of `hour` (`ReplayBudget`): one atomic ADD
   * answers the count with this take in it, so concurrent takes never grant more than `max` between
   * them; the part not granted is taken back at once (a second write, only when the budget ran out).
   */
  async take(accountId: string, hour: number, wanted: number, max: number): Promise<number> {
    if (wanted <= 0) return 0;
    const used = await this.addReplayReads(accountId, hour, wanted);
    const granted = Math.max(0, Math.min(wanted, max - (used - wanted)));
    if (granted < wanted) await this.addReplayReads(accountId, hour, granted - wanted);
    return granted;
  }

  async giveBack(accountId: string, hour: number, count: number): Promise<void> {
    if (count > 0) await this.addReplayReads(accountId, hour, -count);
  }

  private async addReplayReads(accountId: string, hour: number, count: number): Promise<number> {
    const { Attributes } = await this.client.send(new UpdateCommand({
      TableName: this.table,
      Key: { pk: `REPLAY#${accountId}`, sk: `H#${hour}` },
      // Kept an hour past its own, then TTL's (dynalite keeps it: the key names its hour, so it is never read again).
      UpdateExpression: 'ADD used :count SET expires_at = :expires',
      ExpressionAttributeValues: { ':count': count, ':expires': (hour + 2) * 3600 },
      ReturnValues: 'UPDATED_NEW',
    }));
    return Attributes?.used as number;
  }

  /** Who listens to `triggerId` now: one Query (one read unit for up to 4 KB of connections). */
  async listeners(triggerId: string): Promise<{ connectionId: string; sender?: string; events?: string[] }[]> {
    const { Items = [] } = await this.client.send(new QueryCommand({ TableName: this.table, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': `LISTEN#${triggerId}` } }));
    return Items.filter((item) => (item.expires_at as number) > this.nowSeconds()).map((item) => ({ connectionId: item.sk as string, ...(item.sender && { sender: item.sender as string }), ...(item.events && { events: item.events as string[] }) }));
  }

  async removeListener(triggerId: string, connectionId: string): Promise<void> {
    await this.client.send(new DeleteCommand({ TableName: this.table, Key: { pk: `LISTEN#${triggerId}`, sk: connectionId } }));
  }

  /**
   * Keeps the first answer to a delivery (`ListenerAnswers`), in an item of its own: one write unit
   * per KB (an answer is at most a 128 KB WebSocket message, under DynamoDB's 400 KB item). A
   * listener that could not reach its server adds one to `unreached` instead.
   */
  async keep(ref: ExecutionRef, answer: ListenerAnswer | undefined): Promise<boolean> {
    const expires_at = this.nowSeconds() + ANSWER_TTL_SECONDS;
    const written = await ifConditionHolds(() => this.client.send(new UpdateCommand({
      TableName: this.table,
      Key: answerKey(ref),
      ...(answer
        ? {
          UpdateExpression: 'SET answer_status = :status, answer_headers = :headers, answer_body = :body, answer_base64 = :base64, expires_at = :expires',
          ExpressionAttributeValues: { ':status': answer.status, ':headers': answer.headers, ':body': answer.body, ':base64': answer.isBase64Encoded, ':expires': expires_at },
        }
        : {
          UpdateExpression: 'ADD unreached :one SET expires_at = :expires',
          ExpressionAttributeValues: { ':one': 1, ':expires': expires_at },
        }),
      // The first answer stays: a second listener's (or a late failure) changes nothing the receiver
      // reads; once the receiver stopped waiting (`closed`), an answer is too late for the sender.
      ConditionExpression: 'attribute_not_exists(answer_status) AND attribute_not_exists(closed)',
    })));
    return written && answer !== undefined;
  }

  /**
   * The receiver stops waiting for `ref`'s answer: a later one is recorded on the delivery, not kept
   * for the sender. Undefined when it closed; the answer when one was kept meanwhile (take it).
   */
  async close(ref: ExecutionRef): Promise<ListenerAnswer | undefined> {
    const closed = await ifConditionHolds(() => this.client.send(new UpdateCommand({
      TableName: this.table,
      Key: answerKey(ref),
      UpdateExpression: 'SET closed = :true, expires_at = :expires',
      ConditionExpression: 'attribute_not_exists(answer_status)',
      ExpressionAttributeValues: { ':true': true, ':expires': this.nowSeconds() + ANSWER_TTL_SECONDS },
    })));
    return closed ? undefined : (await this.kept(ref))?.answer;
  }

  /** The answer kept for `ref`, read consistently (one read unit per 4 KB; one while there is none). */
  async kept(ref: ExecutionRef): Promise<KeptAnswer | undefined> {
    const { Item } = await this.client.send(new GetCommand({ TableName: this.table, Key: answerKey(ref), ConsistentRead: true }));
    if (!Item || (Item.expires_at as number) <= this.nowSeconds()) return undefined;
    const unreached = (Item.unreached as number | undefined) ?? 0;
    if (Item.answer_status === undefined) return { unreached };
    return { unreached, answer: { status: Item.answer_status as number, headers: Item.answer_headers as Record<string, string>, body: Item.answer_body as string, isBase64Encoded: Item.answer_base64 === true } };
  }
}

const answerKey = (ref: ExecutionRef) => ({ pk: `ANSWER#${ref.triggerId}#${ref.executionId}`, sk: 'ANSWER' });

export interface WebSocketListenersOptions {
  /** The API's base URL: a body too large for a message is fetched from its inspector route. */
  apiBaseUrl: string;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

/** How many deliveries' reach the receiver remembers between its push and its wait (one Lambda environment serves one at a time). */
const REACH_KEPT = 256;

/**
 * The receiver's listeners: after a delivery's record is written, one Query finds the trigger's
 * connections; when there are any, the record is read as the inspector reads it and posted to each.
 * A connection API Gateway no longer has (410) is forgotten. A wait-mode trigger that answers from
 * a listener then waits for the answer item its listeners' answers are kept in (`keep`): polled with
 * consistent reads, 50 ms apart growing to 250 ms, until an answer is there, every listener the
 * delivery reached could not reach its server, none is connected any more (checked each second), or
 * the wait is over; then it is closed (one conditional write), so that a later answer is recorded on
 * the delivery without claiming to have answered its sender.
 */
export class WebSocketListeners implements DeliveryListeners {
  /** Deliveries pushed, by execution id: how many listeners each reached (the wait needs one at least). */
  private readonly reached = new Map<string, number>();
  private readonly now: () => number;
  private readonly sleep: (ms: number) => Promise<void>;

  constructor(
    private readonly connections: DynamoListenConnections,
    private readonly executions: Pick<ExecutionStore, 'get'>,
    private readonly post: PostToConnection,
    private readonly options: WebSocketListenersOptions,
  ) {
    this.now = options.now ?? Date.now;
    this.sleep = options.sleep ?? ((ms) => new Promise((done) => setTimeout(done, ms)));
  }

  async recorded(ref: ExecutionRef): Promise<void> {
    try {
      const listeners = await this.connections.listeners(ref.triggerId);
      if (listeners.length === 0) return;
      const detail = await this.executions.get(ref);
      if (!detail) return;
      const posted = await Promise.all(listeners.filter((l) => typeMatches(l.events, detail.type)).map(async (listener) => {
        const text = deliveryMessage(detail, { id: ref.triggerId, ...(listener.sender && { sender: listener.sender }) }, this.options.apiBaseUrl);
        if (await this.post(listener.connectionId, text)) return true;
        await this.connections.removeListener(ref.triggerId, listener.connectionId);
        return false;
      }));
      this.remember(ref.executionId, posted.filter(Boolean).length);
    } catch (error) {
      await logFault('delivery not pushed to listeners', error);
    }
  }

  async answer(ref: ExecutionRef, withinMs: number): Promise<ListenerAnswer | undefined> {
    const reached = this.reached.get(ref.executionId) ?? 0;
    this.reached.delete(ref.executionId);
    if (reached === 0 || withinMs <= 0) return undefined;
    const until = this.now() + withinMs;
    let interval = ANSWER_POLL_FIRST_MS;
    let recheckAt = this.now() + LISTENERS_RECHECK_MS;
    try {
      for (;;) {
        const kept = await this.connections.kept(ref);
        if (kept?.answer) return kept.answer;
        if (kept && kept.unreached >= reached) break;
        const left = until - this.now();
        if (left <= 0) break;
        if (this.now() >= recheckAt) {
          if ((await this.connections.listeners(ref.triggerId)).length === 0) break;
          recheckAt = this.now() + LISTENERS_RECHECK_MS;
        }
        await this.sleep(Math.min(interval, left));
        interval = Math.min(interval + ANSWER_POLL_FIRST_MS, ANSWER_POLL_MAX_MS);
      }
      // No answer (yet): the flow's stands, and an answer arriving after this is not the sender's.
      return await this.connections.close(ref);
    } catch (error) {
      await logFault('listener answer not read', error);
      return undefined;
    }
  }

  private remember(executionId: string, count: number): void {
    if (count === 0) return;
    if (this.reached.size >= REACH_KEPT) this.reached.delete(this.reached.keys().next().value!);
    this.reached.set(executionId, count);
  }
}
