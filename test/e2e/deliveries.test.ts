/**
 * Deliveries an operator can inspect, search and replay, end to end over HTTP on the local stack:
 * refused deliveries recorded with their requests (secrets redacted, within a budget), stored
 * bodies byte for byte, the attempts timeline, filters across pages, and single and bulk replay.
 */
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { dynamoClient } from '../../functions/adapters/aws/clients/dynamo.js';
import { MAX_REFUSED_RECORDS_PER_MINUTE } from '../../functions/domain/webhooks/refusal-budget.js';
import { call, useLocalStack } from '../support/local-stack.js';
import { signStripe } from '../support/signers.js';
import { createTrigger, deliver, TEST_FLOWS_DIR, waitForExecutions } from '../support/webhooks.js';

const stack = useLocalStack({ flowsDir: TEST_FLOWS_DIR, env: { TRIGGER_CACHE_TTL_MS: '0' } });
const STRIPE_SECRET = 'whsec_deliveries_test_secret';
const nowSeconds = () => Math.floor(Date.now() / 1000);

interface Execution {
  execution_id: string;
  event_id: string;
  status: string;
  type?: string;
  error?: string;
  received_at: string;
  replay_of?: string;
  flow?: string;
  attempts: number;
  timeline: { attempt: number; started_at: string; finished_at?: string; status: string; error?: string }[];
  request?: { method: string; headers: Record<string, string>; query: Record<string, string>; source_ip?: string; body?: string; body_encoding?: string; body_bytes: number };
  output?: unknown;
}

async function listAll(token: string, triggerId: string, query = '', limit = 500): Promise<Execution[]> {
  const all: Execution[] = [];
  let cursor: string | null = null;
  do {
    const res = await call(stack, 'GET', `/triggers/${triggerId}/executions?limit=${limit}${query}${cursor ? `&cursor=${cursor}` : ''}`, { token });
    expect(res.status, res.text).toBe(200);
    all.push(...res.json.data.executions);
    cursor = res.json.data.next_cursor;
  } while (cursor);
  return all;
}

const detail = async (token: string, triggerId: string, executionId: string) => {
  const res = await call(stack, 'GET', `/triggers/${triggerId}/executions/${executionId}`, { token });
  expect(res.status, res.text).toBe(200);
  return res.json.data as Execution;
};

describe('refused deliveries', () => {
  it('a wrong signature is listed as refused/invalid_signature with its request, the API key and credentials redacted (fetch sends no cookie header: that one is in test/domain/stored-request.test.ts), the signature kept', async () => {
    const token = await stack.token('refused-owner');
    const trigger = await createTrigger(stack, token, { flow: 'echo', api_key_enabled: true, signature: { service: 'stripe', secret: STRIPE_SECRET } });
    const body = JSON.stringify({ id: 'evt_wrong_sig', type: 'invoice.paid' });
    const signed = signStripe({ secret: 'whsec_not_the_secret', body, timestamp: nowSeconds() });
    const res = await deliver(`${trigger.url}?api_key=${trigger.api_key}&source=test`, body, {
      ...signed, 'x-api-key': trigger.api_key!, authorization: 'Bearer abc.def', 'proxy-authorization': 'Basic czNjcmV0', 'X-Custom': 'Kept',
    });
    expect(res.status).toBe(401);
    expect(res.json).toEqual({ error: 'invalid_signature', message: expect.any(String) });

    const [refused] = await listAll(token, trigger.id);
    expect(refused).toMatchObject({ status: 'refused', error: 'invalid_signature', event_id: 'evt_wrong_sig', type: 'invoice.paid', unverified: true, attempts: 0, timeline: [] });
    const read = await detail(token, trigger.id, refused!.execution_id);
    expect(read.request).toMatchObject({
      method: 'POST',
      query: { api_key: '[redacted]', source: 'test' },
      body, body_encoding: 'utf8', body_bytes: Buffer.byteLength(body),
    });
    expect(read.request!.headers).toMatchObject({
      'x-api-key': '[redacted]', authorization: '[redacted]', 'proxy-authorization': '[redacted]', 'x-custom': 'Kept', 'stripe-signature': signed['stripe-signature'],
    });
    expect(read.request!.source_ip).toMatch(/127\.0\.0\.1/);
    expect(JSON.stringify(read)).not.toContain(trigger.api_key!);
    expect(JSON.stringify(await listAll(token, trigger.id))).not.toContain(trigger.api_key!);
  });

  it('unknown and disabled ids are not recorded; a wrong API key, a wrong method and an unsupported body are', async () => {
    const token = await stack.token('refused-kinds');
    const trigger = await createTrigger(stack, token, { flow: 'echo', api_key_enabled: true });
    expect((await deliver(trigger.url, '{}', { 'x-api-key': 'fgk_wrong' })).status).toBe(401);
    expect((await deliver(trigger.url, '', { 'x-api-key': trigger.api_key! }, 'GET')).status).toBe(405);
    expect((await deliver(trigger.url, 'plain', { 'x-api-key': trigger.api_key!, 'content-type': 'text/plain' })).status).toBe(415);
    expect((await deliver(trigger.url, '{not json', { 'x-api-key': trigger.api_key! })).status).toBe(400);
    const disabled = await createTrigger(stack, token, { flow: 'echo', enabled: false });
    expect((await deliver(disabled.url, '{}')).status).toBe(404);
    const errors = (await listAll(token, trigger.id)).map((e) => [e.status, e.error]);
    expect(errors).toEqual([['refused', 'validation_error'], ['refused', 'unsupported_media_type'], ['refused', 'method_not_allowed'], ['refused', 'unauthorized']]);
    expect(await listAll(token, disabled.id)).toEqual([]);
  });

  it(`a burst of 500 bad signatures is answered 401 every time and leaves at most ${MAX_REFUSED_RECORDS_PER_MINUTE} records per minute`, async () => {
    const token = await stack.token('burst-owner');
    const trigger = await createTrigger(stack, token, { flow: 'echo', signature: { service: 'stripe', secret: STRIPE_SECRET } });
    const body = JSON.stringify({ id: 'evt_burst', type: 'x' });
    const headers = signStripe({ secret: 'whsec_wrong', body, timestamp: nowSeconds() });
    const statuses: number[] = [];
    const queue = Array.from({ length: 500 }, (_, i) => i);
    await Promise.all(Array.from({ length: 25 }, async () => {
      while (queue.shift() !== undefined) statuses.push((await deliver(trigger.url, body, headers)).status);
    }));
    expect(statuses).toHaveLength(500);
    expect(new Set(statuses)).toEqual(new Set([401]));
    const refused = await listAll(token, trigger.id);
    const perMinute = new Map<string, number>();
    for (const e of refused) perMinute.set(e.received_at.slice(0, 16), (perMinute.get(e.received_at.slice(0, 16)) ?? 0) + 1);
    for (const count of perMinute.values()) expect(count).toBeLessThanOrEqual(MAX_REFUSED_RECORDS_PER_MINUTE);
    // Recorded up to the budget, not nothing.
    expect(refused.length).toBeGreaterThanOrEqual(MAX_REFUSED_RECORDS_PER_MINUTE);
  });
});

describe('stored requests', () => {
  it('keeps the body byte for byte: JSON, form, multipart and a body that is not UTF-8', async () => {
    const token = await stack.token('bodies-owner');
    const trigger = await createTrigger(stack, token, { flow: 'echo' });
    const boundary = 'flowgateBoundary7';
    const binary = Buffer.from([0xff, 0xfe, 0x00, 0x80, 0xc3, 0x28, 0x0a]);
    const multipart = Buffer.concat([
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="note"\r\n\r\nhé\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="b.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`),
      binary,
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]);
    const sent: [Uint8Array, string, string][] = [
      [Buffer.from(JSON.stringify({ id: 'evt_json', type: 'a', text: 'naïve ✓' })), 'application/json', 'utf8'],
      [Buffer.from('id=evt_form&type=b&amount=10&amount=20'), 'application/x-www-form-urlencoded', 'utf8'],
      [multipart, `multipart/form-data; boundary=${boundary}`, 'base64'],
    ];
    for (const [bytes, contentType] of sent) expect((await deliver(trigger.url, bytes, { 'content-type': contentType })).status).toBe(200);
    const executions = (await listAll(token, trigger.id)).reverse();
    expect(executions).toHaveLength(3);
    for (const [i, [bytes, contentType, encoding]] of sent.entries()) {
      const { request } = await detail(token, trigger.id, executions[i]!.execution_id);
      expect(request!.body_encoding).toBe(encoding);
      expect(Buffer.from(request!.body!, encoding as BufferEncoding).equals(Buffer.from(bytes))).toBe(true);
      expect(request!.body_bytes).toBe(bytes.length);
      expect(request!.headers['content-type']).toBe(contentType);
    }
  });

  it('keeps a body near the receiver\'s limit (stored aside in chunks)', async () => {
    const token = await stack.token('big-owner');
    const trigger = await createTrigger(stack, token, { flow: 'echo' });
    // Too big for a flow input (so refused 413), but within the body limit: kept whole.
    const body = JSON.stringify({ id: 'evt_big', blob: 'ü'.repeat(400_000) });
    expect((await deliver(trigger.url, body)).status).toBe(413);
    const [refused] = await listAll(token, trigger.id);
    expect(refused).toMatchObject({ status: 'refused', error: 'payload_too_large' });
    expect((await detail(token, trigger.id, refused!.execution_id)).request!.body).toBe(body);
  });
});

describe('detail, timeline and filters', () => {
  it('a succeeded delivery shows its output and one finished attempt; a missing or malformed id is 404', async () => {
    const token = await stack.token('detail-owner');
    const trigger = await createTrigger(stack, token, { flow: 'echo', response_mode: 'wait' });
    expect((await deliver(trigger.url, JSON.stringify({ id: 'evt_detail', type: 't' }))).status).toBe(200);
    const [listed] = await listAll(token, trigger.id);
    const read = await detail(token, trigger.id, listed!.execution_id);
    expect(read).toMatchObject({ execution_id: listed!.execution_id, event_id: 'evt_detail', status: 'succeeded', attempts: 1 });
    expect(read.output).toBeDefined();
    expect(read.timeline).toEqual([{ attempt: 1, started_at: expect.any(String), finished_at: expect.any(String), status: 'succeeded' }]);
    expect(Date.parse(read.timeline[0]!.finished_at!)).toBeGreaterThanOrEqual(Date.parse(read.timeline[0]!.started_at));
    for (const id of ['0000000000nothere', 'not-an-id!', listed!.execution_id.slice(0, -1) + (listed!.execution_id.endsWith('0') ? '1' : '0')]) {
      expect((await call(stack, 'GET', `/triggers/${trigger.id}/executions/${id}`, { token })).json).toEqual({ error: 'not_found', message: expect.any(String) });
    }
    // Another account's trigger is not found, execution or not.
    expect((await call(stack, 'GET', `/triggers/${trigger.id}/executions/${listed!.execution_id}`, { token: await stack.token('someone-else') })).status).toBe(404);
  });

  it('an acknowledged signed delivery\'s record names the replay claim it took (for a restart to give back were its request never stored), and its detail does not show it', async () => {
    const token = await stack.token('claim-owner');
    const trigger = await createTrigger(stack, token, { flow: 'echo', deduplicate: true, signature: { service: 'stripe', secret: STRIPE_SECRET } });
    const body = JSON.stringify({ id: 'evt_claimed', type: 'invoice.paid' });
    expect((await deliver(trigger.url, body, signStripe({ secret: STRIPE_SECRET, body, timestamp: nowSeconds() }))).status).toBe(200);
    const [listed] = await waitForExecutions(stack, token, trigger.id, (list) => list.length === 1 && list[0]!.status === 'succeeded');
    const { Items = [] } = await dynamoClient(stack.aws).send(new ScanCommand({ TableName: stack.engines.env.EXECUTIONS_TABLE!, ConsistentRead: true }));
    const record = Items.find((item) => String(item.pk).startsWith(`TRIGGER#${trigger.id}#`) && item.execution_id === listed!.execution_id);
    expect(record?.claim_key).toBe('id:evt_claimed');
    expect(await detail(token, trigger.id, listed!.execution_id)).not.toHaveProperty('claim_key');
  });

  it('filters combine and return exactly the matching executions across pages', async () => {
    const token = await stack.token('filters-owner');
    const trigger = await createTrigger(stack, token, { flow: 'echo', event_filter: ['invoice.*'], signature: { service: 'stripe', secret: STRIPE_SECRET } });
    const send = (id: string, type: string, secret = STRIPE_SECRET, timestamp = nowSeconds()) => {
      const body = JSON.stringify({ id, type });
      return deliver(trigger.url, body, signStripe({ secret, body, timestamp }));
    };
    for (let i = 0; i < 4; i++) await send(`evt_paid_${i}`, 'invoice.paid');
    for (let i = 0; i < 3; i++) await send(`evt_cust_${i}`, 'customer.created');
    const middle = new Date().toISOString();
    await new Promise((r) => setTimeout(r, 5));
    for (let i = 0; i < 3; i++) await send(`evt_bad_${i}`, 'invoice.created', 'whsec_wrong');
    // Stripe's retry, signed anew (a byte-identical copy within the tolerance is an exact replay, refused as duplicate).
    await send('evt_paid_0', 'invoice.paid', STRIPE_SECRET, nowSeconds() + 1);
    const all = await waitForExecutions(stack, token, trigger.id, (e) => e.filter((x) => x.status === 'succeeded').length === 5);
    expect(all).toHaveLength(11);
    const cases: [string, (e: Execution) => boolean][] = [
      ['&status=refused', (e) => e.status === 'refused'],
      ['&status=ignored,refused', (e) => e.status === 'ignored' || e.status === 'refused'],
      ['&type=invoice.*', (e) => e.type?.startsWith('invoice.') ?? false],
      ['&type=invoice.paid&status=succeeded', (e) => e.type === 'invoice.paid' && e.status === 'succeeded'],
      [`&since=${middle}`, (e) => e.received_at >= middle],
      [`&until=${middle}&type=customer.created`, (e) => e.received_at < middle && e.type === 'customer.created'],
      ['&event_id=evt_paid_0', (e) => e.event_id === 'evt_paid_0'],
    ];
    for (const [query, keep] of cases) {
      const expected = all.filter(keep).map((e) => e.execution_id);
      expect(expected.length, query).toBeGreaterThan(0);
      expect((await listAll(token, trigger.id, query, 2)).map((e) => e.execution_id), query).toEqual(expected);
    }
    for (const bad of ['&status=nope', '&since=yesterday', '&type=a*b', `&since=${middle}&until=${middle}`]) {
      expect((await call(stack, 'GET', `/triggers/${trigger.id}/executions?${bad}`, { token })).json, bad).toEqual({ error: 'validation_error', message: expect.any(String) });
    }
  });
});

describe('replay', () => {
  it('a failed flow, the trigger switched to a working flow, then "replay failed": each replay succeeds with replay_of', async () => {
    const token = await stack.token('replay-owner');
    const trigger = await createTrigger(stack, token, { flow: 'always-fails', response_mode: 'wait', deduplicate: true });
    for (let i = 0; i < 3; i++) expect((await deliver(trigger.url, JSON.stringify({ id: `evt_r${i}`, type: 'order' }))).status).toBe(502);
    const failed = await listAll(token, trigger.id, '&status=failed');
    expect(failed).toHaveLength(3);
    expect((await call(stack, 'PATCH', `/triggers/${trigger.id}`, { token, body: { flow: 'echo' } })).status).toBe(200);

    // Without status or since, a bulk replay is refused.
    expect((await call(stack, 'POST', `/triggers/${trigger.id}/replay`, { token, body: { type: 'order' } })).json).toEqual({ error: 'validation_error', message: 'status or since is required' });
    const first = await call(stack, 'POST', `/triggers/${trigger.id}/replay`, { token, body: { status: ['failed'], limit: 2 } });
    expect(first.status).toBe(202);
    expect(first.json.data).toMatchObject({ replayed: 2, not_replayable: 0 });
    const rest = await call(stack, 'POST', `/triggers/${trigger.id}/replay`, { token, body: { status: ['failed'], limit: 2, cursor: first.json.data.next_cursor } });
    expect(rest.json.data).toMatchObject({ replayed: 1, next_cursor: null });

    const all = await waitForExecutions(stack, token, trigger.id, (e) => e.filter((x) => x.replay_of && x.status === 'succeeded').length === 3);
    const replays = all.filter((e) => e.replay_of);
    expect(replays.map((e) => e.replay_of).sort()).toEqual(failed.map((e) => e.execution_id).sort());
    // Each names the flow that ran it: the originals the one they failed in, the replays the trigger's new one.
    expect(failed.map((e) => e.flow)).toEqual(['always-fails', 'always-fails', 'always-fails']);
    expect(replays.map((e) => e.flow)).toEqual(['echo', 'echo', 'echo']);
    for (const replay of replays) {
      const original = failed.find((e) => e.execution_id === replay.replay_of)!;
      // The same event, run again although the trigger deduplicates.
      expect(replay.event_id).toBe(original.event_id);
      const read = await detail(token, trigger.id, replay.execution_id);
      expect(read.request!.body).toBe(JSON.stringify({ id: original.event_id, type: 'order' }));
      expect(read.timeline.at(-1)).toMatchObject({ status: 'succeeded' });
    }
  });

  it('a delivery refused while the secret was wrong is recovered by replaying it; one without a stored body is not replayable', async () => {
    const token = await stack.token('recover-owner');
    const trigger = await createTrigger(stack, token, { flow: 'echo', signature: { service: 'stripe', secret: 'whsec_misconfigured' } });
    const body = JSON.stringify({ id: 'evt_recover', type: 'invoice.paid' });
    expect((await deliver(trigger.url, body, signStripe({ secret: STRIPE_SECRET, body, timestamp: nowSeconds() }))).status).toBe(401);
    const [refused] = await listAll(token, trigger.id);
    const replay = await call(stack, 'POST', `/triggers/${trigger.id}/executions/${refused!.execution_id}/replay`, { token });
    expect(replay.status).toBe(202);
    expect(replay.json.data).toEqual({ execution_id: expect.any(String), replay_of: refused!.execution_id });
    const done = await waitForExecutions(stack, token, trigger.id, (e) => e.some((x) => x.execution_id === replay.json.data.execution_id && x.status === 'succeeded'));
    expect(done.find((x) => x.execution_id === replay.json.data.execution_id)).toMatchObject({ event_id: 'evt_recover', replay_of: refused!.execution_id });

    const unsupported = await createTrigger(stack, token, { flow: 'echo' });
    expect((await deliver(unsupported.url, 'plain text', { 'content-type': 'text/plain' })).status).toBe(415);
    const [plain] = await listAll(token, unsupported.id);
    expect((await call(stack, 'POST', `/triggers/${unsupported.id}/executions/${plain!.execution_id}/replay`, { token })).json).toEqual({ error: 'not_replayable', message: expect.any(String) });
  });
});

describe('sender secrets: never kept in clear, never handed to a flow', () => {
  const graphBody = (clientState: string) => JSON.stringify({ value: [{ subscriptionId: 'sub-1', clientState, changeType: 'created', resource: 'users/1' }] });
  /** A sender that carries its secret in clear, where, and a delivery that verifies. */
  const senders: { service: string; secret: string; headers: Record<string, string>; body: string; field: (request: Execution['request']) => unknown }[] = [
    { service: 'gitlab', secret: 'gitlab-token-secret-1', headers: { 'x-gitlab-token': 'gitlab-token-secret-1' }, body: '{"object_kind":"push"}', field: (r: Execution['request']) => r!.headers['x-gitlab-token'] },
    { service: 'telegram', secret: 'telegram-token-secret-1', headers: { 'x-telegram-bot-api-secret-token': 'telegram-token-secret-1' }, body: '{"update_id":1}', field: (r: Execution['request']) => r!.headers['x-telegram-bot-api-secret-token'] },
    { service: 'okta', secret: 'X-Okta-Hook-Auth: okta-secret-value-1', headers: { 'x-okta-hook-auth': 'okta-secret-value-1' }, body: '{"data":{}}', field: (r: Execution['request']) => r!.headers['x-okta-hook-auth'] },
    { service: 'bigcommerce', secret: 'X-Hook-Token: bigcommerce-secret-1', headers: { 'x-hook-token': 'bigcommerce-secret-1' }, body: '{"scope":"store/order/created"}', field: (r: Execution['request']) => r!.headers['x-hook-token'] },
    { service: 'microsoft_graph', secret: 'graph-client-state-1', headers: {}, body: graphBody('graph-client-state-1'), field: (r: Execution['request']) => JSON.parse(r!.body!).value[0].clientState },
    { service: 'auth0', secret: 'Bearer auth0-log-token-1', headers: { authorization: 'Bearer auth0-log-token-1' }, body: '[{"log_id":"1"}]', field: (r: Execution['request']) => r!.headers.authorization },
  ];
  const secretOf = (secret: string) => secret.replace(/^[^:]*: /, '').replace(/^Bearer /, '');

  it.each(senders)('$service: its stored request shows [redacted] where it carries the secret', async ({ service, secret, headers, body, field }) => {
    const token = await stack.token(`sender-secrets-${service}`);
    const trigger = await createTrigger(stack, token, { flow: 'echo', signature: { service, secret } });
    expect((await deliver(trigger.url, body, headers)).status).toBe(200);
    const [queued] = await waitForExecutions(stack, token, trigger.id, (list) => list.length === 1);
    const read = await detail(token, trigger.id, queued.execution_id);
    expect(field(read.request)).toBe('[redacted]');
    expect(JSON.stringify(read)).not.toContain(secretOf(secret));
  });

  it('meta: the verify token of its subscription handshake is stored as [redacted]', async () => {
    const token = await stack.token('sender-secrets-meta');
    const trigger = await createTrigger(stack, token, { flow: 'echo', signature: { service: 'meta', secret: 'meta-app-secret-1', verify_token: 'meta-verify-token-1' } });
    expect((await fetch(`${trigger.url}?hub.mode=subscribe&hub.verify_token=meta-verify-token-1&hub.challenge=5`)).status).toBe(200);
    const [handshake] = await waitForExecutions(stack, token, trigger.id, (list) => list.length === 1);
    const read = await detail(token, trigger.id, handshake.execution_id);
    expect(read.request!.query).toEqual({ 'hub.mode': 'subscribe', 'hub.verify_token': '[redacted]', 'hub.challenge': '5' });
    expect(JSON.stringify(read)).not.toContain('meta-verify-token-1');
  });

  it.each(senders)('$service: a flow input (echo-trigger, wait mode) has neither its token nor an authorization header', async ({ service, secret, headers, body }) => {
    const token = await stack.token(`sender-secrets-flow-${service}`);
    const trigger = await createTrigger(stack, token, { flow: 'echo-trigger', response_mode: 'wait', signature: { service, secret } });
    const res = await deliver(trigger.url, body, { ...headers, authorization: headers.authorization ?? 'Basic dXNlcjpwYXNz' });
    expect(res.status, res.text).toBe(200);
    // Graph's POST is a batch, split into its notifications (issue 31): wait mode answers each one's flow output in an array.
    const input = service === 'microsoft_graph' ? res.json[0] : res.json;
    expect(input.headers).not.toHaveProperty('authorization');
    for (const name of Object.keys(headers)) expect(input.headers).not.toHaveProperty(name);
    expect(res.text).not.toContain(secretOf(secret));
    if (service === 'microsoft_graph') expect(input.event.clientState).toBe('[redacted]');
  });

  it('meta: a trigger without signature.verify_token is 400 validation_error (the app secret is never the verify token)', async () => {
    const token = await stack.token('sender-secrets-meta-rule');
    const res = await call(stack, 'POST', '/triggers', { token, body: { flow: 'echo', signature: { service: 'meta', secret: 'meta-app-secret-1' } } });
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({ error: 'validation_error', message: expect.stringMatching(/^signature\.verify_token: required/) });
  });
});
