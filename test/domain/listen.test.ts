import { describe, expect, it } from 'vitest';
import type { ExecutionDetail, ExecutionRef, ForwardedAttempt } from '../../functions/domain/flows/ports.js';
import { ListenerHub, type ListenerConnection } from '../../functions/domain/listen/hub.js';
import type { ListenerAnswer, ReplayBudget } from '../../functions/domain/listen/ports.js';
import { MAX_INLINE_MESSAGE_BYTES, MAX_REPLAY_READS_PER_HOUR, MAX_REPLAYED_PER_TRIGGER, MAX_SINCE_MS, ListenQueryError, deliveryMessage, parseAnswer, parseListenQuery, typeMatches } from '../../functions/domain/listen/protocol.js';

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

  it('parseAnswer takes only the answer shape, with ids of the shapes the inspector\'s are', () => {
    expect(parseAnswer('{"action":"answer","trigger_id":"t","execution_id":"0mi5k2s00e","status":200,"ms":3}')).toMatchObject({ status: 200 });
    for (const bad of ['nope', '[]', '{"action":"answer"}', '{"action":"answer","trigger_id":"t","execution_id":"0mi5k2s00e","status":42}', '{"action":"answer","trigger_id":"t","execution_id":"0mi5k2s00e","headers":{"a":1}}',
      '{"action":"answer","trigger_id":"t","execution_id":"e"}', '{"action":"answer","trigger_id":"t","execution_id":"!0mi5k2s00e"}', `{"action":"answer","trigger_id":"t","execution_id":"0mi5k2s00${'e'.repeat(65)}"}`,
      '{"action":"answer","trigger_id":"t/../u","execution_id":"0mi5k2s00e"}']) {
      expect(parseAnswer(bad), bad).toBeUndefined();
    }
  });
});

/** The budget's rules as the connections table keeps them (`DynamoListenConnections`, tested against dynalite). */
function memoryBudget(): ReplayBudget & { used: Map<string, number> } {
  const used = new Map<string, number>();
  return {
    used,
    take: async (account, hour, wanted, max) => {
      const before = used.get(`${account}#${hour}`) ?? 0;
      const granted = Math.max(0, Math.min(wanted, max - before));
      used.set(`${account}#${hour}`, before + granted);
      return granted;
    },
    giveBack: async (account, hour, count) => void used.set(`${account}#${hour}`, (used.get(`${account}#${hour}`) ?? 0) - count),
  };
}

describe('ListenerHub', () => {
  function hubWith(records: Record<string, ExecutionDetail>, listed: { execution_id: string; received_at: string; type?: string }[] = []) {
    const forwarded: { ref: ExecutionRef; attempt: ForwardedAttempt }[] = [];
    const kept: { ref: ExecutionRef; answer: ListenerAnswer | undefined }[] = [];
    const hub = new ListenerHub({
      executions: { get: async (ref) => records[ref.executionId], list: async () => ({ items: listed as never, nextCursor: null }) },
      triggers: { get: async () => undefined, list: async () => ({ items: [], nextCursor: null }) },
      forwarded: { add: async (ref, attempt) => (forwarded.push({ ref, attempt }), true) },
      answers: { keep: async (ref, answer) => (kept.push({ ref, answer }), kept.filter((k) => k.answer).length === 1 && answer !== undefined) },
      replayBudget: memoryBudget(),
      now: () => NOW,
      apiBaseUrl: 'https://api.example.com',
    });
    return { hub, forwarded, kept };
  }
  const connection = (id: string, triggerId: string, sent: string[] = [], answerFromListener = false, open = () => true): ListenerConnection => ({
    id, accountId: 'acct', triggers: new Map([[triggerId, { id: triggerId, name: 'n', response_mode: 'wait', answer_from_listener: answerFromListener }]]), send: async (text) => (sent.push(text), open()),
  });
  const ref = { triggerId: 't1', executionId: 'e1' };

  it("answered() keeps a listener's answer for the sender, without hop-by-hop headers, and records it as answering the sender", async () => {
    const { hub, forwarded, kept } = hubWith({ e1: detail('{}') });
    await hub.answered(connection('c1', 't1', [], true), { action: 'answer', trigger_id: 't1', execution_id: 'e1', status: 201, ms: 4, headers: { 'Content-Type': 'text/plain', 'Transfer-Encoding': 'chunked' }, body: 'hi' });
    expect(kept).toEqual([{ ref, answer: { status: 201, headers: { 'content-type': 'text/plain' }, body: 'hi', isBase64Encoded: false } }]);
    expect(forwarded).toEqual([{ ref, attempt: { at: new Date(NOW).toISOString(), listener: 'c1', status: 201, ms: 4, answered_sender: true } }]);
  });

  it("threat: answered() never passes a Set-Cookie to the sender (the receiver shares the console's origin), as a flow's reply may not set one", async () => {
    const { hub, kept } = hubWith({ e1: detail('{}') });
    await hub.answered(connection('c1', 't1', [], true), { action: 'answer', trigger_id: 't1', execution_id: 'e1', status: 200, headers: { 'Set-Cookie': 'session=attacker; Path=/', 'Proxy-Authenticate': 'Basic', 'X-Local': 'yes' }, body: 'ok' });
    expect(kept).toEqual([{ ref, answer: { status: 200, headers: { 'x-local': 'yes' }, body: 'ok', isBase64Encoded: false } }]);
  });

  it('threat: answered() keeps nothing for the sender that HTTP could not carry (a line break in a header, a bad name, a 1xx status, a body not base64 though said to be): the flow answers', async () => {
    const { hub, kept, forwarded } = hubWith({ e1: detail('{}') });
    const answers = [
      { status: 200, headers: { 'x-split': 'a\r\nset-cookie: s=1' } },
      { status: 200, headers: { 'bad name': 'x' } },
      { status: 200, headers: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`x-h${i}`, 'v'])) },
      { status: 101 },
      { status: 200, body: 'not base64!', body_encoding: 'base64' as const },
    ];
    for (const answer of answers) await hub.answered(connection('c1', 't1', [], true), { action: 'answer', trigger_id: 't1', execution_id: 'e1', ...answer });
    expect(kept.map((k) => k.answer)).toEqual(answers.map(() => undefined));
    expect(forwarded.map((f) => f.attempt.status)).toEqual(answers.map((a) => a.status));
  });

  it('answered() keeps only the first answer for the sender; a second is recorded without answering it', async () => {
    const { hub, forwarded } = hubWith({});
    await hub.answered(connection('c1', 't1', [], true), { action: 'answer', trigger_id: 't1', execution_id: 'e1', status: 200 });
    await hub.answered(connection('c2', 't1', [], true), { action: 'answer', trigger_id: 't1', execution_id: 'e1', status: 500 });
    expect(forwarded.map((f) => f.attempt.answered_sender)).toEqual([true, undefined]);
  });

  it('answered() counts a listener that could not reach its server (the receiver stops waiting), and keeps nothing for a trigger that does not answer from a listener', async () => {
    const { hub, forwarded, kept } = hubWith({});
    await hub.answered(connection('c1', 't1', [], true), { action: 'answer', trigger_id: 't1', execution_id: 'e1', error: 'ECONNREFUSED', ms: 1 });
    expect(kept).toEqual([{ ref, answer: undefined }]);
    await hub.answered(connection('c1', 't1', [], false), { action: 'answer', trigger_id: 't1', execution_id: 'e2', status: 200 });
    expect(kept).toHaveLength(1);
    expect(forwarded.map((f) => [f.ref.executionId, f.attempt.error, f.attempt.answered_sender])).toEqual([['e1', 'ECONNREFUSED', undefined], ['e2', undefined, undefined]]);
  });

  it('answered() ignores an answer for a trigger the connection does not listen to', async () => {
    const { hub, forwarded, kept } = hubWith({ e1: detail('{}') });
    await hub.answered(connection('c2', 't2', [], true), { action: 'answer', trigger_id: 't1', execution_id: 'e1', status: 200 });
    expect(forwarded).toEqual([]);
    expect(kept).toEqual([]);
  });

  it('add() says ready, replays since oldest first, and stops replaying once the connection is gone', async () => {
    const records = { e1: detail('{}'), e2: { ...detail('{}'), execution_id: 'e2' } };
    const listed = [{ execution_id: 'e2', received_at: '2026-11-27T11:59:59.500Z' }, { execution_id: 'e1', received_at: '2026-11-27T11:59:59.000Z' }];
    const { hub } = hubWith(records, listed);
    const sent: string[] = [];
    await hub.add(connection('c1', 't1', sent), '2026-11-27T11:00:00Z');
    expect(sent.map((m) => [JSON.parse(m).type, JSON.parse(m).execution_id])).toEqual([['ready', undefined], ['delivery', 'e1'], ['delivery', 'e2'], ['replayed', undefined]]);
    const cut: string[] = [];
    await hub.add(connection('c1', 't1', cut, false, () => cut.length < 2), '2026-11-27T11:00:00Z');
    expect(cut.map((m) => JSON.parse(m).type)).toEqual(['ready', 'delivery']);
  });

  /** A hub over triggers of `perTrigger` records each (newest first, a second apart), on a clock the test moves. */
  function busyHub(perTrigger: number, budget = memoryBudget()) {
    const clock = { ms: NOW };
    const listed: number[] = [];
    const hub = new ListenerHub({
      executions: {
        get: async (ref) => ({ ...detail('{}'), execution_id: ref.executionId }),
        list: async (triggerId, _filter, page) => {
          const from = Number(page.cursor ?? 0);
          const items = Array.from({ length: Math.min(page.limit, perTrigger - from) }, (_, i) => ({
            execution_id: `${triggerId}-${from + i}`, received_at: new Date(NOW - 1000 * (from + i + 1)).toISOString(),
          }));
          listed.push(items.length);
          return { items: items as never, nextCursor: from + items.length < perTrigger ? String(from + items.length) : null };
        },
      },
      triggers: { get: async () => undefined, list: async () => ({ items: [], nextCursor: null }) },
      forwarded: { add: async () => true },
      answers: { keep: async () => false },
      replayBudget: budget,
      now: () => clock.ms,
      apiBaseUrl: 'https://api.example.com',
    });
    const listen = async (triggerCount: number) => {
      const sent: any[] = [];
      const triggers = new Map(Array.from({ length: triggerCount }, (_, i) => [`t${i}`, { id: `t${i}`, name: 'n', response_mode: 'acknowledge' as const, answer_from_listener: false }]));
      await hub.add({ id: 'c', accountId: 'acct', triggers, send: async (text) => (sent.push(JSON.parse(text)), true) }, new Date(NOW - MAX_SINCE_MS).toISOString());
      return { deliveries: sent.filter((m) => m.type === 'delivery'), errors: sent.filter((m) => m.type === 'error'), replayed: sent.find((m) => m.type === 'replayed') };
    };
    return { hub, clock, listed, listen, budget };
  }

  it(`threat: the replays of one account read at most ${MAX_REPLAY_READS_PER_HOUR} records an hour, across its connections: asking again (connecting again) is cut, says so, and the next hour reads again`, async () => {
    const { listen, listed, clock } = busyHub(MAX_REPLAYED_PER_TRIGGER);
    const first = await listen(6);
    expect(first.deliveries).toHaveLength(6 * MAX_REPLAYED_PER_TRIGGER);
    expect(first.errors).toEqual([]);
    // A second connection of the account (a reconnect) gets what is left of the hour, a round of pages at a time: each trigger's newest.
    const second = await listen(6);
    expect(second.deliveries).toHaveLength(MAX_REPLAY_READS_PER_HOUR - 6 * MAX_REPLAYED_PER_TRIGGER);
    for (let t = 0; t < 6; t++) expect(second.deliveries.filter((m) => m.trigger_id === `t${t}`).length).toBeGreaterThanOrEqual(600);
    expect(second.errors).toEqual([expect.objectContaining({ error: 'too_many_attempts', message: expect.stringContaining('connect again with since') })]);
    expect(second.replayed).toMatchObject({ truncated: true });
    const third = await listen(1);
    expect(third.deliveries).toEqual([]);
    expect(third.errors).toHaveLength(1);
    expect(listed.reduce((a, b) => a + b, 0)).toBe(MAX_REPLAY_READS_PER_HOUR);
    clock.ms += 3600 * 1000;
    expect((await listen(1)).deliveries).toHaveLength(MAX_REPLAYED_PER_TRIGGER);
  });

  it('a replay gives back what it took but did not read: quiet triggers cost the budget only their records', async () => {
    const { listen, budget } = busyHub(3);
    expect((await listen(50)).deliveries).toHaveLength(150);
    expect([...budget.used.values()]).toEqual([150]);
  });
});
