import { createHmac, generateKeyPairSync, sign } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { call, useLocalStack } from '../support/local-stack.js';
import { createTrigger, deliver, waitForExecutions } from '../support/webhooks.js';

/**
 * The receiver's edges an outside review forged requests against (issue 30), over HTTP on one
 * local stack: X's CRC answer as a signing oracle, what every receiver answer carries, the fixed
 * answer's content types, and the senders whose signed content left a replay or a forgery open.
 */
const stack = useLocalStack();

describe("x: the CRC answer never signs a delivery", () => {
  const secret = 'x-consumer-secret-edges';
  const xTrigger = async () => {
    const token = await stack.token('edges-x');
    return { token, trigger: await createTrigger(stack, token, { flow: 'echo', signature: { service: 'x', secret } }) };
  };

  /**
   * The attack: ask the CRC handshake to sign `body`, then post `body` with its answer as the
   * delivery's signature (none when the handshake did not answer).
   */
  async function forge(url: string, body: string, contentType: string) {
    const crc = await fetch(`${url}?crc_token=${encodeURIComponent(body)}`);
    const answer = crc.status === 200 ? ((await crc.json()) as { response_token: string }).response_token : undefined;
    const posted = await deliver(url, body, { 'content-type': contentType, ...(answer && { 'x-twitter-webhooks-signature': answer }) });
    return { crcStatus: crc.status, answered: answer !== undefined, status: posted.status, error: posted.json?.error };
  }

  it('a GET whose crc_token is a JSON body or a form body is not answered, so the forged delivery is 401', async () => {
    const { token, trigger } = await xTrigger();
    const json = await forge(trigger.url, JSON.stringify({ for_user_id: '2244994945', tweet_create_events: [{ text: 'forged' }] }), 'application/json');
    expect(json).toMatchObject({ crcStatus: 405, answered: false, status: 401 });
    const form = await forge(trigger.url, 'text=forged&user=1', 'application/x-www-form-urlencoded');
    expect(form).toMatchObject({ crcStatus: 405, answered: false, status: 401 });
    const onePair = await forge(trigger.url, 'text=forged', 'application/x-www-form-urlencoded');
    expect(onePair).toMatchObject({ crcStatus: 405, answered: false, status: 401 });
    // Each unanswered GET (405) and each forged POST (401) is recorded as refused; no flow ran.
    const recorded = await waitForExecutions(stack, token, trigger.id, (list) => list.length === 6);
    expect(recorded.map((e) => e.error).sort()).toEqual([...Array(3).fill('invalid_signature'), ...Array(3).fill('method_not_allowed')]);
  });

  it('a token of X\'s shape is answered, but posted as a body with its answer it is refused: 415 as a form, 400 as JSON that is no object', async () => {
    const { token, trigger } = await xTrigger();
    const asForm = await forge(trigger.url, 'bm90LWEtZGVsaXZlcnk', 'application/x-www-form-urlencoded');
    expect(asForm).toMatchObject({ crcStatus: 200, answered: true, status: 415, error: 'unsupported_media_type' });
    const asJsonNumber = await forge(trigger.url, '1234567890', 'application/json');
    expect(asJsonNumber).toMatchObject({ crcStatus: 200, answered: true, status: 400, error: 'validation_error' });
    const asText = await forge(trigger.url, 'bm90LWEtZGVsaXZlcnk', 'text/plain');
    expect(asText).toMatchObject({ crcStatus: 200, answered: true, status: 415 });
    const recorded = await waitForExecutions(stack, token, trigger.id, (list) => list.filter((e) => e.status === 'refused').length === 3);
    expect(recorded.filter((e) => e.status !== 'handshake' && e.status !== 'refused')).toEqual([]);
  });

  it('a CRC token of X\'s shape gets its answer, and a genuine X delivery (a signed JSON object) still runs the flow', async () => {
    const { token, trigger } = await xTrigger();
    const crcToken = 'aGVsbG8td29ybGQtY3JjLXRva2Vu+/_-==';
    const crc = await fetch(`${trigger.url}?crc_token=${encodeURIComponent(crcToken)}`);
    expect(crc.status).toBe(200);
    expect(await crc.json()).toEqual({ response_token: `sha256=${createHmac('sha256', secret).update(crcToken).digest('base64')}` });
    for (const refused of ['short12', 'x'.repeat(256), 'a{b"c"d}', 'with space', 'pad=ding']) {
      expect((await fetch(`${trigger.url}?crc_token=${encodeURIComponent(refused)}`)).status, refused).toBe(405);
    }
    const body = JSON.stringify({ for_user_id: '2244994945', tweet_create_events: [{ id_str: '1', text: 'hello' }] });
    const signature = `sha256=${createHmac('sha256', secret).update(body).digest('base64')}`;
    const res = await deliver(trigger.url, body, { 'content-type': 'application/json; charset=utf-8', 'x-twitter-webhooks-signature': signature });
    expect(res.status, res.text).toBe(200);
    await waitForExecutions(stack, token, trigger.id, (list) => list.some((e) => e.status === 'succeeded'));
  });
});

describe('the receiver\'s answers are never pages on the gateway\'s origin', () => {
  const CSP = "sandbox; default-src 'none'";
  const isolated = (res: { headers: Headers }) => [res.headers.get('content-security-policy'), res.headers.get('x-content-type-options')];

  it('every answer carries Content-Security-Policy: sandbox and nosniff: accepted, fixed, handshake, flow-shaped and refused alike', async () => {
    const token = await stack.token('edges-csp');
    const plain = await createTrigger(stack, token, { flow: 'echo' });
    const fixed = await createTrigger(stack, token, { flow: 'echo', acknowledge_response: { status_code: 200, content_type: 'text/plain', body: '[accepted]' } });
    const waiting = await createTrigger(stack, token, { flow: 'echo', response_mode: 'wait' });
    const answers = [
      await deliver(plain.url, JSON.stringify({ id: 'evt_csp' })),
      await deliver(fixed.url, JSON.stringify({ id: 'evt_csp_fixed' })),
      await deliver(plain.url, JSON.stringify({ type: 'url_verification', challenge: 'csp-challenge' })),
      await deliver(waiting.url, JSON.stringify({ statusCode: 200, headers: { 'content-type': 'text/html', 'content-security-policy': 'default-src *' }, body: '<script>1</script>' })),
      await deliver(plain.url, 'not json'),
      await deliver(plain.url, '{}', {}, 'PUT'),
      await deliver(`${plain.url.slice(0, -4)}zzzz`, '{}'),
    ];
    expect(answers.map((res) => res.status)).toEqual([200, 200, 200, 200, 400, 405, 404]);
    for (const res of answers) expect(isolated(res)).toEqual([CSP, 'nosniff']);
  });

  it.each([
    ['text/html', 'text/html'],
    ['HTML with parameters', 'text/html; charset=utf-8'],
    ['SVG', 'image/svg+xml'],
    ['XHTML', 'application/xhtml+xml'],
    ['JavaScript', 'application/javascript'],
  ])('an acknowledge_response of %s is 400 validation_error', async (_, content_type) => {
    const res = await call(stack, 'POST', '/triggers', { token: await stack.token('edges-ack'), body: { flow: 'echo', acknowledge_response: { status_code: 200, content_type, body: '<script>alert(1)</script>' } } });
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({ error: 'validation_error', message: expect.stringContaining('content_type') });
  });

  it('JSON, text/plain and XML fixed answers are accepted', async () => {
    const token = await stack.token('edges-ack');
    for (const content_type of ['application/json', 'application/vnd.api+json; charset=utf-8', 'text/plain; charset=utf-8', 'text/xml', 'application/xml']) {
      const res = await call(stack, 'POST', '/triggers', { token, body: { flow: 'echo', acknowledge_response: { status_code: 200, content_type, body: '' } } });
      expect(res.status, content_type).toBe(201);
    }
  });
});

describe('acknowledge_response as a user writes it', () => {
  it('{"status_code": 204} (and 205) needs no content_type and no body, and answers an empty 204', async () => {
    const token = await stack.token('edges-ack-204');
    const trigger = await createTrigger(stack, token, { flow: 'echo', acknowledge_response: { status_code: 204 } });
    expect(trigger.acknowledge_response).toEqual({ status_code: 204, body: '' });
    const res = await deliver(trigger.url, JSON.stringify({ type: 0, event: { type: 'APPLICATION_AUTHORIZED' } }));
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    const patched = await call(stack, 'PATCH', `/triggers/${trigger.id}`, { token, body: { acknowledge_response: { status_code: 205 } } });
    expect(patched.status).toBe(200);
    expect(patched.json.data.acknowledge_response).toEqual({ status_code: 205, body: '' });
  });

  it('an absent body is an empty one for every status; a 200 still needs its content_type', async () => {
    const token = await stack.token('edges-ack-200');
    const trigger = await createTrigger(stack, token, { flow: 'echo', acknowledge_response: { status_code: 200, content_type: 'text/plain' } });
    const res = await deliver(trigger.url, JSON.stringify({ id: 'evt_empty' }));
    expect(res.status).toBe(200);
    expect(res.text).toBe('');
    const refused = await call(stack, 'POST', '/triggers', { token, body: { flow: 'echo', acknowledge_response: { status_code: 200 } } });
    expect(refused.status).toBe(400);
    expect(refused.json.message).toMatch(/content_type/);
  });
});

describe('custom signature settings must sign the body, and any timestamp they check', () => {
  const custom = (content: unknown[], timestamp?: unknown) => ({
    flow: 'echo',
    signature: { service: 'custom', secret: 'custom-edges-secret', custom: { algorithm: 'sha256', key: { format: 'text' }, content, signature: { from: 'header', name: 'x-sig' }, encoding: 'hex', ...(timestamp !== undefined && { timestamp }) } },
  });
  const headerTimestamp = { source: { from: 'header', name: 'x-ts' }, format: 'unix_seconds', tolerance_seconds: 300 };

  it.each([
    ['[method]', [{ part: 'method' }], undefined, 'signature.custom.content'],
    ['[url]', [{ part: 'url' }], undefined, 'signature.custom.content'],
    ['a header alone', [{ part: 'header', name: 'x-delivery' }], undefined, 'signature.custom.content'],
    ['method, url and timestamp', [{ part: 'method' }, { part: 'url' }, { part: 'timestamp' }], headerTimestamp, 'signature.custom.content'],
    ['a timestamp rule over content without it', [{ part: 'body' }], headerTimestamp, 'signature.custom.timestamp.source'],
    ['a timestamp read from an unsigned header', [{ part: 'header', name: 'x-other' }, { part: 'body' }], headerTimestamp, 'signature.custom.timestamp.source'],
  ])('%s is 400 validation_error naming the field', async (_, content, timestamp, field) => {
    const res = await call(stack, 'POST', '/triggers', { token: await stack.token('edges-custom'), body: custom(content, timestamp) });
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({ error: 'validation_error', message: expect.stringMatching(new RegExp(`^${field.replace(/\./g, '\\.')}: `)) });
  });

  it('settings that sign the body and their timestamp are accepted (a timestamp part, a signed header, a field of a signed body)', async () => {
    const token = await stack.token('edges-custom');
    const accepted = [
      custom([{ part: 'timestamp' }, { part: 'literal', text: '.' }, { part: 'body' }], headerTimestamp),
      custom([{ part: 'header', name: 'x-ts' }, { part: 'body' }], headerTimestamp),
      custom([{ part: 'body' }], { source: { from: 'json', path: ['sent_at'] }, format: 'unix_milliseconds', tolerance_seconds: 60 }),
      custom([{ part: 'method' }, { part: 'url' }, { part: 'json', path: ['data', 'id'] }]),
    ];
    for (const body of accepted) expect((await call(stack, 'POST', '/triggers', { token, body })).status, JSON.stringify(body.signature.custom.content)).toBe(201);
  });
});

describe('twitch: the unsigned message type cannot turn a captured verification into a notification', () => {
  const secret = 'twitch-edges-secret-0123';
  const signed = (body: string, type: string, id = 'c1a2b3d4-0000-4000-8000-000000000001') => {
    const ts = new Date().toISOString();
    return {
      'twitch-eventsub-message-id': id, 'twitch-eventsub-message-timestamp': ts, 'twitch-eventsub-message-type': type,
      'twitch-eventsub-message-signature': `sha256=${createHmac('sha256', secret).update(id + ts + body).digest('hex')}`,
    };
  };

  it('a verification body replayed as a notification is 400 and runs no flow; a notification with its event runs it', async () => {
    const token = await stack.token('edges-twitch');
    const trigger = await createTrigger(stack, token, { flow: 'echo', signature: { service: 'twitch', secret } });
    const verification = JSON.stringify({ challenge: 'captured-challenge', subscription: { id: 'sub_1', type: 'channel.follow' } });
    const replayed = await deliver(trigger.url, verification, signed(verification, 'notification'));
    expect(replayed.status).toBe(400);
    expect(replayed.json).toMatchObject({ error: 'validation_error' });
    const notification = JSON.stringify({ subscription: { id: 'sub_1', type: 'channel.follow' }, event: { user_id: '1337', user_login: 'viewer' } });
    expect((await deliver(trigger.url, notification, signed(notification, 'notification', 'c1a2b3d4-0000-4000-8000-000000000002'))).status).toBe(200);
    const recorded = await waitForExecutions(stack, token, trigger.id, (list) => list.length === 2 && list.some((e) => e.status === 'succeeded'));
    expect(recorded.map((e) => e.status).sort()).toEqual(['refused', 'succeeded']);
  });
});

describe('sendgrid: a signed timestamp stops verifying after 25 hours', () => {
  it('a capture 26 hours old or one dated 10 minutes ahead is 401; a retry 24 hours old still runs', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    const token = await stack.token('edges-sendgrid');
    const trigger = await createTrigger(stack, token, { flow: 'echo', signature: { service: 'sendgrid', secret: publicKey.export({ format: 'der', type: 'spki' }).toString('base64') } });
    const body = '[{"email":"example@test.com","timestamp":1513299569,"event":"processed","sg_message_id":"14c583da911.filter0001"}]\r\n';
    const sentAgo = (seconds: number) => {
      const timestamp = String(Math.floor(Date.now() / 1000) - seconds);
      return {
        'x-twilio-email-event-webhook-timestamp': timestamp,
        'x-twilio-email-event-webhook-signature': sign('sha256', Buffer.from(timestamp + body), privateKey).toString('base64'),
      };
    };
    expect((await deliver(trigger.url, body, sentAgo(26 * 3600))).status).toBe(401);
    expect((await deliver(trigger.url, body, sentAgo(-600))).status).toBe(401);
    expect((await deliver(trigger.url, body, sentAgo(24 * 3600))).status).toBe(200);
  });
});
