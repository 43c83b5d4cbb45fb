import { senderSdks } from '../support/sender-sdks.js';
import { describe, expect, it } from 'vitest';
import { call, useLocalStack } from '../support/local-stack.js';
import { signSlack, signTwilio } from '../support/signers.js';
import { createTrigger, deliver, TEST_FLOWS_DIR, waitForExecutions } from '../support/webhooks.js';

const stack = useLocalStack({ flowsDir: TEST_FLOWS_DIR });
const FORM = 'application/x-www-form-urlencoded';

/** A wait-mode trigger whose flow answers with the event's `reply`, and a delivery asking for `reply`. */
async function answerWith(reply: unknown) {
  const token = await stack.token('replies-owner');
  const trigger = await createTrigger(stack, token, { flow: 'answers-as-told', response_mode: 'wait' });
  const res = await fetch(trigger.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ reply }) });
  return { token, trigger, res };
}

describe('replies a wait-mode flow shapes (an API Gateway proxy response)', () => {
  it('text: the status, headers and body the flow gave, as they are', async () => {
    const { res } = await answerWith({ statusCode: 201, headers: { 'Content-Type': 'text/plain; charset=utf-8', 'X-Reply': 'yes' }, body: 'Thanks, got it.' });
    expect(res.status).toBe(201);
    expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(res.headers.get('x-reply')).toBe('yes');
    expect(await res.text()).toBe('Thanks, got it.');
  });

  it('binary: a base64 body is sent as its bytes', async () => {
    const bytes = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0xff, 0x10, 0x80]);
    const { res } = await answerWith({ statusCode: 200, headers: { 'content-type': 'image/png' }, body: bytes.toString('base64'), isBase64Encoded: true });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await res.arrayBuffer())).toEqual(bytes);
  });

  it('the execution keeps what was answered: status, content type and size', async () => {
    const { token, trigger, res } = await answerWith({ statusCode: 202, headers: { 'content-type': 'text/xml' }, body: '<ok/>' });
    expect(res.status).toBe(202);
    const [execution] = await waitForExecutions(stack, token, trigger.id, (list) => list[0]?.status === 'succeeded');
    expect(execution.reply).toEqual({ status: 202, content_type: 'text/xml', bytes: 5 });
  });

  it('an output that is not a proxy response is answered as JSON, as before', async () => {
    const { res } = await answerWith({ statusCode: 200, reason: 'not a proxy response: it has a key one lacks' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(await res.json()).toEqual({ statusCode: 200, reason: 'not a proxy response: it has a key one lacks' });
  });

  it.each([
    ['a status out of range', { statusCode: 700, body: 'x' }, /statusCode must be an integer from 200 to 599/],
    ['a hop-by-hop header', { statusCode: 200, headers: { 'Transfer-Encoding': 'chunked' }, body: 'x' }, /may not set transfer-encoding/],
    ['a cookie', { statusCode: 200, headers: { 'Set-Cookie': 'a=b' }, body: 'x' }, /may not set set-cookie/],
    ['a header with a line break', { statusCode: 200, headers: { 'X-A': 'a\r\nX-B: b' }, body: 'x' }, /header x-a must be text without control characters/],
    ['a body that is not a string', { statusCode: 200, body: { a: 1 } }, /body must be a string/],
    ['a body that is not base64', { statusCode: 200, body: 'not base64!', isBase64Encoded: true }, /body is not base64/],
  ])('a malformed reply (%s) is 502 flow_failed, with the reason on the execution\'s timeline', async (_, reply, reason) => {
    const { token, trigger, res } = await answerWith(reply);
    expect(res.status).toBe(502);
    expect(await res.json()).toEqual({ error: 'flow_failed' });
    const [execution] = await waitForExecutions(stack, token, trigger.id, (list) => list[0]?.status === 'failed');
    expect(execution.error).toMatch(reason);
    expect(execution.timeline[0].error).toMatch(reason);
  });
});

describe('the example flows users copy', () => {
  it('twilio-sms-reply answers a signed Twilio SMS webhook with the TwiML Twilio\'s own MessagingResponse makes, the sender\'s text escaped', async () => {
    const token = await stack.token('replies-twilio');
    const authToken = 'twilio-auth-token-0123456789abcdef';
    const trigger = await createTrigger(stack, token, { flow: 'twilio-sms-reply', response_mode: 'wait', signature: { service: 'twilio', secret: authToken } });
    const text = 'Is 3 < 4 & "yes"?\r\nOK';
    const body = new URLSearchParams({ AccountSid: 'AC123', From: '+15551234567', To: '+15557654321', Body: text, MessageSid: 'SM1' }).toString();
    const signed = signTwilio({ authToken, url: trigger.url, body, contentType: FORM });
    const res = await fetch(signed.url, { method: 'POST', headers: signed.headers, body });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/xml');
    const expected = new senderSdks.twilio.twiml.MessagingResponse();
    expected.message(`Got it: ${text}`);
    expect(await res.text()).toBe(expected.toString());
  });

  it('slack-command answers a signed slash command with a short text reply', async () => {
    const token = await stack.token('replies-slack');
    const secret = 'slack-signing-secret-0123456789';
    const trigger = await createTrigger(stack, token, { flow: 'slack-command', response_mode: 'wait', signature: { service: 'slack', secret } });
    const body = new URLSearchParams({ command: '/deploy', text: 'staging', user_name: 'ada', team_id: 'T1' }).toString();
    const res = await deliver(trigger.url, body, { ...signSlack({ secret, body, timestamp: Math.floor(Date.now() / 1000) }), 'content-type': FORM });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(res.text).toBe('Got /deploy staging');
  });
});

describe('acknowledge_response: a fixed answer per trigger', () => {
  it('by default an acknowledged delivery is answered with JSON, as before', async () => {
    const token = await stack.token('replies-ack');
    const trigger = await createTrigger(stack, token, { flow: 'echo' });
    expect(trigger.acknowledge_response).toBeNull();
    const res = await deliver(trigger.url, JSON.stringify({ id: 'evt_ack_default' }));
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ status: 'accepted', event_id: 'evt_ack_default' });
  });

  it('Adyen\'s [accepted], for accepted, ignored and duplicate deliveries alike', async () => {
    const token = await stack.token('replies-ack');
    const acknowledge_response = { status_code: 200, content_type: 'text/plain', body: '[accepted]' };
    const trigger = await createTrigger(stack, token, { flow: 'echo', deduplicate: true, event_filter: ['AUTHORISATION'], acknowledge_response });
    expect(trigger.acknowledge_response).toEqual(acknowledge_response);
    for (const body of [{ id: 'evt_adyen_1', type: 'AUTHORISATION' }, { id: 'evt_adyen_1', type: 'AUTHORISATION' }, { id: 'evt_adyen_2', type: 'REFUND' }]) {
      const res = await deliver(trigger.url, JSON.stringify(body));
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/plain');
      expect(res.text).toBe('[accepted]');
    }
    const executions = await waitForExecutions(stack, token, trigger.id, (list) => list.length === 3 && list.some((e) => e.status === 'succeeded'));
    expect(executions.map((e) => e.status).sort()).toEqual(['duplicate', 'ignored', 'succeeded']);
  });

  it('Discord\'s 204 with no body, set by PATCH and shown in GET', async () => {
    const token = await stack.token('replies-ack');
    const trigger = await createTrigger(stack, token, { flow: 'echo' });
    const patched = await call(stack, 'PATCH', `/triggers/${trigger.id}`, { token, body: { acknowledge_response: { status_code: 204, content_type: 'text/plain', body: '' } } });
    expect(patched.status).toBe(200);
    expect((await call(stack, 'GET', `/triggers/${trigger.id}`, { token })).json.data.acknowledge_response).toEqual({ status_code: 204, content_type: 'text/plain', body: '' });
    const res = await deliver(trigger.url, JSON.stringify({ type: 0 }));
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    // null puts the default back, within the receiver's trigger cache TTL (docs/triggers.md: 5 s by default).
    await call(stack, 'PATCH', `/triggers/${trigger.id}`, { token, body: { acknowledge_response: null } });
    const deadline = Date.now() + 15_000;
    let back = await deliver(trigger.url, JSON.stringify({ id: 'evt_back' }));
    while (back.status === 204 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      back = await deliver(trigger.url, JSON.stringify({ id: 'evt_back' }));
    }
    expect(back.json).toEqual({ status: 'accepted', event_id: 'evt_back' });
  });

  it.each([
    ['a status outside 2xx', { status_code: 302, content_type: 'text/plain', body: '' }],
    ['a body over 1,000 characters', { status_code: 200, content_type: 'text/plain', body: 'x'.repeat(1001) }],
    ['a body with 204', { status_code: 204, content_type: 'text/plain', body: 'no' }],
    ['a content type with a line break', { status_code: 200, content_type: 'text/plain\r\nx-evil: 1', body: '' }],
    ['an unknown field', { status_code: 200, content_type: 'text/plain', body: '', headers: {} }],
  ])('%s is 400 validation_error', async (_, acknowledge_response) => {
    const token = await stack.token('replies-ack');
    const res = await call(stack, 'POST', '/triggers', { token, body: { flow: 'echo', acknowledge_response } });
    expect(res.status).toBe(400);
    expect(res.json.error).toBe('validation_error');
  });
});
