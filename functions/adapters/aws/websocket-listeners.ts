import { DeleteCommand, GetCommand, PutCommand, QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { ExecutionRef, ExecutionStore } from '../../domain/flows/ports.js';
import type { DeliveryListeners, ListenerAnswer } from '../../domain/listen/ports.js';
import { deliveryMessage, typeMatches } from '../../domain/listen/protocol.js';
import { logFault } from '../../shared/logger.js';

/*
 * The listen endpoint deployed: API Gateway's WebSocket API keeps the sockets, this table says who
 * listens to what, and messages go out through its management API (`@connections`).
 *
 *   LISTEN#<trigger id> / <connection id>   one item per trigger a connection listens to (the push reads these)
 *   CONN#<connection id> / CONN             the connection: account, triggers, events (its $disconnect reads it)
 *
 * Every item expires (`expires_at`, TTL) a little after API Gateway's 2-hour connection limit, so a
 * connection whose $disconnect never ran leaves nothing for long.
 */

/** API Gateway closes a WebSocket connection after 2 hours; its items outlive that by a few minutes. */
export const CONNECTION_TTL_SECONDS = 2 * 3600 + 300;

export interface ConnectionRecord {
  connectionId: string;
  accountId: string;
  triggers: { id: string; sender?: string }[];
  events?: string[];
}

export { managementPoster, type PostToConnection } from './connection-poster.js';
import type { PostToConnection } from './connection-poster.js';

export class DynamoListenConnections {
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
    if (!Item) return undefined;
    return { connectionId, accountId: Item.account_id as string, triggers: Item.triggers as ConnectionRecord['triggers'], ...(Item.events && { events: Item.events as string[] }) };
  }

  async remove(connectionId: string): Promise<void> {
    const connection = await this.get(connectionId);
    await Promise.all([
      ...(connection?.triggers ?? []).map((trigger) => this.client.send(new DeleteCommand({ TableName: this.table, Key: { pk: `LISTEN#${trigger.id}`, sk: connectionId } }))),
      this.client.send(new DeleteCommand({ TableName: this.table, Key: { pk: `CONN#${connectionId}`, sk: 'CONN' } })),
    ]);
  }

  /** Who listens to `triggerId` now: one Query (one read unit for up to 4 KB of connections). */
  async listeners(triggerId: string): Promise<{ connectionId: string; sender?: string; events?: string[] }[]> {
    const { Items = [] } = await this.client.send(new QueryCommand({ TableName: this.table, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': `LISTEN#${triggerId}` } }));
    return Items.filter((item) => (item.expires_at as number) > this.nowSeconds()).map((item) => ({ connectionId: item.sk as string, ...(item.sender && { sender: item.sender as string }), ...(item.events && { events: item.events as string[] }) }));
  }

  async removeListener(triggerId: string, connectionId: string): Promise<void> {
    await this.client.send(new DeleteCommand({ TableName: this.table, Key: { pk: `LISTEN#${triggerId}`, sk: connectionId } }));
  }
}

/**
 * The receiver's listeners deployed: after a delivery's record is written, one Query finds the
 * trigger's connections; when there are any, the record is read as the inspector reads it and
 * posted to each. A connection API Gateway no longer has (410) is forgotten.
 * A wait-mode trigger's `answer_from_listener` is not served deployed yet: the flow answers.
 */
export class WebSocketListeners implements DeliveryListeners {
  constructor(
    private readonly connections: DynamoListenConnections,
    private readonly executions: Pick<ExecutionStore, 'get'>,
    private readonly post: PostToConnection,
    private readonly apiBaseUrl: string,
  ) {}

  async recorded(ref: ExecutionRef): Promise<void> {
    try {
      const listeners = await this.connections.listeners(ref.triggerId);
      if (listeners.length === 0) return;
      const detail = await this.executions.get(ref);
      if (!detail) return;
      await Promise.all(listeners.filter((l) => typeMatches(l.events, detail.type)).map(async (listener) => {
        const text = deliveryMessage(detail, { id: ref.triggerId, ...(listener.sender && { sender: listener.sender }) }, this.apiBaseUrl);
        if (!(await this.post(listener.connectionId, text))) await this.connections.removeListener(ref.triggerId, listener.connectionId);
      }));
    } catch (error) {
      await logFault('delivery not pushed to listeners', error);
    }
  }

  async answer(): Promise<ListenerAnswer | undefined> {
    return undefined;
  }
}
