/*
 * One way to answer (issue 43): every 400 says what was wrong and how to fix it, and the same thing
 * is answered the same way on every route. Over HTTP, on one local stack.
 */
import { describe, expect, it } from 'vitest';
import { call, useLocalStack } from '../support/local-stack.js';
import { TEST_FLOWS_DIR } from '../support/webhooks.js';

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
