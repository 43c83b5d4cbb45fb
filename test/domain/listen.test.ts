import { describe, expect, it } from 'vitest';
import type { ExecutionDetail, ExecutionRef, ForwardedAttempt } from '../../functions/domain/flows/ports.js';
import { ListenerHub, type ListenerConnection } from '../../functions/domain/listen/hub.js';
import { MAX_INLINE_MESSAGE_BYTES, MAX_SINCE_MS, ListenQueryError, deliveryMessage, parseAnswer, parseListenQuery, typeMatches } from '../../functions/domain/listen/protocol.js';

const NOW = Date.parse('2026-11-27T12:00:00Z');

const detail = (body: string): ExecutionDetail => ({
  execution_id: 'e1', event_id: 'evt_1', received_at: '2026-11-27T11:59:59.000Z', type: 'payment_intent.succeeded', status: 'queued', attempts: 0, timeline: [],
  request: { method: 'POST', headers: { 'stripe-signature': 't=1,v1=abc' }, query: {}, body, body_encoding: 'utf8', body_bytes: Buffer.byteLength(body) },
});

describe('listen protocol', () => {
  it('parseListenQuery reads triggers, events and since, and holds since to the 7 days records are kept', () => {
    expect(parseListenQuery({ triggers: 'a,b', events: 'payment_intent.*', since: '2026-11-27T10:00:00Z' }, NOW)).toEqual({ triggers: ['a', 'b'], events: ['payment_intent.*'], since: '2026-11-27T10:00:00.000Z' });
    expect(parseListenQuery({ since: '2020-01-01T00:00:00Z' }, NOW).since).toBe(new Date(NOW - MAX_SINCE_MS).toISOString());
    expect(() => parseListenQuery({ since: 'yesterday' }, NOW)).toThrow(ListenQueryError);
    expect(() => parseListenQuery({ triggers: 'a/../b' }, NOW)).toThrow(/triggers/);
    expect(() => parseListenQuery({ events: Array.from({ length: 101 }, (_, i) => `t${i}`).join(',') }, NOW)).toThrow(/events/);
  });

  it('typeMatches takes exact types and prefixes ending in *; no filter takes every type', () => {
    expect(typeMatches(undefined, 'a')).toBe(true);
    expect(typeMatches(['payment_intent.*'], 'payment_intent.succeeded')).toBe(true);
    expect(typeMatches(['charge.refunded'], 'charge.succeeded')).toBe(false);
    expect(typeMatches(['x'], undefined)).toBe(false);
  });

  it('deliveryMessage keeps the body inline while the message fits, and gives its inspector URL once it would not', () => {
    const small = JSON.parse(deliveryMessage(detail('{"id":"evt_1"}'), { id: 't1', sender: 'stripe' }, 'https://api.example.com'));
    expect(small).toMatchObject({ type: 'delivery', trigger_id: 't1', sender: 'stripe', request: { body: '{"id":"evt_1"}', headers: { 'stripe-signature': 't=1,v1=abc' } } });
    const text = deliveryMessage(detail('x'.repeat(MAX_INLINE_MESSAGE_BYTES)), { id: 't1' }, 'https://api.example.com');
    expect(Buffer.byteLength(text)).toBeLessThan(MAX_INLINE_MESSAGE_BYTES);
    const large = JSON.parse(text);
    expect(large.request.body).toBeUndefined();
    expect(large.request).toMatchObject({ body_url: 'https://api.example.com/triggers/t1/executions/e1', body_bytes: MAX_INLINE_MESSAGE_BYTES });
  });

  it('parseAnswer takes only the answer shape', () => {
    expect(parseAnswer('{"action":"answer","trigger_id":"t","execution_id":"e","status":200,"ms":3}')).toMatchObject({ status: 200 });
    for (const bad of ['nope', '[]', '{"action":"answer"}', '{"action":"answer","trigger_id":"t","execution_id":"e","status":42}', '{"action":"answer","trigger_id":"t","execution_id":"e","headers":{"a":1}}']) {
      expect(parseAnswer(bad), bad).toBeUndefined();
    }
  });
});

describe('ListenerHub', () => {
  function hubWith(records: Record<string, ExecutionDetail>) {
    const forwarded: { ref: ExecutionRef; attempt: ForwardedAttempt }[] = [];
    const hub = new ListenerHub({
      executions: { get: async (ref) => records[ref.executionId], list: async () => ({ items: [], nextCursor: null }) },
      triggers: { get: async () => undefined, list: async () => ({ items: [], nextCursor: null }) },
      forwarded: { add: async (ref, attempt) => (forwarded.push({ ref, attempt }), true) },
      now: () => NOW,
      apiBaseUrl: 'https://api.example.com',
    });
    return { hub, forwarded };
  }
  const connection = (id: string, triggerId: string, sent: string[] = [], answerFromListener = false): ListenerConnection => ({
    id, accountId: 'acct', triggers: new Map([[triggerId, { id: triggerId, name: 'n', response_mode: 'wait', answer_from_listener: answerFromListener }]]), send: (text) => sent.push(text),
  });
  const ref = { triggerId: 't1', executionId: 'e1' };

  it('answer() is undefined at once when no listener is connected', async () => {
    const { hub } = hubWith({});
    expect(await hub.answer(ref, 10_000)).toBeUndefined();
  });

  it("answer() gives the first listener's answer, without hop-by-hop headers, and records it as answering the sender", async () => {
    const { hub, forwarded } = hubWith({ e1: detail('{}') });
    const listener = connection('c1', 't1', [], true);
    await hub.add(listener);
    const waiting = hub.answer(ref, 10_000);
    await hub.answered(listener, { action: 'answer', trigger_id: 't1', execution_id: 'e1', status: 201, ms: 4, headers: { 'Content-Type': 'text/plain', 'Transfer-Encoding': 'chunked' }, body: 'hi' });
    expect(await waiting).toEqual({ status: 201, headers: { 'content-type': 'text/plain' }, body: 'hi', isBase64Encoded: false });
    expect(forwarded).toEqual([{ ref, attempt: { at: new Date(NOW).toISOString(), listener: 'c1', status: 201, ms: 4, answered_sender: true } }]);
  });

  it('answer() falls back (undefined) as soon as the last listener leaves, or its server could not be reached', async () => {
    const { hub } = hubWith({});
    const listener = connection('c1', 't1');
    await hub.add(listener);
    const leaving = hub.answer(ref, 10_000);
    hub.remove('c1');
    expect(await leaving).toBeUndefined();
    await hub.add(listener);
    const failing = hub.answer({ triggerId: 't1', executionId: 'e2' }, 10_000);
    await hub.answered(listener, { action: 'answer', trigger_id: 't1', execution_id: 'e2', error: 'ECONNREFUSED', ms: 1 });
    expect(await failing).toBeUndefined();
  });

  it("ignores an answer for a trigger the connection does not listen to, and pushes a delivery only to its trigger's listeners", async () => {
    const { hub, forwarded } = hubWith({ e1: detail('{}') });
    const mine: string[] = [];
    const theirs: string[] = [];
    await hub.add(connection('c1', 't1', mine));
    const other = connection('c2', 't2', theirs);
    await hub.add(other);
    await hub.answered(other, { action: 'answer', trigger_id: 't1', execution_id: 'e1', status: 200 });
    expect(forwarded).toEqual([]);
    await hub.recorded(ref);
    await new Promise((r) => setTimeout(r, 10));
    expect(mine.map((m) => JSON.parse(m).type)).toEqual(['ready', 'delivery']);
    expect(theirs.map((m) => JSON.parse(m).type)).toEqual(['ready']);
  });
});
