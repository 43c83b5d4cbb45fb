/*
 * One way to answer (issue 43): every 400 says what was wrong and how to fix it, and the same thing
 * is answered the same way on every route. Over HTTP, on one local stack.
 */
import { describe, expect, it } from 'vitest';
import { call, useLocalStack } from '../support/local-stack.js';
import { signStripe } from '../support/signers.js';
import { totpCodeAt } from '../support/totp.js';
import { createTrigger, deliver, TEST_FLOWS_DIR } from '../support/webhooks.js';

const stack = useLocalStack({ flowsDir: TEST_FLOWS_DIR, env: { TRIGGER_CACHE_TTL_MS: '0' } });

let counter = 0;
const owner = () => stack.token(`answers-${++counter}`);

describe('a 400 names the field, what it takes and the nearest name', () => {
  it('an unknown field on a bucket names the field and the fields a bucket takes', async () => {
    const res = await call(stack, 'PUT', '/storage/kv/answers-bucket', { token: await owner(), body: { ttl_second: 60 } });
    expect(res.status).toBe(400);
    expect(res.json.error).toBe('validation_error');
    expect(res.json.message).toMatch(/^ttl_second: is not a known field \(did you mean "ttl_seconds"\?\); a bucket's configuration takes description, ttl_seconds, max_value_bytes/);
  });

  it('an unknown flow names the flows that exist and the nearest', async () => {
    const res = await call(stack, 'POST', '/triggers', { token: await owner(), body: { flow: 'ecoh' } });
    expect(res.status).toBe(400);
    expect(res.json.error).toBe('validation_error');
    expect(res.json.message).toMatch(/^flow: no flow is named "ecoh" \(did you mean "echo"\?\); the flows are .*"echo"/);
  });

  it('a string where event_filter takes a list says it takes a list of strings', async () => {
    const res = await call(stack, 'POST', '/triggers', { token: await owner(), body: { flow: 'echo', event_filter: 'invoice.paid' } });
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ error: 'validation_error', message: 'event_filter: must be a list of strings, not a string' });
  });

  it('a bad response_mode lists the allowed values and the nearest', async () => {
    const res = await call(stack, 'POST', '/triggers', { token: await owner(), body: { flow: 'echo', response_mode: 'Wait' } });
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ error: 'validation_error', message: 'response_mode: must be one of "acknowledge", "wait", not "Wait" (did you mean "wait"?)' });
  });

  it('signature.service "Stripe" is not "required": it suggests "stripe"', async () => {
    const res = await call(stack, 'POST', '/triggers', { token: await owner(), body: { flow: 'echo', signature: { service: 'Stripe', secret: 'whsec_x' } } });
    expect(res.status).toBe(400);
    expect(res.json.message).toMatch(/^signature\.service: must be one of "stripe", .* not "Stripe" \(did you mean "stripe"\?\)$/);
  });

  it('a misspelt field of a PATCH is named with its nearest', async () => {
    const token = await owner();
    const created = await call(stack, 'POST', '/triggers', { token, body: { flow: 'echo' } });
    const res = await call(stack, 'PATCH', `/triggers/${created.json.data.id}`, { token, body: { respone_mode: 'wait' } });
    expect(res.status).toBe(400);
    expect(res.json.message).toMatch(/^respone_mode: is not a known field \(did you mean "response_mode"\?\); the fields here are /);
  });

  it('a Stripe secret without whsec_ is refused in Stripe\'s own words', async () => {
    const res = await call(stack, 'POST', '/triggers', { token: await owner(), body: { flow: 'echo', signature: { service: 'stripe', secret: 'sk_live_abc123' } } });
    expect(res.status).toBe(400);
    expect(res.json).toEqual({
      error: 'validation_error',
      message: "signature.secret: Stripe's secret is the endpoint's signing secret (whsec_…): it starts with whsec_, and this one does not",
    });
  });

  it('a sender no trigger can verify is refused with its reason, and the document does not offer it', async () => {
    const res = await call(stack, 'POST', '/triggers', { token: await owner(), body: { flow: 'echo', signature: { service: 'plaid', secret: 'x' } } });
    expect(res.status).toBe(400);
    expect(res.json.message).toMatch(/^signature\.service: Plaid cannot be verified here: /);
    const doc = (await call(stack, 'GET', '/openapi.json')).json;
    const services = JSON.stringify(doc).match(/"enum":\["stripe","github"[^\]]*\]/g) ?? [];
    expect(services.length).toBeGreaterThan(0);
    for (const list of services) expect(list).not.toContain('"plaid"');
  });
});

/** A code no step within two of now produces for `secret`, so it is wrong whenever it arrives. */
function wrongCode(secret: string): string {
  const near = new Set([-2, -1, 0, 1, 2].map((d) => totpCodeAt(secret, Date.now() + d * 30_000)));
  return ['000000', '111111', '222222', '333333', '444444', '555555'].find((code) => !near.has(code))!;
}

/** A user with a first TOTP factor: its token, secret, the first confirmation's answer. */
async function enrolled() {
  const token = await owner();
  const { secret } = (await call(stack, 'POST', '/accounts/totp-registration', { token })).json.data as { secret: string };
  const confirmed = await call(stack, 'POST', '/accounts/confirm-totp-registration', { token, body: { code: totpCodeAt(secret, Date.now()), secret } });
  expect(confirmed.status).toBe(200);
  return { token, secret, confirmed: confirmed.json.data as { factor_id?: string; recovery_codes: string[] } };
}

const nowSeconds = () => Math.floor(Date.now() / 1000);

describe('the same thing is answered the same way', () => {
  it('the first factor confirmation returns its factor_id, the one the factor list shows', async () => {
    const { token, confirmed } = await enrolled();
    expect(confirmed.factor_id).toEqual(expect.any(String));
    expect(confirmed.recovery_codes).toHaveLength(10);
    const listed = (await call(stack, 'GET', '/accounts/factors', { token })).json.data.factors as { id: string }[];
    expect(listed.map((f) => f.id)).toEqual([confirmed.factor_id]);
  });

  it('a wrong code is 401 invalid_code whether it is a TOTP or a recovery code', async () => {
    const { token, secret, confirmed } = await enrolled();
    const totp = await call(stack, 'POST', '/accounts/totp/verify', { token, body: { code: wrongCode(secret) } });
    const recovery = await call(stack, 'POST', '/accounts/recovery-codes/verify', { token, body: { code: 'zzzzz-zzzzz' } });
    expect([totp.status, totp.json]).toEqual([401, { error: 'invalid_code', message: expect.any(String) }]);
    expect([recovery.status, recovery.json]).toEqual([401, { error: 'invalid_code', message: expect.any(String) }]);
    // A used one too.
    expect((await call(stack, 'POST', '/accounts/recovery-codes/verify', { token, body: { code: confirmed.recovery_codes[0] } })).status).toBe(200);
    expect((await call(stack, 'POST', '/accounts/recovery-codes/verify', { token, body: { code: confirmed.recovery_codes[0] } })).status).toBe(401);
  });

  it('a publish whose msg_id was already seen says duplicate: true, as NATS\'s PubAck', async () => {
    const token = await owner();
    const base = '/storage/streams/answers-stream';
    expect((await call(stack, 'PUT', base, { token, body: {} })).status).toBe(201);
    const first = await call(stack, 'POST', `${base}/messages`, { token, body: { messages: [{ data: 1, msg_id: 'm-1' }, { data: 2 }] } });
    expect(first.json.data).toEqual({ seqs: [1, 2], acks: [{ seq: 1, duplicate: false }, { seq: 2, duplicate: false }] });
    const again = await call(stack, 'POST', `${base}/messages`, { token, body: { messages: [{ data: 1, msg_id: 'm-1' }, { data: 3, msg_id: 'm-3' }, { data: 3, msg_id: 'm-3' }] } });
    expect(again.json.data).toEqual({ seqs: [1, 3, 3], acks: [{ seq: 1, duplicate: true }, { seq: 3, duplicate: false }, { seq: 3, duplicate: true }] });
  });

  it('an ignored webhook answer carries its event_id and why it was ignored', async () => {
    const trigger = await createTrigger(stack, await owner(), { flow: 'echo', event_filter: ['invoice.*'] });
    const typed = await deliver(trigger.url, JSON.stringify({ id: 'evt_ignored_1', type: 'customer.created' }));
    expect([typed.status, typed.json]).toEqual([200, { status: 'ignored', event_id: 'evt_ignored_1', reason: 'the event type "customer.created" matches none of the trigger\'s event_filter' }]);
    const untyped = await deliver(trigger.url, JSON.stringify({ id: 'evt_ignored_2' }));
    expect(untyped.json).toEqual({ status: 'ignored', event_id: 'evt_ignored_2', reason: expect.stringMatching(/no type/) });
  });

  it('a refused delivery\'s record marks a forged body\'s type and id unverified; a verified one is not marked', async () => {
    const token = await owner();
    const secret = 'whsec_answers_refused';
    const trigger = await createTrigger(stack, token, { flow: 'echo', signature: { service: 'stripe', secret } });
    const forged = JSON.stringify({ id: 'evt_forged', type: 'invoice.paid' });
    expect((await deliver(trigger.url, forged, signStripe({ secret: 'whsec_not_it', body: forged, timestamp: nowSeconds() }))).status).toBe(401);
    const good = JSON.stringify({ id: 'evt_real', type: 'invoice.paid' });
    expect((await deliver(trigger.url, good, signStripe({ secret, body: good, timestamp: nowSeconds() }))).status).toBe(200);
    const list = async () => (await call(stack, 'GET', `/triggers/${trigger.id}/executions`, { token })).json.data.executions as { event_id: string; status: string; unverified?: true }[];
    let executions = await list();
    for (let i = 0; i < 100 && executions.length < 2; i++) executions = await list();
    const refused = executions.find((e) => e.status === 'refused')!;
    expect(refused).toMatchObject({ event_id: 'evt_forged', unverified: true });
    expect(executions.find((e) => e.event_id === 'evt_real')).not.toHaveProperty('unverified');
  });
});
