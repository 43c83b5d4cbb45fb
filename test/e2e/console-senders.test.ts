/**
 * The console's trigger form over the sender catalog, in a real browser on the local stack: the
 * picker is `GET /signature-services` grouped by category, with each sender's docs link and what
 * to paste; the API's own words about a bad secret; `custom`'s assembled-content HMAC pasted as
 * JSON; a fixed answer (`acknowledge_response`); and a delivery's shaped reply.
 */
import { createHmac } from 'node:crypto';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import type { SignatureServiceCatalog } from '../../functions/domain/webhooks/senders/listing-types.js';
import { newSignedTrigger, seriousA11yViolations, useBrowser, signIntoConsole } from '../support/browser.js';
import { call, useLocalStack } from '../support/local-stack.js';
import { createTrigger, deliver, TEST_FLOWS_DIR, waitForExecutions } from '../support/webhooks.js';

describe('the trigger form over the sender catalog', () => {
  // The receiver reads each trigger afresh, so a delivery right after an edit sees it.
  const stack = useLocalStack({ flowsDir: TEST_FLOWS_DIR, env: { TRIGGER_CACHE_TTL_MS: '0' } });
  const browser = useBrowser();

  const signIn = (sub: string): Promise<Page> => signIntoConsole(browser.page, stack, sub);

  const signedTriggerForm = async (sub: string): Promise<Page> => newSignedTrigger(await signIn(sub));

  const formAlert = (page: Page) => page.getByRole('form', { name: 'New trigger' }).getByRole('alert');

  it('the picker shows the catalog\'s senders grouped by category, Zoom under Productivity with its docs link and secret label, and the senders left out as a note', async () => {
    const token = await stack.token('picker-user');
    const catalog = (await call(stack, 'GET', '/signature-services', { token })).json.data as SignatureServiceCatalog;
    const page = await signedTriggerForm('picker-user');
    const service = page.getByLabel('Service');

    // One group a category, in the order the catalog's senders come; each sender once, by name.
    const categories = [...new Set(catalog.services.map((s) => s.category))];
    const groups = await service.locator('optgroup').evaluateAll((nodes) => nodes.map((n) => (n as unknown as { label: string }).label));
    expect(groups.map((g) => g.toLowerCase())).toEqual(categories);
    const options = await service.locator('option').evaluateAll((nodes) => nodes.map((n) => (n as unknown as { value: string }).value));
    expect(options).toEqual(categories.flatMap((c) => catalog.services.filter((s) => s.category === c).map((s) => s.id)));

    const zoom = catalog.services.find((s) => s.id === 'zoom')!;
    const zoomOption = service.locator('optgroup[label="Productivity"] > option[value="zoom"]');
    await expect(zoomOption.textContent()).resolves.toBe('Zoom');
    await service.selectOption('zoom');
    const docs = page.getByRole('link', { name: 'How Zoom signs' });
    await expect(docs.getAttribute('href')).resolves.toBe(zoom.docs_url);
    await expect(docs.getAttribute('target')).resolves.toBe('_blank');
    await expect(docs.getAttribute('rel')).resolves.toBe('noopener noreferrer');
    // What to paste describes the secret field, for screen readers too.
    const secret = page.getByLabel('Signing secret');
    const hintId = (await secret.getAttribute('aria-describedby'))!;
    await expect(page.locator(`#${hintId}`).textContent()).resolves.toContain(zoom.secret_label);
    // Changing the sender changes both.
    await service.selectOption('discord');
    await page.getByRole('link', { name: 'How Discord signs' }).waitFor();
    await expect(page.locator(`#${hintId}`).textContent()).resolves.toContain(catalog.services.find((s) => s.id === 'discord')!.secret_label);

    // A sender left out cannot be picked, and says why.
    expect(catalog.left_out.length).toBeGreaterThan(0);
    for (const left of catalog.left_out) await expect(service.locator(`option[value="${left.id}"]`).count()).resolves.toBe(0);
    const note = page.getByText(/^Not verifiable here: /);
    await note.click();
    for (const left of catalog.left_out) await page.getByText(left.reason).waitFor();
    expect(await seriousA11yViolations(page)).toEqual([]);
  });

  it('creating a Discord trigger with a key that is not one shows the API\'s own message beside the form, and creates nothing', async () => {
    const token = await stack.token('discord-user');
    const page = await signedTriggerForm('discord-user');
    await page.getByLabel('Service').selectOption('discord');
    await page.getByLabel('Signing secret').fill('not-a-hex-key');
    await page.getByRole('button', { name: 'Create' }).click();
    await expect.poll(() => formAlert(page).textContent()).toMatch(/did not accept these settings/);
    // The words are the API's, field and all.
    const refused = await call(stack, 'POST', '/triggers', { token, body: { flow: 'echo', signature: { service: 'discord', secret: 'not-a-hex-key' } } });
    expect(refused.json.message).toMatch(/^signature\.secret: /);
    await expect(formAlert(page).textContent()).resolves.toContain(refused.json.message);
    expect(await seriousA11yViolations(page)).toEqual([]);
    expect((await call(stack, 'GET', '/triggers', { token })).json.data.triggers).toEqual([]);
  });

  it('custom takes the assembled-content HMAC pasted as JSON: a syntax error is shown and nothing is sent; valid settings verify deliveries', async () => {
    const token = await stack.token('custom-json-user');
    const page = await signedTriggerForm('custom-json-user');
    const posts: string[] = [];
    page.on('request', (request) => request.method() === 'POST' && new URL(request.url()).pathname === '/triggers' && posts.push(request.url()));
    await page.getByLabel('Service').selectOption('custom');
    await page.getByLabel('Signing secret').fill('json-secret');
    await page.getByLabel('Assembled-content HMAC, pasted as JSON').check();
    expect(await page.getByLabel('Signature header').isVisible()).toBe(false);
    const json = page.getByLabel('HMAC settings (JSON)');
    await json.fill('{"algorithm": "sha256", "key": {"format": "text"},');
    expect(await seriousA11yViolations(page)).toEqual([]);
    await page.getByRole('button', { name: 'Create' }).click();
    await expect.poll(() => formAlert(page).textContent()).toMatch(/^The HMAC settings are not valid JSON: .+Nothing was sent\.$/);
    await expect(json.getAttribute('aria-invalid')).resolves.toBe('true');
    expect(posts).toEqual([]);

    // The method, a dot and the body, signed with SHA-256 into a base64 header with a prefix.
    const custom = {
      algorithm: 'sha256', key: { format: 'text' }, content: [{ part: 'method' }, { part: 'literal', text: '.' }, { part: 'body' }],
      signature: { from: 'header', name: 'x-acme-signature', prefix: 'v1=' }, encoding: 'base64',
    };
    await json.fill(JSON.stringify(custom, null, 2));
    await page.getByRole('button', { name: 'Create' }).click();
    await page.getByText('Trigger for echo created.').waitFor();
    expect(posts).toHaveLength(1);
    const [trigger] = (await call(stack, 'GET', '/triggers', { token })).json.data.triggers;
    expect(trigger.signature).toMatchObject({ service: 'custom', custom });
    const body = '{"type":"order.placed"}';
    const signed = (secret: string) => ({ 'x-acme-signature': `v1=${createHmac('sha256', secret).update(`POST.${body}`).digest('base64')}` });
    expect((await deliver(trigger.url, body, signed('json-secret'))).status).toBe(200);
    expect((await deliver(trigger.url, body, signed('another-secret'))).status).toBe(401);

    // Edited, the form shows the pasted kind with its settings, and saving leaves them (and the secret) as they are.
    await page.getByRole('row').filter({ hasText: 'echo' }).getByRole('button', { name: 'Edit' }).click();
    const form = page.getByRole('form', { name: 'Edit the echo trigger' });
    await expect(form.getByLabel('Assembled-content HMAC, pasted as JSON').isChecked()).resolves.toBe(true);
    await expect(form.getByLabel('HMAC settings (JSON)').inputValue().then((text) => JSON.parse(text))).resolves.toMatchObject(custom);
    await form.getByLabel('Response mode').selectOption('wait');
    await form.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Trigger for echo changed.').waitFor();
    const saved = (await call(stack, 'GET', `/triggers/${trigger.id}`, { token })).json.data;
    expect(saved).toMatchObject({ response_mode: 'wait', signature: { service: 'custom', custom } });
    expect((await deliver(trigger.url, body, signed('json-secret'))).status).toBe(200);
  });

  it('a fixed answer [accepted] is shown with the trigger and is what a delivery gets; turned off, deliveries get the JSON answer again', async () => {
    const token = await stack.token('fixed-user');
    const page = await signIn('fixed-user');
    await page.getByRole('button', { name: 'New trigger' }).click();
    await page.getByRole('option', { name: 'echo', exact: true }).waitFor({ state: 'attached' });
    await page.getByLabel('Flow').selectOption('echo');
    // Off by default: its fields are hidden and nothing but null is sent.
    expect(await page.getByLabel('Status code').isVisible()).toBe(false);
    await page.getByLabel('Send a fixed answer').check();
    await page.getByLabel('Status code').fill('200');
    await page.getByLabel('Content type').fill('text/plain');
    await page.getByLabel('Body', { exact: true }).fill('[accepted]');
    expect(await seriousA11yViolations(page)).toEqual([]);
    await page.getByRole('button', { name: 'Create' }).click();

    const row = page.getByRole('row').filter({ hasText: 'echo' });
    await row.getByText('Fixed answer: 200, text/plain, [accepted]').waitFor();
    const [trigger] = (await call(stack, 'GET', '/triggers', { token })).json.data.triggers;
    expect(trigger.acknowledge_response).toEqual({ status_code: 200, content_type: 'text/plain', body: '[accepted]' });
    const delivered = await deliver(trigger.url, JSON.stringify({ id: 'evt_fixed', type: 'payment.authorised' }));
    expect(delivered.status).toBe(200);
    expect(delivered.headers.get('content-type')).toBe('text/plain');
    expect(delivered.text).toBe('[accepted]');
    expect(await seriousA11yViolations(page)).toEqual([]);

    // The trigger's deliveries page says so too.
    await row.getByRole('link', { name: 'Deliveries' }).click();
    await page.getByText('Fixed answer: 200, text/plain, [accepted].').waitFor();
    await page.getByRole('link', { name: 'All triggers' }).click();

    await page.getByRole('row').filter({ hasText: 'echo' }).getByRole('button', { name: 'Edit' }).click();
    const form = page.getByRole('form', { name: 'Edit the echo trigger' });
    await expect(form.getByLabel('Send a fixed answer').isChecked()).resolves.toBe(true);
    await expect(form.getByLabel('Body', { exact: true }).inputValue()).resolves.toBe('[accepted]');
    await form.getByLabel('Send a fixed answer').uncheck();
    await form.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Trigger for echo changed.').waitFor();
    expect((await call(stack, 'GET', `/triggers/${trigger.id}`, { token })).json.data.acknowledge_response).toBeNull();
    const plain = await deliver(trigger.url, JSON.stringify({ id: 'evt_plain', type: 'payment.authorised' }));
    expect(plain.json).toMatchObject({ status: 'accepted', event_id: 'evt_plain' });
  });

  it('a delivery whose flow shaped its reply shows what the sender was answered', async () => {
    const token = await stack.token('reply-user');
    const trigger = await createTrigger(stack, token, { flow: 'answers-as-told', response_mode: 'wait' });
    const reply = { statusCode: 200, headers: { 'content-type': 'text/xml' }, body: '<Response/>' };
    const answered = await deliver(trigger.url, JSON.stringify({ id: 'evt_reply', type: 'sms.received', reply }));
    expect(answered.status).toBe(200);
    expect(answered.text).toBe('<Response/>');
    await waitForExecutions(stack, token, trigger.id, (executions) => executions[0]?.reply !== undefined);

    const page = await signIn('reply-user');
    await page.getByRole('row').filter({ hasText: 'answers-as-told' }).getByRole('link', { name: 'Deliveries' }).click();
    await page.getByRole('link', { name: /Delivery evt_reply/ }).click();
    await page.getByRole('heading', { name: 'Delivery evt_reply', level: 1 }).waitFor();
    await page.getByRole('region', { name: 'Outcome' }).getByText('Answered 200, text/xml, 11 bytes').waitFor();
    expect(await seriousA11yViolations(page)).toEqual([]);
  });

  it('a Notion trigger\'s verification token is shown once, on its deliveries page, after the handshake', async () => {
    const token = await stack.token('notion-user');
    const trigger = await createTrigger(stack, token, { flow: 'echo', signature: { service: 'notion' } });
    const verificationToken = 'secret_consoleNotionVerification0123456789';
    expect((await deliver(trigger.url, JSON.stringify({ verification_token: verificationToken }))).status).toBe(200);

    const page = await signIn('notion-user');
    await page.getByRole('row').filter({ hasText: trigger.url as string }).getByRole('link', { name: 'Deliveries' }).click();
    await page.getByRole('status').filter({ hasText: 'shown this once' }).getByText(verificationToken).waitFor();
    expect(await seriousA11yViolations(page)).toEqual([]);
    await page.reload();
    await page.getByRole('heading', { name: 'Deliveries', level: 1 }).waitFor();
    await page.getByText('Deliveries are kept 7 days').waitFor();
    expect(await page.getByText(verificationToken).count()).toBe(0);
  });
});
