import type { AwsClients } from '../adapters/aws/clients.js';
import { dynamoClient } from '../adapters/aws/clients/dynamo.js';
import { DynamoExecutionStore } from '../adapters/aws/dynamo-execution-store.js';
import { DynamoTriggerStore } from '../adapters/aws/dynamo-trigger-store.js';
import { managementPosterFor, type PostToConnection } from '../adapters/aws/connection-poster.js';
import { DynamoListenConnections } from '../adapters/aws/websocket-listeners.js';
import type { Authenticator } from '../domain/authenticator.js';
import { ListenError, ListenerHub } from '../domain/listen/hub.js';
import { ListenQueryError, parseAnswer, parseListenQuery, parseSince } from '../domain/listen/protocol.js';
import type { Settings } from '../settings.js';
import { AppError } from '../shared/errors.js';
import { createGatewayAuthenticator } from './gateway-auth.js';

/*
 * The listen endpoint (API Gateway WebSocket API, `lib/constructs/listen-api.ts`; locally its
 * emulator, `local/listen-server.ts`): `$connect` runs after the authorizer below let the
 * credentials in; it records which triggers the connection listens to (from the connect URL's
 * query). The listener's first message, `{"action": "hello"}`, is answered `ready` and the
 * deliveries `since` asks for (API Gateway cannot post to a connection before its `$connect` has
 * returned), once a connection; its `answer` messages are recorded on their deliveries as forwarded attempts, and kept
 * for a waiting sender when the trigger answers from a listener.
 */

interface AuthorizerEvent {
  headers?: Record<string, string | undefined>;
  methodArn: string;
}

/**
 * The `$connect` authorizer: the gateway's own credential check (a user token, or an API key with
 * the triggers scope). No valid credential: thrown `Unauthorized` (API Gateway's 401); a valid one
 * that may not listen (an API key without the triggers scope): a Deny policy (API Gateway's 403).
 */
export function createListenAuthorizer(authenticator: Authenticator) {
  return async (event: AuthorizerEvent) => {
    const headers = Object.fromEntries(Object.entries(event.headers ?? {}).map(([name, value]) => [name.toLowerCase(), value]));
    const policy = (principalId: string, effect: 'Allow' | 'Deny') => ({
      principalId,
      policyDocument: { Version: '2012-10-17', Statement: [{ Action: 'execute-api:Invoke', Effect: effect, Resource: event.methodArn }] },
    });
    try {
      const principal = await authenticator.authenticate({ headers }, 'gateway', 'triggers');
      return { ...policy(principal.subject, 'Allow'), context: { accountId: principal.accountId } };
    } catch (error) {
      if (error instanceof AppError && error.status === 403) return policy('denied', 'Deny');
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
  connections: Pick<DynamoListenConnections, 'add' | 'get' | 'remove' | 'firstHello'>;
  hub: Pick<ListenerHub, 'resolve' | 'add' | 'answered'>;
  post: PostToConnection;
  now: () => number;
}

/** A `$connect` refusal, in the service's `{"error", "message"}` shape (the CLI prints it). */
const refusal = (statusCode: number, error: string, message: string) => ({ statusCode, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ error, message }) });

export function createListenHandler(deps: ListenHandlerDeps) {
  return async (event: WebSocketEvent): Promise<{ statusCode: number; headers?: Record<string, string>; body?: string }> => {
    const { routeKey, connectionId } = event.requestContext;
    if (routeKey === '$connect') {
      const accountId = event.requestContext.authorizer?.accountId;
      if (!accountId) return refusal(401, 'unauthorized', 'credentials required');
      try {
        const query = parseListenQuery(event.queryStringParameters ?? {}, deps.now());
        const triggers = await deps.hub.resolve(accountId, query);
        await deps.connections.add({ connectionId, accountId, triggers: [...triggers.values()].map((t) => ({ id: t.id, ...(t.sender && { sender: t.sender }) })), ...(query.events && { events: query.events }) });
        return { statusCode: 200 };
      } catch (error) {
        if (error instanceof ListenQueryError) return refusal(400, 'validation_error', error.message);
        if (error instanceof ListenError) return refusal(error.code === 'not_found' ? 404 : 400, error.code, error.message);
        throw error;
      }
    }
    if (routeKey === '$disconnect') {
      await deps.connections.remove(connectionId);
      return { statusCode: 200 };
    }
    const connection = await deps.connections.get(connectionId);
    if (!connection) return { statusCode: 410 };
    const send = (text: string) => deps.post(connectionId, text);
    let message: { action?: string; since?: unknown } = {};
    try {
      message = JSON.parse(event.body ?? '{}');
    } catch {
      // Answered below as not understood.
    }
    if (message.action === 'hello') {
      // Checked as the connect URL's is: a time that is none would fail the replay (a 5xx), one older
      // than the records kept would list for nothing.
      let since: string | undefined;
      try {
        since = parseSince(message.since, deps.now());
      } catch (error) {
        if (!(error instanceof ListenQueryError)) throw error;
        await send(JSON.stringify({ type: 'error', error: 'validation_error', message: error.message }));
        return { statusCode: 200 };
      }
      // One hello a connection: each would read its triggers and replay again, at the account's cost,
      // as often as it was sent. A hello refused above (a bad since) is not the one.
      if (!(await deps.connections.firstHello(connectionId))) {
        await send(JSON.stringify({ type: 'error', error: 'validation_error', message: 'this connection said hello already, and a connection is answered (and replays) once: connect again, with since, to replay again' }));
        return { statusCode: 200 };
      }
      const triggers = await deps.hub.resolve(connection.accountId, { triggers: connection.triggers.map((t) => t.id) }).catch((error: unknown) => {
        // A trigger deleted since $connect: say so, and let the listener connect again.
        if (error instanceof ListenError) return undefined;
        throw error;
      });
      if (!triggers) {
        await send(JSON.stringify({ type: 'error', error: 'not_found', message: 'a trigger this connection listens to was deleted: connect again' }));
        return { statusCode: 200 };
      }
      await deps.hub.add({ id: connectionId, accountId: connection.accountId, triggers, ...(connection.events && { events: connection.events }), send }, since);
      return { statusCode: 200 };
    }
    const answer = parseAnswer(event.body ?? '');
    if (answer) {
      // Only a trigger this connection was let in for, read now (its answer_from_listener may have changed).
      if (!connection.triggers.some((t) => t.id === answer.trigger_id)) return { statusCode: 200 };
      const triggers = await deps.hub.resolve(connection.accountId, { triggers: [answer.trigger_id] }).catch((error: unknown) => {
        if (error instanceof ListenError) return undefined;
        throw error;
      });
      if (triggers) await deps.hub.answered({ id: connectionId, accountId: connection.accountId, triggers, send }, answer);
      return { statusCode: 200 };
    }
    await send(JSON.stringify({ type: 'error', error: 'validation_error', message: 'expected {"action": "hello"} or {"action": "answer", "trigger_id", "execution_id", …}' }));
    return { statusCode: 200 };
  };
}

/** The listen function over its settings (the triggers function's, and the connections table) and clients. */
export function composeListen(settings: Settings, aws: AwsClients) {
  const executions = new DynamoExecutionStore(dynamoClient(aws), settings.executionsTable, Date.now);
  const post = managementPosterFor(settings.listenCallbackUrl!, aws);
  const connections = new DynamoListenConnections(dynamoClient(aws), settings.listenConnectionsTable!, () => Math.floor(Date.now() / 1000));
  const hub = new ListenerHub({
    executions,
    triggers: new DynamoTriggerStore(dynamoClient(aws), settings.triggersTable, Date.now),
    forwarded: { add: (ref, attempt) => executions.addForwarded(ref, attempt) },
    answers: connections,
    replayBudget: connections,
    now: Date.now,
    apiBaseUrl: (settings.publicWebhookBaseUrl ?? settings.webhookBaseUrl).replace(/\/webhooks\/?$/, ''),
  });
  return createListenHandler({ connections, hub, post, now: Date.now });
}

export const composeListenAuthorizer = (settings: Settings, aws: AwsClients) => createListenAuthorizer(createGatewayAuthenticator(settings, aws));
