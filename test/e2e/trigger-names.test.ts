import { describe, expect, it } from 'vitest';
import { MAX_TRIGGER_DESCRIPTION_CHARACTERS, MAX_TRIGGER_NAME_CHARACTERS } from '../../functions/domain/triggers/trigger-requests.js';
import { call, useLocalStack } from '../support/local-stack.js';
import { createTrigger, TEST_FLOWS_DIR } from '../support/webhooks.js';

// Issue 43: four `echo` triggers must be told apart, so a trigger has a name and a description.
const stack = useLocalStack({ flowsDir: TEST_FLOWS_DIR });

describe('a trigger\'s name and description', () => {
  it('are set on create, returned by every trigger route, and changed by PATCH', async () => {
    const token = await stack.token('names-owner');
    const created = await createTrigger(stack, token, { flow: 'echo', name: 'GitHub pushes', description: 'main repo\nproduction' });
    expect(created).toMatchObject({ name: 'GitHub pushes', name_is_default: false, description: 'main repo\nproduction', flow: 'echo' });
    expect((await call(stack, 'GET', `/triggers/${created.id}`, { token })).json.data).toMatchObject({ name: 'GitHub pushes', description: 'main repo\nproduction' });
    const listed = (await call(stack, 'GET', '/triggers', { token })).json.data.triggers;
    expect(listed.find((t: { id: string }) => t.id === created.id)).toMatchObject({ name: 'GitHub pushes' });

    const patched = await call(stack, 'PATCH', `/triggers/${created.id}`, { token, body: { name: 'Stripe invoices', description: null } });
    expect(patched.status).toBe(200);
    expect(patched.json.data).toMatchObject({ name: 'Stripe invoices', name_is_default: false, description: null });
    expect((await call(stack, 'GET', `/triggers/${created.id}`, { token })).json.data).toMatchObject({ name: 'Stripe invoices', description: null });
  });

  it('without a name (as every trigger created before names), the flow\'s name is shown and follows the flow', async () => {
    const token = await stack.token('names-default');
    const created = await createTrigger(stack, token, { flow: 'echo' });
    expect(created).toMatchObject({ name: 'echo', name_is_default: true, description: null });
    const patched = await call(stack, 'PATCH', `/triggers/${created.id}`, { token, body: { flow: 'notify' } });
    expect(patched.json.data).toMatchObject({ name: 'notify', name_is_default: true });
    const named = await call(stack, 'PATCH', `/triggers/${created.id}`, { token, body: { name: 'mine' } });
    expect(named.json.data).toMatchObject({ name: 'mine', name_is_default: false });
    const cleared = await call(stack, 'PATCH', `/triggers/${created.id}`, { token, body: { name: null } });
    expect(cleared.json.data).toMatchObject({ name: 'notify', name_is_default: true });
  });

  it.each([
    ['an empty name', { name: '' }, 'name:'],
    ['a blank name', { name: '   ' }, 'name:'],
    ['a name over the limit', { name: 'x'.repeat(MAX_TRIGGER_NAME_CHARACTERS + 1) }, 'name:'],
    ['a name with a line break', { name: 'a\nb' }, 'name:'],
    ['a name that is not a string', { name: 7 }, 'name'],
    ['a description over the limit', { description: 'x'.repeat(MAX_TRIGGER_DESCRIPTION_CHARACTERS + 1) }, 'description'],
    ['a description with a control character', { description: 'a\u0007b' }, 'description:'],
  ])('%s is 400 naming the field, on create and on PATCH, and changes nothing', async (_what, body, named) => {
    const token = await stack.token('names-bad');
    const create = await call(stack, 'POST', '/triggers', { token, body: { flow: 'echo', ...body } });
    expect(create.status).toBe(400);
    expect(create.json.error).toBe('validation_error');
    expect(create.json.message).toContain(named);
    const trigger = await createTrigger(stack, token, { flow: 'echo', name: 'kept' });
    const patch = await call(stack, 'PATCH', `/triggers/${trigger.id}`, { token, body });
    expect(patch.status).toBe(400);
    expect(patch.json.message).toContain(named);
    expect((await call(stack, 'GET', `/triggers/${trigger.id}`, { token })).json.data.name).toBe('kept');
  });

  it('the longest name and description are taken', async () => {
    const token = await stack.token('names-long');
    const name = 'n'.repeat(MAX_TRIGGER_NAME_CHARACTERS);
    const description = 'd'.repeat(MAX_TRIGGER_DESCRIPTION_CHARACTERS);
    expect(await createTrigger(stack, token, { flow: 'echo', name, description })).toMatchObject({ name, description });
  });
});
