/**
 * The receiver's two doors: its Lambda function URL, where trigger URLs point (a webhook there is
 * not an API Gateway request: $1.00 a million less, docs/costs.md), and the API's `/webhooks`
 * route, which keeps answering every trigger (URLs given out before the function URL, and
 * deployments behind a custom domain).
 *
 * Threats: a path on the function URL that names no trigger costs what an unknown id costs (no
 * read); a signature made for the URL of one door does not pass at the other, nor at a Host the
 * caller writes (the URL a URL-signing sender signed is made from what AWS sets, never the caller).
 */
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { startLocalStack } from '../../local/stack.js';
import { call, useLocalStack } from '../support/local-stack.js';
import { signTwilio } from '../support/signers.js';
import { createTrigger, deliver, TEST_FLOWS_DIR, waitForExecutions } from '../support/webhooks.js';

const stack = useLocalStack({ flowsDir: TEST_FLOWS_DIR });
const TWILIO_TOKEN = 'function-url-twilio-token';
const FORM = 'application/x-www-form-urlencoded';

describe('trigger URLs on the function URL', () => {
  it('a trigger\'s url is on the function URL; a delivery there runs its flow, and the API\'s route answers the same trigger', async () => {
    const token = await stack.token('fn-url-owner');
    const trigger = await createTrigger(stack, token, { flow: 'echo' });
    expect(stack.webhookFunctionUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    expect(trigger.url).toBe(`${stack.webhookFunctionUrl}${trigger.webhook_id}`);
    expect(new URL(trigger.url).origin).not.toBe(new URL(stack.baseUrl).origin);

    const viaUrl = await deliver(trigger.url, JSON.stringify({ id: 'evt_fn_url' }));
    expect(viaUrl.status, viaUrl.text).toBe(200);
    expect(viaUrl.json.status).toBe('accepted');
    // The receiver's headers are on every answer, whichever door.
    expect(viaUrl.headers.get('content-security-policy')).toBe("sandbox; default-src 'none'");
    const viaApi = await deliver(`${stack.webhookBaseUrl}/${trigger.webhook_id}`, JSON.stringify({ id: 'evt_api_route' }));
    expect(viaApi.status, viaApi.text).toBe(200);

    const executions = await waitForExecutions(stack, token, trigger.id, (all) => all.length === 2 && all.every((e) => e.status === 'succeeded'));
    expect(executions.map((e) => e.event_id).sort()).toEqual(['evt_api_route', 'evt_fn_url']);
  });

  it('a function URL path that names no trigger is the 404 of an unknown id, whatever the method', async () => {
    const token = await stack.token('fn-url-paths');
    const trigger = await createTrigger(stack, token, { flow: 'echo' });
    const unknown = await deliver(`${stack.webhookFunctionUrl}${Buffer.alloc(24, 3).toString('base64url')}`, '{}');
    expect(unknown.status).toBe(404);
    for (const path of ['', `webhooks/${trigger.webhook_id}`, `${trigger.webhook_id}/more`, `${trigger.webhook_id}/`, 'x'.repeat(5000)]) {
      for (const method of ['POST', 'GET', 'DELETE']) {
        const res = await deliver(`${stack.webhookFunctionUrl}${path}`, '{}', {}, method);
        expect(res.status, `${method} /${path.slice(0, 40)}`).toBe(404);
        expect(res.json).toEqual(unknown.json);
      }
    }
  });

  it('a URL-signing sender (Twilio) is checked against the door it came through: a signature for one door fails at the other', async () => {
    const token = await stack.token('fn-url-twilio');
    const trigger = await createTrigger(stack, token, { flow: 'echo', signature: { service: 'twilio', secret: TWILIO_TOKEN } });
    const apiUrl = `${stack.webhookBaseUrl}/${trigger.webhook_id}`;
    const body = 'Body=hello&From=%2B15550100';
    const signedFor = (url: string) => signTwilio({ authToken: TWILIO_TOKEN, url, body, contentType: FORM }).headers;

    expect((await deliver(trigger.url, body, signedFor(trigger.url))).status).toBe(200);
    expect((await deliver(apiUrl, body, signedFor(apiUrl))).status).toBe(200);
    expect((await deliver(trigger.url, body, signedFor(apiUrl))).status).toBe(401);
    expect((await deliver(apiUrl, body, signedFor(trigger.url))).status).toBe(401);
    // Signed for the URL a Host header names: the caller writes Host, so it is never what is checked.
    const forged = trigger.url.replace('127.0.0.1', 'attacker.example');
    expect((await deliver(trigger.url, body, { ...signedFor(forged), host: new URL(forged).host })).status).toBe(401);
  });
});

it('without the function URL (context webhookFunctionUrl false, or a custom domain), trigger URLs are the API route\'s', async () => {
  const apiOnly = await startLocalStack({ port: 0, flowsDir: TEST_FLOWS_DIR, webhookFunctionUrl: false });
  try {
    expect(apiOnly.webhookFunctionUrl).toBe('');
    const trigger = await createTrigger(apiOnly, await apiOnly.token('api-only'), { flow: 'echo' });
    expect(trigger.url).toBe(`${apiOnly.webhookBaseUrl}/${trigger.webhook_id}`);
    expect((await deliver(trigger.url, '{}')).status).toBe(200);
  } finally {
    await apiOnly.stop();
  }
});

it('a refusal\'s log line names the address it came from at the function URL, which has no access log; at the API\'s route the access log does', async () => {
  const token = await stack.token('fn-url-refusals');
  const trigger = await createTrigger(stack, token, { flow: 'echo', signature: { service: 'twilio', secret: TWILIO_TOKEN } });
  const linesOf = () => stack.writtenMetricLines().map(({ line }) => JSON.parse(line) as Record<string, unknown>).filter((line) => line.trigger === trigger.id);
  expect((await deliver(trigger.url, 'Body=x', { 'content-type': FORM })).status).toBe(401);
  expect((await deliver(`${stack.webhookBaseUrl}/${trigger.webhook_id}`, 'Body=x', { 'content-type': FORM })).status).toBe(401);
  for (const deadline = Date.now() + 10_000; linesOf().length < 2 && Date.now() < deadline;) await new Promise((resolve) => setTimeout(resolve, 20));
  const [viaUrl, viaApi] = linesOf();
  expect(viaUrl).toMatchObject({ reason: 'invalid_signature', sourceIp: '127.0.0.1' });
  expect(viaApi).toMatchObject({ reason: 'invalid_signature' });
  expect(viaApi).not.toHaveProperty('sourceIp');
});

it('a request HTTP cannot parse, at the function URL, is answered in the service\'s error shape, as at the API', async () => {
  const { port } = new URL(stack.webhookFunctionUrl);
  const raw = (bytes: string) => new Promise<string>((done, fail) => {
    const socket = connect(Number(port), '127.0.0.1', () => socket.end(bytes));
    let text = '';
    socket.on('data', (chunk) => (text += chunk.toString('latin1')));
    socket.on('end', () => done(text));
    socket.on('error', fail);
  });
  const malformed = await raw('POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: nope\r\n\r\n');
  expect(malformed).toMatch(/^HTTP\/1\.1 400 /);
  expect(JSON.parse(malformed.slice(malformed.indexOf('\r\n\r\n') + 4))).toMatchObject({ error: 'validation_error' });
  const tunnel = await raw('CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n');
  expect(tunnel).toMatch(/^HTTP\/1\.1 405 /);
});

it('the API\'s own routes are not on the function URL: it is the receiver\'s alone', async () => {
  const token = await stack.token('fn-url-api');
  expect((await call(stack, 'GET', '/triggers', { token })).status).toBe(200);
  const res = await fetch(`${stack.webhookFunctionUrl}triggers`, { headers: { authorization: `Bearer ${token}` } });
  expect(res.status).toBe(404);
});
