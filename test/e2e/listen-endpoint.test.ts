import WebSocket from 'ws';
import { describe, expect, it } from 'vitest';
import { call, useLocalStack } from '../support/local-stack.js';

/*
 * The listen endpoint's threat model, over the WebSocket protocol itself (the CLI's tests cover the
 * rest): who may connect (the account's own credentials, with the triggers scope), what a connection
 * reaches (its account's triggers only, answers only for those), and what hostile input costs (a
 * message over API Gateway's 128 KB closes the connection; a bad query is refused before the upgrade).
 */

const stack = useLocalStack();

/** Opens a connection; resolves with its first message, or the HTTP refusal's status and body. */
function connect(query: string, headers: Record<string, string>) {
  const socket = new WebSocket(`${stack.listenUrl}/?${query}`, { headers });
  const messages: any[] = [];
  socket.on('message', (data) => messages.push(JSON.parse(data.toString())));
  const opened = new Promise<{ refused?: { status: number; body: any } }>((done, fail) => {
    // As the CLI does: API Gateway cannot send before $connect returned, so `ready` answers this first message.
    socket.once('open', () => (socket.send(JSON.stringify({ action: 'hello' })), done({})));
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

  it('closes a connection that sends a message over 128 KB (API Gateway\'s limit)', async () => {
    const token = await stack.token('listen-threat-size');
    const listener = connect('', { authorization: `Bearer ${token}` });
    await listener.next((m) => m.type === 'ready');
    const closed = new Promise<number>((done) => listener.socket.once('close', (code) => done(code)));
    listener.socket.send('x'.repeat(129 * 1024));
    expect(await closed).toBe(1009);
  });
});
