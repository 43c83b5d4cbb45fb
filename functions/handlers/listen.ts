import type { AwsClients } from '../adapters/aws/clients.js';
import { dynamoClient } from '../adapters/aws/clients/dynamo.js';
import { DynamoExecutionStore } from '../adapters/aws/dynamo-execution-store.js';
import { DynamoTriggerStore } from '../adapters/aws/dynamo-trigger-store.js';
import { DynamoListenConnections, managementPoster, type PostToConnection } from '../adapters/aws/websocket-listeners.js';
import type { Authenticator } from '../domain/authenticator.js';
import { ListenError, ListenerHub } from '../domain/listen/hub.js';
import { ListenQueryError, parseAnswer, parseListenQuery } from '../domain/listen/protocol.js';
import type { Settings } from '../settings.js';
import { AppError } from '../shared/errors.js';
import { createGatewayAuthenticator } from './gateway-auth.js';

/*
 * The listen endpoint deployed (API Gateway WebSocket API, `lib/constructs/listen-api.ts`):
 * `$connect` runs after the authorizer below let the credentials in; it records which triggers the
 * connection listens to (from the connect URL's query, as locally). The listener's first message,
 * `{"action": "hello"}`, is answered `ready` and the deliveries `since` asks for (API Gateway
 * cannot post to a connection before its `$connect` has returned); its `answer` messages are
 * recorded on their deliveries as forwarded attempts.
 */

interface AuthorizerEvent {
  headers?: Record<string, string | undefined>;
  methodArn: string;
}

/** The `$connect` authorizer: the gateway's own credential check (a user token, or an API key with the triggers scope). */
export function createListenAuthorizer(authenticator: Authenticator) {
  return async (event: AuthorizerEvent) => {
    const headers = Object.fromEntries(Object.entries(event.headers ?? {}).map(([name, value]) => [name.toLowerCase(), value]));
    try {
      const principal = await authenticator.authenticate({ headers }, 'gateway', 'triggers');
      return {
        principalId: principal.subject,
        policyDocument: { Version: '2012-10-17', Statement: [{ Action: 'execute-api:Invoke', Effect: 'Allow', Resource: event.methodArn }] },
        context: { accountId: principal.accountId },
      };
    } catch (error) {
      if (error instanceof AppError) throw new Error('Unauthorized'); // API Gateway's word for a 401
      throw error;
    }
  };
}

interface WebSocketEvent {
  requestContext: { routeKey: string; connectionId: string; authorizer?: { accountId?: string } };
  queryStringParameters?: Record<string, string | undefined>;
  body?: string;
}

export interface ListenHandlerDeps {
  connections: DynamoListenConnections;
  hub: Pick<ListenerHub, 'resolve' | 'add' | 'answered'>;
  post: PostToConnection;
  now: () => number;
}

export function createListenHandler(deps: ListenHandlerDeps) {
  return async (event: WebSocketEvent): Promise<{ statusCode: number; body?: string }> => {
    const { routeKey, connectionId } = event.requestContext;
    if (routeKey === '$connect') {
      const accountId = event.requestContext.authorizer?.accountId;
      if (!accountId) return { statusCode: 401 };
      try {
        const query = parseListenQuery(event.queryStringParameters ?? {}, deps.now());
        const triggers = await deps.hub.resolve(accountId, query);
        await deps.connections.add({ connectionId, accountId, triggers: [...triggers.values()].map((t) => ({ id: t.id, ...(t.sender && { sender: t.sender }) })), ...(query.events && { events: query.events }) });
        return { statusCode: 200 };
      } catch (error) {
        if (error instanceof ListenQueryError) return { statusCode: 400, body: error.message };
        if (error instanceof ListenError) return { statusCode: error.code === 'not_found' ? 404 : 400, body: error.message };
        throw error;
      }
    }
    if (routeKey === '$disconnect') {
      await deps.connections.remove(connectionId);
      return { statusCode: 200 };
    }
    const connection = await deps.connections.get(connectionId);
    if (!connection) return { statusCode: 410 };
    let message: { action?: string; since?: string } = {};
    try {
      message = JSON.parse(event.body ?? '{}');
    } catch {
      // Answered below as not understood.
    }
    const hubConnection = {
      id: connectionId,
      accountId: connection.accountId,
      triggers: await deps.hub.resolve(connection.accountId, { triggers: connection.triggers.map((t) => t.id) }),
      ...(connection.events && { events: connection.events }),
      send: (text: string) => void deps.post(connectionId, text),
    };
    if (message.action === 'hello') {
      await deps.hub.add(hubConnection, message.since);
      return { statusCode: 200 };
    }
    const answer = parseAnswer(event.body ?? '');
    if (answer) {
      await deps.hub.answered(hubConnection, answer);
      return { statusCode: 200 };
    }
    await deps.post(connectionId, JSON.stringify({ type: 'error', error: 'validation_error', message: 'expected {"action": "hello"} or {"action": "answer", …}' }));
    return { statusCode: 200 };
  };
}

/** The listen function over its settings (the triggers function's, and the connections table) and clients. */
export function composeListen(settings: Settings, aws: AwsClients) {
  const executions = new DynamoExecutionStore(dynamoClient(aws), settings.executionsTable, Date.now);
  const post = managementPoster(settings.listenCallbackUrl!);
  const connections = new DynamoListenConnections(dynamoClient(aws), settings.listenConnectionsTable!, () => Math.floor(Date.now() / 1000));
  const hub = new ListenerHub({
    executions,
    triggers: new DynamoTriggerStore(dynamoClient(aws), settings.triggersTable, Date.now),
    forwarded: { add: (ref, attempt) => executions.addForwarded(ref, attempt) },
    now: Date.now,
    apiBaseUrl: (settings.publicWebhookBaseUrl ?? settings.webhookBaseUrl).replace(/\/webhooks\/?$/, ''),
  });
  return createListenHandler({ connections, hub, post, now: Date.now });
}

export const composeListenAuthorizer = (settings: Settings, aws: AwsClients) => createListenAuthorizer(createGatewayAuthenticator(settings, aws));
