// Filters and deduplication over HTTP on each sender's own event type and delivery id, read from
// its catalog row: deliveries shaped as the senders' docs show them, signed as the senders sign.
import { createHmac, generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { useLocalStack } from '../support/local-stack.js';
import { signStandardWebhooks } from '../support/signers.js';
import { createTrigger, deliver, TEST_FLOWS_DIR, waitForExecutions } from '../support/webhooks.js';

const stack = useLocalStack({ flowsDir: TEST_FLOWS_DIR });

const nowSeconds = () => Math.floor(Date.now() / 1000);
const hmacHex = (secret: string, content: string) => createHmac('sha256', secret).update(content).digest('hex');
const statuses = (executions: { status: string }[]) => executions.map((e) => e.status).sort();

/** Creates a filtered trigger for `service`, sends each delivery, and returns what each was answered and the settled executions. */
async function filtered(owner: string, service: string, secret: string, filter: string[], deliveries: { body: string; headers: Record<string, string> }[]) {
  const token = await stack.token(owner);
  const trigger = await createTrigger(stack, token, { flow: 'echo', event_filter: filter, signature: { service, secret } });
  const answers = [];
  for (const { body, headers } of deliveries) answers.push((await deliver(trigger.url, body, headers)).json);
  const executions = await waitForExecutions(stack, token, trigger.id, (list) => list.length === deliveries.length && list.every((e) => e.status !== 'queued' && e.status !== 'running'));
  return { answers, executions };
}

describe('an event filter matches the sender\'s own event type', () => {
  it('gitlab: a filter on "Push Hook" runs the flow for a push and ignores a merge request', async () => {
    const secret = 'gitlab-e2e-token';
    const send = (event: string, kind: string, key: string) => ({
      body: JSON.stringify({ object_kind: kind, event_name: kind, project: { id: 15 } }),
      headers: { 'x-gitlab-token': secret, 'x-gitlab-event': event, 'idempotency-key': key },
    });
    const { answers, executions } = await filtered('events-gitlab', 'gitlab', secret, ['Push Hook'], [send('Push Hook', 'push', 'gl-1'), send('Merge Request Hook', 'merge_request', 'gl-2')]);
    expect(answers).toEqual([{ status: 'accepted', event_id: 'gl-1' }, { status: 'ignored' }]);
    expect(statuses(executions)).toEqual(['ignored', 'succeeded']);
    expect(executions.find((e) => e.status === 'succeeded')).toMatchObject({ type: 'Push Hook', event_id: 'gl-1' });
    expect(executions.find((e) => e.status === 'ignored')).toMatchObject({ type: 'Merge Request Hook', event_id: 'gl-2' });
  });

  it('twitch: a filter on channel.follow runs the flow for a follow and ignores a ban', async () => {
    const secret = 'twitch-e2e-secret';
    const send = (type: string, messageId: string) => {
      const body = JSON.stringify({ subscription: { id: 'sub-1', type, version: '1' }, event: { user_id: '1337', broadcaster_user_id: '42' } });
      const timestamp = new Date().toISOString();
      return {
        body,
        headers: {
          'twitch-eventsub-message-id': messageId, 'twitch-eventsub-message-timestamp': timestamp, 'twitch-eventsub-message-type': 'notification',
          'twitch-eventsub-subscription-type': type, 'twitch-eventsub-message-signature': `sha256=${hmacHex(secret, messageId + timestamp + body)}`,
        },
      };
    };
    const { answers, executions } = await filtered('events-twitch', 'twitch', secret, ['channel.follow'], [send('channel.follow', 'tw-1'), send('channel.ban', 'tw-2')]);
    expect(answers).toEqual([{ status: 'accepted', event_id: 'tw-1' }, { status: 'ignored' }]);
    expect(statuses(executions)).toEqual(['ignored', 'succeeded']);
    expect(executions.find((e) => e.status === 'succeeded').type).toBe('channel.follow');
  });

  it('zoom: a filter on meeting.started runs the flow for a start and ignores an end', async () => {
    const secret = 'zoom-e2e-secret-token';
    const send = (event: string) => {
      const body = JSON.stringify({ event, event_ts: Date.now(), payload: { account_id: 'A1', object: { id: '1234567890' } } });
      const timestamp = String(nowSeconds());
      return { body, headers: { 'x-zm-request-timestamp': timestamp, 'x-zm-signature': `v0=${hmacHex(secret, `v0:${timestamp}:${body}`)}` } };
    };
    const { answers, executions } = await filtered('events-zoom', 'zoom', secret, ['meeting.started'], [send('meeting.started'), send('meeting.ended')]);
    expect(answers[0]).toMatchObject({ status: 'accepted' });
    expect(answers[1]).toEqual({ status: 'ignored' });
    expect(statuses(executions)).toEqual(['ignored', 'succeeded']);
    expect(executions.find((e) => e.status === 'ignored').type).toBe('meeting.ended');
  });

  it('paddle: a filter on transaction.completed runs the flow for one and ignores a subscription.canceled', async () => {
    const secret = 'pdl_ntfset_01e2e_secret';
    const send = (eventType: string, eventId: string) => {
      const body = JSON.stringify({ event_id: eventId, event_type: eventType, occurred_at: new Date().toISOString(), notification_id: `ntf_${eventId}`, data: { id: 'txn_1' } });
      const timestamp = String(nowSeconds());
      return { body, headers: { 'paddle-signature': `ts=${timestamp};h1=${hmacHex(secret, `${timestamp}:${body}`)}` } };
    };
    const { answers, executions } = await filtered('events-paddle', 'paddle', secret, ['transaction.completed'], [send('transaction.completed', 'evt_p1'), send('subscription.canceled', 'evt_p2')]);
    expect(answers).toEqual([{ status: 'accepted', event_id: 'evt_p1' }, { status: 'ignored' }]);
    expect(statuses(executions)).toEqual(['ignored', 'succeeded']);
  });
});

describe('deduplication on the sender\'s own delivery id', () => {
  for (const service of ['resend', 'clerk']) {
    it(`${service}: a retry with the same svix-id, signed anew a second later, runs the flow once`, async () => {
      const secret = `whsec_${randomBytes(24).toString('base64')}`;
      const token = await stack.token(`events-${service}`);
      const trigger = await createTrigger(stack, token, { flow: 'echo', deduplicate: true, signature: { service, secret } });
      const body = JSON.stringify({ type: 'user.created', created_at: new Date().toISOString(), data: { id: 'user_1' } });
      const svixHeaders = (timestamp: number) => Object.fromEntries(Object.entries(signStandardWebhooks({ secret, id: 'msg_retried_1', timestamp, body }))
        .map(([name, value]) => [name.replace(/^webhook-/, 'svix-'), value]));
      const t = nowSeconds();
      expect((await deliver(trigger.url, body, svixHeaders(t - 1))).json).toEqual({ status: 'accepted', event_id: 'msg_retried_1' });
      expect((await deliver(trigger.url, body, svixHeaders(t))).json).toEqual({ status: 'duplicate' });
      const executions = await waitForExecutions(stack, token, trigger.id, (list) => list.length === 2 && list.some((e) => e.status === 'succeeded'));
      expect(statuses(executions)).toEqual(['duplicate', 'succeeded']);
      expect(executions.every((e) => e.event_id === 'msg_retried_1' && e.type === 'user.created')).toBe(true);
    });
  }
});

describe('discord: Webhook Events run the flow; Interactions\' PING is still answered PONG', () => {
  it('a signed Webhook Event ({"type": 1, "event": …}) runs the flow with its event.type, filtered; an Interactions PING gets PONG and runs nothing', async () => {
    const { publicKey, privateKey } = generateKeyPairSync('ed25519');
    const hexKey = (publicKey.export({ format: 'der', type: 'spki' }) as Buffer).subarray(-32).toString('hex');
    const signed = (body: string) => {
      const timestamp = String(nowSeconds());
      return { 'x-signature-timestamp': timestamp, 'x-signature-ed25519': sign(null, Buffer.from(timestamp + body), privateKey).toString('hex') };
    };
    const event = (type: string) => JSON.stringify({
      version: 1, application_id: '1234567765431', type: 1,
      event: { type, timestamp: new Date().toISOString(), data: { integration_type: 0, scopes: ['applications.commands'], user: { id: '53908232999183680', username: 'mason' } } },
    });
    const ping = JSON.stringify({ type: 1, id: '786008729715212338', application_id: '1234567765431', token: 'A_UNIQUE_TOKEN', version: 1 });
    const token = await stack.token('events-discord');
    const trigger = await createTrigger(stack, token, { flow: 'echo', event_filter: ['APPLICATION_AUTHORIZED'], signature: { service: 'discord', secret: hexKey } });
    const authorized = await deliver(trigger.url, event('APPLICATION_AUTHORIZED'), signed(event('APPLICATION_AUTHORIZED')));
    expect(authorized.json).toMatchObject({ status: 'accepted' });
    const other = event('ENTITLEMENT_CREATE');
    expect((await deliver(trigger.url, other, signed(other))).json).toEqual({ status: 'ignored' });
    const pong = await deliver(trigger.url, ping, signed(ping));
    expect(pong.json).toEqual({ type: 1 });
    const executions = await waitForExecutions(stack, token, trigger.id, (list) => list.length === 3 && list.every((e) => e.status !== 'queued' && e.status !== 'running'));
    expect(executions.map((e) => [e.status, e.type]).sort()).toEqual([['handshake', 'discord_ping'], ['ignored', 'ENTITLEMENT_CREATE'], ['succeeded', 'APPLICATION_AUTHORIZED']]);
  });
});
