import { describe, expect, it } from 'vitest';
import { call, useLocalStack } from '../support/local-stack.js';
import { createTrigger, deliver } from '../support/webhooks.js';

/** Two local stacks in one process, each with settings of its own: nothing is shared through process.env. */
const first = useLocalStack({ env: { WEBHOOK_MAX_BODY_BYTES: '100' } });
const second = useLocalStack({ env: { WEBHOOK_MAX_BODY_BYTES: '5000' } });

describe('two local stacks in one process', () => {
  it('both serve, each on its own port', async () => {
    expect(first.baseUrl).not.toBe(second.baseUrl);
    for (const stack of [first, second]) expect((await call(stack, 'GET', '/health')).json).toEqual({ status: 'ok', backlog: { waiting: 0, oldest_age_seconds: null } });
  });

  it('each keeps its own data, tokens and settings', async () => {
    const token = await first.token('owner');
    const trigger = await createTrigger(first, token, { flow: 'echo' });
    // The second stack signs tokens with its own secret and has its own tables.
    expect((await call(second, 'GET', `/triggers/${trigger.id}`, { token })).status).toBe(401);
    expect((await call(second, 'GET', `/triggers/${trigger.id}`, { token: await second.token('owner') })).status).toBe(404);
    expect((await deliver(`${second.webhookBaseUrl}/${trigger.webhook_id}`, '{}')).status).toBe(404);
    // Each receiver applies its own body limit.
    const body = JSON.stringify({ id: 'evt_1', pad: 'x'.repeat(200) });
    expect((await deliver(trigger.url, body)).status).toBe(413);
    const other = await createTrigger(second, await second.token('owner'), { flow: 'echo' });
    expect((await deliver(other.url, body)).json).toEqual({ status: 'accepted', event_id: 'evt_1' });
  });
});
