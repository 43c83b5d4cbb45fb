import { createHmac } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { pageErrors, seriousA11yViolations, useBrowser } from '../support/browser.js';
import { call, useLocalStack } from '../support/local-stack.js';
import { signStripe } from '../support/signers.js';

const SCREENSHOT = resolve(import.meta.dirname, '../../docs/console-triggers.png');

describe('the console in a browser', () => {
  const stack = useLocalStack();
  const browser = useBrowser();

  /** Opens the console as the link `npm start` prints does, and waits for the triggers page. */
  async function signInByLink(sub = 'console-user') {
    const { page } = browser;
    await page.goto(`${stack.baseUrl}/console#token=${await stack.token(sub)}`);
    await page.getByRole('heading', { name: 'Triggers', level: 1 }).waitFor();
    return page;
  }

  it('signs in from the printed link, keeps the token out of the address bar and shows no accessibility violation', async () => {
    // A Content-Security-Policy refusal or a script error shows up as a console error.
    const errors = pageErrors(browser.page);
    const page = await signInByLink();
    expect(page.url()).toBe(`${stack.baseUrl}/console`);
    await expect(page.getByRole('link', { name: 'Triggers' }).getAttribute('aria-current')).resolves.toBe('page');
    await page.getByText('No triggers yet.').waitFor();
    expect(await seriousA11yViolations(page)).toEqual([]);
    expect(errors).toEqual([]);
  });

  it('shows when and from where an Asana handshake handed its secret over, and "Reject and wait again" forgets it', async () => {
    const token = await stack.token('handover-user');
    const trigger = (await call(stack, 'POST', '/triggers', { token, body: { flow: 'echo', signature: { service: 'asana' } } })).json.data;
    expect((await fetch(trigger.url, { method: 'POST', headers: { 'x-hook-secret': 'console-handover-secret' } })).status).toBe(200);
    const page = await signInByLink('handover-user');
    const row = page.getByRole('row').filter({ hasText: 'echo' });
    await row.getByText(/Secret handed over by the handshake on .+ from .*127\.0\.0\.1/).waitFor();
    expect(await page.content()).not.toContain('console-handover-secret');
    await row.getByRole('button', { name: 'Reject and wait again' }).click();
    const dialog = page.getByRole('dialog', { name: 'Reject the handed-over secret?' });
    expect(await seriousA11yViolations(page)).toEqual([]);
    await dialog.getByRole('button', { name: 'Reject and wait again' }).click();
    await page.getByText(/The echo trigger awaits its sender's handshake until/).waitFor();
    await page.getByRole('row').filter({ hasText: 'echo' }).getByText(/Awaiting the sender's handshake until/).waitFor();
    const read = (await call(stack, 'GET', `/triggers/${trigger.id}`, { token })).json.data.signature;
    expect(read).toMatchObject({ handed_over_at: null, handed_over_source_ip: null });
    expect(Date.parse(read.handshake_awaited_until)).toBeGreaterThan(Date.now());
  });

  it('creates a Meta trigger from the form with its own verify token, a field only senders that need one show', async () => {
    const page = await signInByLink('meta-user');
    await page.getByRole('button', { name: 'New trigger' }).click();
    await page.getByLabel('Flow').selectOption('echo');
    await page.getByLabel('Enable signature verification').check();
    await page.getByLabel('Service').selectOption('stripe');
    expect(await page.getByLabel('Verify token').isVisible()).toBe(false);
    await page.getByLabel('Service').selectOption('meta');
    await page.getByLabel('Signing secret').fill('meta-app-secret');
    await page.getByLabel('Verify token').fill('my-meta-verify-token');
    expect(await seriousA11yViolations(page)).toEqual([]);
    await page.getByRole('button', { name: 'Create' }).click();
    await page.getByRole('row').filter({ hasText: 'echo' }).waitFor();
    const [trigger] = (await call(stack, 'GET', '/triggers', { token: await stack.token('meta-user') })).json.data.triggers;
    expect(trigger.signature).toMatchObject({ service: 'meta' });
    const subscribe = await fetch(`${trigger.url}?hub.mode=subscribe&hub.verify_token=my-meta-verify-token&hub.challenge=9`);
    expect(await subscribe.text()).toBe('9');
  });

  it('creates a Stripe-signed trigger from the form and lists it with its webhook URL', async () => {
    const page = await signInByLink('stripe-user');
    await page.getByRole('button', { name: 'New trigger' }).click();
    await page.getByLabel('Flow').selectOption('echo');
    await page.getByLabel('Response mode').selectOption('wait');
    await page.getByLabel('Event filter').fill('payment_intent.*');
    await page.getByLabel('Enable signature verification').check();
    await page.getByLabel('Service').selectOption('stripe');
    await page.getByLabel('Signing secret').fill('whsec_console_test');
    await page.getByLabel('Deduplicate').check();
    expect(await seriousA11yViolations(page)).toEqual([]);
    await page.getByRole('button', { name: 'Create' }).click();

    const row = page.getByRole('row').filter({ hasText: 'echo' });
    await expect(row.getByText(stack.webhookFunctionUrl).textContent()).resolves.toMatch(new RegExp(`^${stack.webhookFunctionUrl}`));
    await expect(row.textContent()).resolves.toContain("Wait for the flow's result");
    // The API holds exactly what the form said.
    const listed = await call(stack, 'GET', '/triggers', { token: await stack.token('stripe-user') });
    expect(listed.json.data.triggers).toMatchObject([
      { flow: 'echo', response_mode: 'wait', event_filter: ['payment_intent.*'], signature: { service: 'stripe' }, deduplicate: true, enabled: true },
    ]);
    mkdirSync(resolve(SCREENSHOT, '..'), { recursive: true });
    // The console guide's picture: retaken with UPDATE_SCREENSHOTS=1 npm test, so a plain run leaves the tree clean.
    if (process.env.UPDATE_SCREENSHOTS) await page.screenshot({ path: SCREENSHOT, fullPage: true });
  });

  it('shows an API key once, after creating a trigger secured with one', async () => {
    const page = await signInByLink('key-user');
    await page.getByRole('button', { name: 'New trigger' }).click();
    await page.getByLabel('Flow').selectOption('echo');
    await page.getByLabel('Secure with API key').check();
    await page.getByRole('button', { name: 'Create' }).click();
    await page.getByText('shown this once only').waitFor();
    await page.reload();
    await page.getByRole('row').filter({ hasText: 'echo' }).waitFor();
    expect(await page.getByText('shown this once only').count()).toBe(0);
  });

  it('says in words why a creation failed, and creates nothing', async () => {
    const page = await signInByLink('error-user');
    await page.getByRole('button', { name: 'New trigger' }).click();
    await page.getByLabel('Flow').selectOption('echo');
    await page.getByLabel('Enable signature verification').check();
    await page.getByLabel('Service').selectOption('standard_webhooks');
    await page.getByLabel('Signing secret').fill('not a whsec_ secret');
    await page.getByRole('button', { name: 'Create' }).click();
    await expect(page.getByRole('alert').filter({ hasText: /\S/ }).textContent()).resolves.toContain('did not accept these settings');
    expect((await call(stack, 'GET', '/triggers', { token: await stack.token('error-user') })).json.data.triggers).toEqual([]);
  });

  it('disables a trigger and deletes it after confirmation', async () => {
    const token = await stack.token('manage-user');
    await call(stack, 'POST', '/triggers', { token, body: { flow: 'echo' } });
    const page = await signInByLink('manage-user');
    const row = page.getByRole('row').filter({ hasText: 'echo' });
    await row.getByRole('button', { name: 'Disable' }).click();
    await row.getByRole('button', { name: 'Enable' }).waitFor();
    expect((await call(stack, 'GET', '/triggers', { token })).json.data.triggers[0].enabled).toBe(false);

    await row.getByRole('button', { name: 'Delete' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete this trigger?' });
    await dialog.getByRole('button', { name: 'Delete' }).click();
    await page.getByText('No triggers yet.').waitFor();
    expect((await call(stack, 'GET', '/triggers', { token })).json.data.triggers).toEqual([]);
  });

  it('edits a trigger: changes its flow and allowed addresses and keeps its signing secret', async () => {
    const token = await stack.token('edit-user');
    await call(stack, 'POST', '/triggers', { token, body: { flow: 'echo', signature: { service: 'stripe', secret: 'whsec_edit' }, deduplicate: true } });
    const page = await signInByLink('edit-user');
    await page.getByRole('row').filter({ hasText: 'echo' }).getByRole('button', { name: 'Edit' }).click();
    const form = page.getByRole('form', { name: 'Edit the echo trigger' });
    // The form starts from the trigger as it is.
    await expect(form.getByLabel('Enable signature verification').isChecked()).resolves.toBe(true);
    await expect(form.getByLabel('Service').inputValue()).resolves.toBe('stripe');
    await expect(form.getByLabel('Deduplicate').isChecked()).resolves.toBe(true);
    await form.getByRole('option', { name: 'route-by-type' }).waitFor({ state: 'attached' });
    await form.getByLabel('Flow').selectOption('route-by-type');
    await form.getByLabel('Allowed source IPs').fill('203.0.113.0/24, 127.0.0.1');
    expect(await seriousA11yViolations(page)).toEqual([]);
    await form.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('row').filter({ hasText: 'route-by-type' }).waitFor();
    const [trigger] = (await call(stack, 'GET', '/triggers', { token })).json.data.triggers;
    expect(trigger).toMatchObject({ flow: 'route-by-type', allowed_source_ips: ['203.0.113.0/24', '127.0.0.1'], signature: { service: 'stripe' }, deduplicate: true });
    // The secret the trigger was created with still verifies: saving without a new one kept it.
    const body = JSON.stringify({ id: 'evt_edit', type: 'payment_intent.succeeded' });
    const delivered = await call(stack, 'POST', `/webhooks${new URL(trigger.url).pathname}`, {
      rawBody: body, headers: { 'content-type': 'application/json', ...signStripe({ secret: 'whsec_edit', body, timestamp: Math.floor(Date.now() / 1000) }) },
    });
    expect(delivered.status).toBe(200);
  });

  it('creates a custom HMAC trigger with its own fields, and a later edit that leaves them alone needs no secret', async () => {
    const page = await signInByLink('custom-user');
    await page.getByRole('button', { name: 'New trigger' }).click();
    await page.getByLabel('Flow').selectOption('echo');
    await page.getByLabel('Enable signature verification').check();
    expect(await page.getByLabel('Signature header').isVisible()).toBe(false);
    await page.getByLabel('Service').selectOption('custom');
    await page.getByLabel('Signing secret').fill('custom-secret');
    await page.getByLabel('Algorithm').selectOption('sha512');
    await page.getByLabel('Signature header').fill('X-Acme-Signature');
    await page.getByLabel('Encoding').selectOption('base64');
    await page.getByLabel('Signature prefix').fill('v1=');
    expect(await seriousA11yViolations(page)).toEqual([]);
    await page.getByRole('button', { name: 'Create' }).click();
    const row = page.getByRole('row').filter({ hasText: 'echo' });
    await row.waitFor();
    const token = await stack.token('custom-user');
    const custom = { algorithm: 'sha512', header: 'x-acme-signature', encoding: 'base64', prefix: 'v1=' };
    expect((await call(stack, 'GET', '/triggers', { token })).json.data.triggers[0].signature).toMatchObject({ service: 'custom', custom });

    await row.getByRole('button', { name: 'Edit' }).click();
    await expect(page.getByLabel('Signature header').inputValue()).resolves.toBe('x-acme-signature');
    await page.getByLabel('Response mode').selectOption('wait');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Trigger for echo changed.').waitFor();
    const [saved] = (await call(stack, 'GET', '/triggers', { token })).json.data.triggers;
    expect(saved).toMatchObject({ response_mode: 'wait', signature: { service: 'custom', custom } });
    // The stored secret is the one given at creation: a body signed with it is accepted.
    const body = '{"type":"ping"}';
    const signature = `v1=${createHmac('sha512', 'custom-secret').update(body).digest('base64')}`;
    const delivered = await call(stack, 'POST', `/webhooks${new URL(saved.url).pathname}`, { rawBody: body, headers: { 'content-type': 'application/json', 'x-acme-signature': signature } });
    expect(delivered.status).toBe(200);
  });

  it('regenerates a trigger\'s URL and API key and rotates its signing secret, each after a confirmation', async () => {
    const token = await stack.token('rotate-user');
    const created = (await call(stack, 'POST', '/triggers', { token, body: { flow: 'echo', api_key_enabled: true, signature: { service: 'github', secret: 'first-secret' } } })).json.data;
    const page = await signInByLink('rotate-user');
    const row = page.getByRole('row').filter({ hasText: 'echo' });
    await expect(row.getByText(stack.webhookFunctionUrl).textContent()).resolves.toBe(created.url);

    await row.getByRole('button', { name: 'Regenerate URL' }).click();
    const urlDialog = page.getByRole('dialog', { name: 'Regenerate this URL?' });
    expect(await seriousA11yViolations(page)).toEqual([]);
    await urlDialog.getByRole('button', { name: 'Regenerate' }).click();
    await urlDialog.waitFor({ state: 'detached' });
    const { url } = (await call(stack, 'GET', `/triggers/${created.id}`, { token })).json.data;
    expect(url).not.toBe(created.url);
    await expect(row.getByText(stack.webhookFunctionUrl).textContent()).resolves.toBe(url);
    expect((await call(stack, 'POST', `/webhooks${new URL(created.url).pathname}`, { body: {} })).status).toBe(404);

    await row.getByRole('button', { name: 'Regenerate API key' }).click();
    const keyDialog = page.getByRole('dialog', { name: 'Regenerate the API key?' });
    await keyDialog.getByLabel('The current key keeps working').selectOption({ label: '1 hour' });
    await keyDialog.getByRole('button', { name: 'Regenerate' }).click();
    await page.getByText('shown this once only').waitFor();
    const key = (await page.locator('.notice code').first().textContent())!;
    expect(key).not.toBe(created.api_key);
    expect(key.length).toBeGreaterThan(20);

    await row.getByRole('button', { name: 'Rotate signing secret' }).click();
    const rotate = page.getByRole('dialog', { name: 'Rotate the signing secret?' });
    expect(await rotate.getByRole('button', { name: 'Rotate' }).isDisabled()).toBe(true);
    await rotate.getByLabel('New signing secret').fill('second-secret');
    expect(await seriousA11yViolations(page)).toEqual([]);
    await rotate.getByRole('button', { name: 'Rotate' }).click();
    await page.getByText('Signing secret of the echo trigger rotated; the previous one works for 24 hours.').waitFor();
    const rotated = (await call(stack, 'GET', `/triggers/${created.id}`, { token })).json.data;
    const hoursLeft = (Date.parse(rotated.signature.previous_secret_expires_at) - Date.now()) / 3_600_000;
    expect(hoursLeft).toBeGreaterThan(23.9);
    expect(hoursLeft).toBeLessThanOrEqual(24);
    // The old key was given an hour.
    const keyHoursLeft = (Date.parse(rotated.previous_api_key_expires_at) - Date.now()) / 3_600_000;
    expect(keyHoursLeft).toBeGreaterThan(0.9);
    expect(keyHoursLeft).toBeLessThanOrEqual(1);
    // After a reload the new key is not shown again.
    await page.reload();
    await page.getByRole('row').filter({ hasText: 'echo' }).waitFor();
    expect(await page.getByText('shown this once only').count()).toBe(0);
  });

  it('creates a trigger with the keyboard alone', async () => {
    const page = await signInByLink('keyboard-user');
    const tabTo = async (name: RegExp) => {
      for (let i = 0; i < 40; i++) {
        await page.keyboard.press('Tab');
        const focused = await page.evaluate(() => {
          const d = (globalThis as any).document;
          const active = d.activeElement;
          return `${active?.id ?? ''} ${active?.textContent ?? ''}`;
        });
        if (name.test(focused)) return;
      }
      throw new Error(`never reached ${name} with Tab`);
    };
    await tabTo(/New trigger/);
    await page.keyboard.press('Enter');
    // Opening the form puts the focus in its first field, the Flow list, whose first flow is echo.
    await page.getByRole('option', { name: 'echo' }).waitFor({ state: 'attached' });
    await tabTo(/^verify /);
    await page.keyboard.press('Space');
    await tabTo(/^service /);
    // The picker is grouped by category; typing a sender's name picks it, as in any select.
    await page.getByRole('option', { name: 'GitHub' }).waitFor({ state: 'attached' });
    await page.keyboard.type('GitHub');
    await tabTo(/^secret /);
    await page.keyboard.type('a-signing-secret');
    await page.keyboard.press('Enter');
    await page.getByRole('row').filter({ hasText: 'echo' }).getByText(stack.webhookFunctionUrl).waitFor();
    const [trigger] = (await call(stack, 'GET', '/triggers', { token: await stack.token('keyboard-user') })).json.data.triggers;
    expect(trigger).toMatchObject({ flow: 'echo', signature: { service: 'github' } });
  });

  it('signs in with an API key in the form, and Sign out forgets it', async () => {
    const key = (await call(stack, 'POST', '/api-keys', { token: await stack.token('api-key-user'), })).json.data.api_key as string;
    const { page } = browser;
    await page.goto(`${stack.baseUrl}/console`);
    await page.getByRole('heading', { name: 'Sign in to Flowgate' }).waitFor();
    expect(await seriousA11yViolations(page)).toEqual([]);
    await page.getByLabel('API key').fill(key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Triggers', level: 1 }).waitFor();
    expect(await page.evaluate(() => (globalThis as any).sessionStorage.length)).toBe(1);

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in to Flowgate' }).waitFor();
    expect(await page.evaluate(() => (globalThis as any).sessionStorage.length)).toBe(0);
    await page.reload();
    await page.getByRole('heading', { name: 'Sign in to Flowgate' }).waitFor();
  });

  it('refuses a wrong token at sign-in, in words', async () => {
    const { page } = browser;
    await page.goto(`${stack.baseUrl}/console`);
    await page.getByLabel('Token').fill('not-a-token');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(page.getByRole('alert').filter({ hasText: /\S/ }).textContent()).resolves.toContain('was not accepted');
    expect(await page.evaluate(() => (globalThis as any).sessionStorage.length)).toBe(0);
  });

  it('says how to get a new token locally when the one signed in with has expired', async () => {
    const { page } = browser;
    // Signed in from the printed link an hour ago: the token has expired since.
    const expired = await stack.token('console-user', { expiresInSeconds: -3600 });
    await page.goto(`${stack.baseUrl}/console#token=${expired}`);
    await page.getByRole('heading', { name: 'Triggers', level: 1 }).waitFor();
    await expect(page.getByRole('alert').filter({ hasText: /\S/ }).first().textContent()).resolves.toContain('npm run token prints a new token');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in to Flowgate' }).waitFor();
  });
});
