import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { randomBytes } from 'node:crypto';
import { SignatureV4 } from '@smithy/signature-v4';
import WebSocket from 'ws';
import { dynamoClient } from '../../functions/adapters/aws/clients/dynamo.js';
import { managementPosterFor } from '../../functions/adapters/aws/connection-poster.js';
import { NodeSha256 } from '../../functions/adapters/aws/node-sha256.js';
import { describe, expect, it } from 'vitest';
import { call, useLocalStack } from '../support/local-stack.js';

/*
 * The listen endpoint's threat model, over the WebSocket protocol itself (the CLI's tests cover the
 * rest): who may connect (the account's own credentials, with the triggers scope), what a connection
 * reaches (its account's triggers only, answers only for those), and what hostile input costs (a
 * message over API Gateway's 128 KB, or a frame over its 32 KB, closes the connection; a bad query
 * is refused before the upgrade). And the deployed functions behind the local stack's emulator of
 * API Gateway's WebSocket API: a listener's answer reaching a waiting sender through the
 * connections table, the flow's answer when the listener is late, and a connection API Gateway no
 * longer has (410) forgotten. Waits here are 5 s, so that a late listener costs a test 5 s.
 */

const WAIT_MS = 5_000;
const stack = useLocalStack({ env: { WAIT_TIMEOUT_MS: String(WAIT_MS) } });

/** Opens a connection; resolves with its first message, or the HTTP refusal's status and body. */
function connect(query: string, headers: Record<string, string>, hello: Record<string, unknown> = { action: 'hello' }) {
  const socket = new WebSocket(`${stack.listenUrl}/?${query}`, { headers });
  const messages: any[] = [];
  socket.on('message', (data) => messages.push(JSON.parse(data.toString())));
  const opened = new Promise<{ refused?: { status: number; body: any } }>((done, fail) => {
    // As the CLI does: API Gateway cannot send before $connect returned, so `ready` answers this first message.
    socket.once('open', () => (socket.send(JSON.stringify(hello)), done({})));
    socket.once('unexpected-response', (_req, res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => done({ refused: { status: res.statusCode!, body: JSON.parse(text) } }));
    });
    socket.once('error', fail);
  });
  const next = async (match: (m: any) => boolean, timeoutMs = 10_000) => {
    const until = Date.now() + timeoutMs;
    while (Date.now() < until) {
      const found = messages.find(match);
      if (found) return found;
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error(`no matching message; got ${JSON.stringify(messages)}`);
  };
  return { socket, messages, opened, next };
}

/** A request to the emulated management API, signed as the functions sign theirs (over the path as sent, unless `path` says otherwise). */
async function signedFetch(url: string, method: string, body = '', credentials: { secretAccessKey?: string } = {}, path?: string) {
  const target = new URL(url);
  const signer = new SignatureV4({ credentials: { ...stack.aws.credentials!, ...credentials }, region: 'us-east-1', service: 'execute-api', sha256: NodeSha256 });
  const signed = await signer.sign({ method, protocol: 'http:', hostname: target.hostname, port: Number(target.port), path: path ?? target.pathname, headers: { host: target.host }, body, query: {} });
  return fetch(target, { method, headers: signed.headers as Record<string, string>, ...(body && { body }) });
}

/** As the CLI sends: frames of at most 32 KB. */
function sendInFrames(socket: WebSocket, text: string): void {
  const bytes = Buffer.from(text);
  for (let at = 0; at < bytes.length; at += 32 * 1024) socket.send(bytes.subarray(at, at + 32 * 1024), { binary: false, fin: at + 32 * 1024 >= bytes.length });
}

async function forwardedOf(token: string, triggerId: string, executionId: string) {
  for (let i = 0; i < 200; i++) {
    const detail = (await call(stack, 'GET', `/triggers/${triggerId}/executions/${executionId}`, { token })).json.data;
    if (detail.forwarded) return detail;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('no forwarded attempt recorded');
}

describe('the listen endpoint', () => {
  it('refuses an API key without the triggers scope (403) and a wrong one (401), in the service\'s shape', async () => {
    const token = await stack.token('listen-threat-scope');
    const key = await call(stack, 'POST', '/api-keys', { token, body: { scopes: ['storage'] } });
    expect(key.status).toBe(201);
    const storageOnly = await connect('', { 'x-api-key': key.json.data.api_key }).opened;
    expect(storageOnly.refused).toMatchObject({ status: 403, body: { error: 'forbidden' } });
    const wrong = await connect('', { 'x-api-key': 'fgk_not_a_key' }).opened;
    expect(wrong.refused).toMatchObject({ status: 401, body: { error: 'unauthorized' } });
    const triggersKey = await call(stack, 'POST', '/api-keys', { token, body: { scopes: ['triggers'] } });
    const allowed = connect('', { 'x-api-key': triggersKey.json.data.api_key });
    expect((await allowed.opened).refused).toBeUndefined();
    expect(await allowed.next((m) => m.type === 'ready')).toMatchObject({ triggers: [] });
    allowed.socket.close();
  });

  it("answers a hello whose since is no time with a validation error naming it, not a fault, and the connection stays usable", async () => {
    const token = await stack.token('listen-threat-hello-since');
    const listener = connect('', { authorization: `Bearer ${token}` }, { action: 'hello', since: 'yesterday' });
    expect((await listener.opened).refused).toBeUndefined();
    for (const since of ['yesterday', 12, { $gt: '' }]) {
      if (since !== 'yesterday') listener.socket.send(JSON.stringify({ action: 'hello', since }));
      expect(await listener.next((m) => m.type === 'error' || m.message === 'Internal server error')).toMatchObject({ type: 'error', error: 'validation_error', message: expect.stringContaining('since') });
      listener.messages.length = 0;
    }
    // A refused hello is not the connection's one.
    listener.socket.send(JSON.stringify({ action: 'hello', since: '1970-01-01T00:00:00Z' }));
    expect(await listener.next((m) => m.type === 'replayed')).toMatchObject({ count: 0 });
    listener.socket.close();
  });

  it('threat: a connection is answered (and replays) once: a second hello is a validation error, and replays nothing again', async () => {
    const token = await stack.token('listen-threat-hello-again');
    const created = await call(stack, 'POST', '/triggers', { token, body: { flow: 'echo' } });
    const trigger = created.json.data as { id: string; url: string };
    const since = new Date(Date.now() - 60_000).toISOString();
    expect((await fetch(trigger.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id: 'evt_again', type: 'x' }) })).status).toBeLessThan(300);
    const listener = connect(`triggers=${trigger.id}`, { authorization: `Bearer ${token}` }, { action: 'hello', since });
    expect(await listener.next((m) => m.type === 'replayed')).toMatchObject({ count: 1 });
    for (const hello of [{ action: 'hello', since }, { action: 'hello' }]) {
      listener.messages.length = 0;
      listener.socket.send(JSON.stringify(hello));
      expect(await listener.next((m) => m.type === 'error' || m.message === 'Internal server error')).toMatchObject({ type: 'error', error: 'validation_error', message: expect.stringContaining('hello already') });
      expect(listener.messages.filter((m) => m.type !== 'error')).toEqual([]);
    }
    listener.socket.close();
  });

  it('answers an answer whose execution id is none (not an id of the inspector\'s shape, or kilobytes long) with a validation error, not a fault', async () => {
    const token = await stack.token('listen-threat-answer-id');
    const created = await call(stack, 'POST', '/triggers', { token, body: { flow: 'echo' } });
    const trigger = created.json.data as { id: string };
    const listener = connect(`triggers=${trigger.id}`, { authorization: `Bearer ${token}` });
    await listener.next((m) => m.type === 'ready');
    for (const executionId of ['!not-an-id', `0mi5k2s00${'k'.repeat(2000)}`, '']) {
      listener.messages.length = 0;
      listener.socket.send(JSON.stringify({ action: 'answer', trigger_id: trigger.id, execution_id: executionId, status: 200, ms: 1 }));
      expect(await listener.next((m) => m.type === 'error' || m.message === 'Internal server error')).toMatchObject({ type: 'error', error: 'validation_error' });
    }
    listener.socket.close();
  });

  it('refuses a bad since before the upgrade, naming it', async () => {
    const token = await stack.token('listen-threat-since');
    const bad = await connect('since=yesterday', { authorization: `Bearer ${token}` }).opened;
    expect(bad.refused).toMatchObject({ status: 400, body: { error: 'validation_error', message: expect.stringContaining('since') } });
  });

  it("records no answer for a delivery of a trigger the connection does not listen to, and never changes the flow's record", async () => {
    const owner = await stack.token('listen-threat-owner');
    const intruder = await stack.token('listen-threat-intruder');
    const created = await call(stack, 'POST', '/triggers', { token: owner, body: { flow: 'echo' } });
    const trigger = created.json.data as { id: string; url: string };
    const listener = connect(`triggers=${trigger.id}`, { authorization: `Bearer ${owner}` });
    await listener.next((m) => m.type === 'ready');
    await fetch(trigger.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id: 'evt_threat', type: 'x' }) });
    const delivery = await listener.next((m) => m.type === 'delivery');
    // Another account's connection answers for it: ignored.
    const other = connect('', { authorization: `Bearer ${intruder}` });
    await other.next((m) => m.type === 'ready');
    other.socket.send(JSON.stringify({ action: 'answer', trigger_id: trigger.id, execution_id: delivery.execution_id, status: 200, ms: 1 }));
    // The owner's listener answers: recorded once, beside the flow's run.
    listener.socket.send(JSON.stringify({ action: 'answer', trigger_id: trigger.id, execution_id: delivery.execution_id, status: 204, ms: 3 }));
    let detail: any;
    for (let i = 0; i < 100 && !detail?.forwarded; i++) {
      detail = (await call(stack, 'GET', `/triggers/${trigger.id}/executions/${delivery.execution_id}`, { token: owner })).json.data;
      if (!detail.forwarded) await new Promise((r) => setTimeout(r, 50));
    }
    expect(detail.forwarded).toEqual([expect.objectContaining({ status: 204, ms: 3 })]);
    expect(detail.status).not.toBe('forwarded');
    // Something that is not the protocol is answered with an error, not a crash.
    listener.socket.send('not json');
    expect(await listener.next((m) => m.type === 'error')).toMatchObject({ error: 'validation_error' });
    listener.socket.close();
    other.socket.close();
  });

  it('closes a connection that sends a message over 128 KB, or a frame over 32 KB (API Gateway\'s limits), saying so', async () => {
    const token = await stack.token('listen-threat-size');
    for (const send of [
      (socket: WebSocket) => sendInFrames(socket, 'x'.repeat(129 * 1024)),
      (socket: WebSocket) => socket.send('x'.repeat(33 * 1024)),
    ]) {
      const listener = connect('', { authorization: `Bearer ${token}` });
      await listener.next((m) => m.type === 'ready');
      const closed = new Promise<{ code: number; reason: string }>((done) => listener.socket.once('close', (code, reason) => done({ code, reason: reason.toString() })));
      send(listener.socket);
      expect(await closed).toEqual({ code: 1009, reason: expect.stringMatching(/^Message too big: a message is at most 128 KB, a frame 32 KB/) });
    }
  });

  it("gives a waiting sender a listener's answer (87 KB, in 32 KB frames) kept in the connections table, and records it as answering the sender", async () => {
    const token = await stack.token('listen-answer-kept');
    const trigger = (await call(stack, 'POST', '/triggers', { token, body: { flow: 'echo', response_mode: 'wait', answer_from_listener: true } })).json.data as { id: string; url: string };
    const listener = connect(`triggers=${trigger.id}`, { authorization: `Bearer ${token}` });
    await listener.next((m) => m.type === 'ready');
    const sent = fetch(trigger.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id: 'evt_kept' }) });
    const delivery = await listener.next((m) => m.type === 'delivery');
    // 64 KB of bytes, the most a kept answer carries, base64 in an 87 KB message: over a frame, under a message.
    const body = randomBytes(64 * 1024);
    sendInFrames(listener.socket, JSON.stringify({ action: 'answer', trigger_id: trigger.id, execution_id: delivery.execution_id, status: 202, ms: 5, headers: { 'content-type': 'application/octet-stream', 'x-from': 'laptop' }, body: body.toString('base64'), body_encoding: 'base64' }));
    const answer = await sent;
    expect(answer.status).toBe(202);
    expect(answer.headers.get('x-from')).toBe('laptop');
    expect(Buffer.from(await answer.arrayBuffer()).equals(body)).toBe(true);
    const detail = (await call(stack, 'GET', `/triggers/${trigger.id}/executions/${delivery.execution_id}`, { token })).json.data;
    expect(detail.forwarded).toEqual([expect.objectContaining({ status: 202, answered_sender: true })]);
    listener.socket.close();
  });

  it("gives a waiting sender the flow's answer when the listener is late, and records the late answer without claiming it answered the sender", async () => {
    const token = await stack.token('listen-answer-late');
    const trigger = (await call(stack, 'POST', '/triggers', { token, body: { flow: 'echo', response_mode: 'wait', answer_from_listener: true } })).json.data as { id: string; url: string };
    const listener = connect(`triggers=${trigger.id}`, { authorization: `Bearer ${token}` });
    await listener.next((m) => m.type === 'ready');
    const sent = fetch(trigger.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id: 'evt_late' }) });
    const delivery = await listener.next((m) => m.type === 'delivery');
    const answer = await sent;
    expect(answer.status).toBe(200);
    expect(await answer.json()).toMatchObject({ event_id: 'evt_late' });
    listener.socket.send(JSON.stringify({ action: 'answer', trigger_id: trigger.id, execution_id: delivery.execution_id, status: 202, ms: WAIT_MS + 1 }));
    const detail = await forwardedOf(token, trigger.id, delivery.execution_id);
    expect(detail.forwarded).toEqual([expect.objectContaining({ status: 202 })]);
    expect(detail.forwarded[0]).not.toHaveProperty('answered_sender');
    listener.socket.close();
  });

  it("gives a waiting sender the flow's answer when its listener could not reach its local server (the wait ends then: see websocket-listeners.test.ts)", async () => {
    const token = await stack.token('listen-answer-unreached');
    const trigger = (await call(stack, 'POST', '/triggers', { token, body: { flow: 'echo', response_mode: 'wait', answer_from_listener: true } })).json.data as { id: string; url: string };
    const listener = connect(`triggers=${trigger.id}`, { authorization: `Bearer ${token}` });
    await listener.next((m) => m.type === 'ready');
    const sent = fetch(trigger.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id: 'evt_unreached' }) });
    const delivery = await listener.next((m) => m.type === 'delivery');
    listener.socket.send(JSON.stringify({ action: 'answer', trigger_id: trigger.id, execution_id: delivery.execution_id, error: 'ECONNREFUSED', ms: 1 }));
    const answer = await sent;
    expect(answer.status).toBe(200);
    expect(await answer.json()).toMatchObject({ event_id: 'evt_unreached' });
    const detail = await forwardedOf(token, trigger.id, delivery.execution_id);
    expect(detail.forwarded).toEqual([{ at: expect.any(String), listener: expect.any(String), ms: 1, error: 'ECONNREFUSED' }]);
    listener.socket.close();
  });

  it("never gives a waiting sender another account's listener's answer", async () => {
    const owner = await stack.token('listen-answer-owner');
    const intruder = await stack.token('listen-answer-intruder');
    const trigger = (await call(stack, 'POST', '/triggers', { token: owner, body: { flow: 'echo', response_mode: 'wait', answer_from_listener: true } })).json.data as { id: string; url: string };
    const listener = connect(`triggers=${trigger.id}`, { authorization: `Bearer ${owner}` });
    await listener.next((m) => m.type === 'ready');
    const other = connect('', { authorization: `Bearer ${intruder}` });
    await other.next((m) => m.type === 'ready');
    const sent = fetch(trigger.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id: 'evt_hostile' }) });
    const delivery = await listener.next((m) => m.type === 'delivery');
    other.socket.send(JSON.stringify({ action: 'answer', trigger_id: trigger.id, execution_id: delivery.execution_id, status: 299, body: 'from the intruder' }));
    // The owner's listener stays silent: the sender waits out the wait budget, then the flow answers.
    const answer = await sent;
    expect(answer.status).toBe(200);
    expect(await answer.json()).toMatchObject({ event_id: 'evt_hostile' });
    const detail = (await call(stack, 'GET', `/triggers/${trigger.id}/executions/${delivery.execution_id}`, { token: owner })).json.data;
    expect(detail.forwarded).toBeUndefined();
    listener.socket.close();
    other.socket.close();
  });

  it('forgets a connection API Gateway no longer has: the push is answered 410, and its LISTEN item is removed', async () => {
    const token = await stack.token('listen-gone');
    const trigger = (await call(stack, 'POST', '/triggers', { token, body: { flow: 'echo' } })).json.data as { id: string; url: string };
    // A connection whose $disconnect never ran (API Gateway delivers it on a best-effort basis).
    const item = { pk: `LISTEN#${trigger.id}`, sk: 'Z29uZS1jb25uZWN0aW9u', expires_at: Math.floor(Date.now() / 1000) + 3600 };
    const table = 'local-listenConnections';
    await dynamoClient(stack.aws).send(new PutCommand({ TableName: table, Item: item }));
    // Another listener of the trigger is connected: with no WebSocket open on the emulator every push
    // would be 410, and the local receiver skips the lookup (deployed, every delivery looks up).
    const live = connect(`triggers=${trigger.id}`, { authorization: `Bearer ${token}` });
    await live.next((m) => m.type === 'ready');
    expect((await fetch(trigger.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"id":"evt_gone"}' })).status).toBe(200);
    await live.next((m) => m.type === 'delivery');
    for (let i = 0; i < 200; i++) {
      if (!(await dynamoClient(stack.aws).send(new GetCommand({ TableName: table, Key: { pk: item.pk, sk: item.sk } }))).Item) return live.socket.close();
      await new Promise((r) => setTimeout(r, 50));
    }
    live.socket.close();
    throw new Error('the LISTEN item of the gone connection is still there');
  });

  it('threat: the management API takes only requests signed as AWS checks them: unsigned, signed with another secret, or over the decoded path, each is 403 and nothing reaches the listener', async () => {
    const token = await stack.token('listen-management-threat');
    const listener = connect('', { authorization: `Bearer ${token}` });
    const ready = await listener.next((m) => m.type === 'ready');
    const connection = `${stack.listenUrl.replace('ws:', 'http:')}/@connections/${encodeURIComponent(ready.connection_id)}`;
    const fake = '{"type":"delivery","request":{"body_url":"https://attacker.example/x"}}';
    // The same connection with its id's first character percent-encoded: a path whose decoded form differs from the one sent.
    const id = ready.connection_id as string;
    const encoded = `${stack.listenUrl.replace('ws:', 'http:')}/@connections/%${id.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}${encodeURIComponent(id.slice(1))}`;
    const attempts = [
      await fetch(connection, { method: 'POST', body: fake }),
      await signedFetch(connection, 'POST', fake, { secretAccessKey: 'not-the-stack-secret' }),
      await signedFetch(encoded, 'POST', fake, {}, decodeURIComponent(new URL(encoded).pathname)),
      await fetch(connection, { method: 'DELETE' }),
    ];
    expect(attempts.map((r) => r.status)).toEqual([403, 403, 403, 403]);
    expect((await signedFetch(connection, 'POST', '{"type":"signed"}')).status).toBe(200);
    expect((await signedFetch(encoded, 'POST', '{"type":"signed-encoded"}')).status).toBe(200);
    await listener.next((m) => m.type === 'signed');
    await listener.next((m) => m.type === 'signed-encoded');
    expect(listener.messages.filter((m) => m.type === 'delivery')).toEqual([]);
    listener.socket.close();
  });

  it('serves the management API: POST to a connection as the functions sign it, GET it, DELETE it (then 410)', async () => {
    const token = await stack.token('listen-management');
    const listener = connect('', { authorization: `Bearer ${token}` });
    const ready = await listener.next((m) => m.type === 'ready');
    const callbackUrl = stack.listenUrl.replace('ws:', 'http:');
    const post = managementPosterFor(callbackUrl, stack.aws);
    expect(await post(ready.connection_id, '{"type":"hello-from-the-api"}')).toBe(true);
    await listener.next((m) => m.type === 'hello-from-the-api');
    const connection = `${callbackUrl}/@connections/${encodeURIComponent(ready.connection_id)}`;
    const got = await signedFetch(connection, 'GET');
    expect(got.status).toBe(200);
    expect(await got.json()).toMatchObject({ connectedAt: expect.any(String), identity: { sourceIp: '127.0.0.1' } });
    const closed = new Promise((done) => listener.socket.once('close', done));
    expect((await signedFetch(connection, 'DELETE')).status).toBe(204);
    await closed;
    expect(await post(ready.connection_id, '{}')).toBe(false);
    const gone = await signedFetch(connection, 'GET');
    expect({ status: gone.status, type: gone.headers.get('x-amzn-errortype') }).toEqual({ status: 410, type: 'GoneException' });
  });
});
