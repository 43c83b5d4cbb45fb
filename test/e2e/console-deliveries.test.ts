/**
 * The console's deliveries in a real browser on the local stack: a Stripe-signed delivery appears
 * on its own as succeeded and opens to its body; a wrongly signed one shows as refused with the
 * reason; a failing trigger switched to a working flow has its failures replayed with "Replay failed".
 */
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { seriousA11yViolations, useBrowser, signIntoConsole } from '../support/browser.js';
import { call, useLocalStack } from '../support/local-stack.js';
import { signStripe } from '../support/signers.js';
import { createTrigger, deliver, TEST_FLOWS_DIR, waitForExecutions } from '../support/webhooks.js';

const SCREENSHOT = resolve(import.meta.dirname, '../../docs/console-delivery.png');
const SECRET = 'whsec_console_deliveries';
const nowSeconds = () => Math.floor(Date.now() / 1000);
const isFocused = (locator: Locator) => locator.evaluate((node) => node === (globalThis as unknown as { document: { activeElement: unknown } }).document.activeElement);

/** Presses Tab until `target` has the focus, at most `presses` times; true when it got there. */
async function tabTo(page: Page, target: Locator, presses: number): Promise<boolean> {
  for (let i = 0; i < presses; i++) {
    if (await isFocused(target)) return true;
    await page.keyboard.press('Tab');
  }
  return isFocused(target);
}

describe('deliveries in the console', () => {
  const stack = useLocalStack({ flowsDir: TEST_FLOWS_DIR, env: { TRIGGER_CACHE_TTL_MS: '0' } });
  const browser = useBrowser();

  const signIn = (sub: string): Promise<Page> => signIntoConsole(browser.page, stack, sub);

  const openDeliveries = async (page: Page, flow: string) => {
    await page.getByRole('row').filter({ hasText: flow }).getByRole('link', { name: 'Deliveries' }).click();
    await page.getByRole('heading', { name: 'Deliveries', level: 1 }).waitFor();
  };

  it('a Stripe-signed delivery appears as succeeded without a reload and opens to its body; a wrong signature shows as refused, with why', async () => {
    const page = await signIn('deliveries-user');
    await page.getByRole('button', { name: 'New trigger' }).click();
    await page.getByRole('option', { name: 'echo', exact: true }).waitFor({ state: 'attached' });
    await page.getByLabel('Flow').selectOption('echo');
    await page.getByLabel('Enable signature verification').check();
    await page.getByLabel('Service').selectOption('stripe');
    await page.getByLabel('Signing secret').fill(SECRET);
    await page.getByRole('button', { name: 'Create' }).click();
    const url = (await page.getByRole('row').filter({ hasText: 'echo' }).getByText(stack.webhookFunctionUrl).textContent())!.trim();

    await openDeliveries(page, 'echo');
    await page.getByText('No deliveries match.').waitFor();
    // Sent after the page opened: the list must pick it up on its own.
    const body = JSON.stringify({ id: 'evt_console_ok', type: 'invoice.paid', data: { object: { amount_paid: 4200 } } });
    expect((await deliver(url, body, signStripe({ secret: SECRET, body, timestamp: nowSeconds() }))).status).toBe(200);
    const good = page.getByRole('row').filter({ hasText: 'evt_console_ok' });
    await good.getByText('succeeded', { exact: true }).waitFor({ timeout: 20_000 });
    await expect(good.textContent()).resolves.toContain('invoice.paid');

    const wrong = JSON.stringify({ id: 'evt_console_bad', type: 'invoice.paid' });
    expect((await deliver(url, wrong, signStripe({ secret: 'whsec_not_it', body: wrong, timestamp: nowSeconds() }))).status).toBe(401);
    const refused = page.getByRole('row').filter({ hasText: 'evt_console_bad' });
    await refused.getByText('refused', { exact: true }).waitFor({ timeout: 20_000 });
    expect(await seriousA11yViolations(page)).toEqual([]);

    // Filters: only the refused one.
    await page.getByLabel('Status').selectOption('refused');
    await page.getByRole('row').filter({ hasText: 'evt_console_ok' }).waitFor({ state: 'detached' });
    await expect(page.getByRole('row').filter({ hasText: 'evt_console_bad' }).count()).resolves.toBe(1);
    await page.getByLabel('Status').selectOption('');
    await page.getByLabel('Type').fill('customer.*');
    await page.getByLabel('Type').press('Enter');
    await page.getByText('No deliveries match.').waitFor();
    await page.getByLabel('Type').fill('invoice.*');
    await page.getByLabel('Type').press('Enter');
    await page.getByRole('row').filter({ hasText: 'evt_console_ok' }).waitFor();

    await page.getByRole('link', { name: /Delivery evt_console_bad/ }).click();
    await page.getByRole('heading', { name: 'Delivery evt_console_bad', level: 1 }).waitFor();
    await page.getByText('The signature did not match').waitFor();
    await page.getByRole('link', { name: 'All deliveries of this trigger' }).click();

    await page.getByRole('link', { name: /Delivery evt_console_ok/ }).click();
    await page.getByRole('heading', { name: 'Delivery evt_console_ok', level: 1 }).waitFor();
    // The body pretty-printed, the signature header kept, the flow's output and one attempt.
    await expect(page.getByLabel('Request body').textContent()).resolves.toBe(JSON.stringify(JSON.parse(body), null, 2));
    await page.getByRole('cell', { name: 'stripe-signature' }).waitFor();
    await expect(page.getByLabel('Flow output').textContent()).resolves.toContain('evt_console_ok');
    const attempts = page.getByRole('region', { name: 'Attempts' });
    await expect(attempts.getByRole('row').count()).resolves.toBe(2);
    await attempts.getByText('succeeded', { exact: true }).waitFor();
    expect(await seriousA11yViolations(page)).toEqual([]);
    mkdirSync(resolve(SCREENSHOT, '..'), { recursive: true });
    // The console guide's picture: retaken with UPDATE_SCREENSHOTS=1 npm test, so a plain run leaves the tree clean.
    if (process.env.UPDATE_SCREENSHOTS) await page.screenshot({ path: SCREENSHOT, fullPage: true });

    // Replay from the keyboard: Tab to "Replay", Enter, and the replay opens.
    const replay = page.getByRole('button', { name: 'Replay' });
    await page.getByRole('link', { name: 'All deliveries of this trigger' }).focus();
    await expect(tabTo(page, replay, 5)).resolves.toBe(true);
    await page.keyboard.press('Enter');
    await page.getByRole('link', { name: 'open the replay' }).click();
    await page.getByText('the original delivery').waitFor();
    await page.getByRole('region', { name: 'Attempts' }).getByText('succeeded', { exact: true }).waitFor({ timeout: 20_000 });
  });

  it('a body and a flow output long enough to scroll are each a named region that Tab reaches, shows focus and scrolls from the keyboard', async () => {
    const token = await stack.token('long-user');
    const trigger = await createTrigger(stack, token, { flow: 'echo' });
    // 120 order lines: far more than the 24rem a body or output is shown in, pretty-printed or echoed.
    const lines = Array.from({ length: 120 }, (_, i) => ({ sku: `sku-${i}`, quantity: i + 1, note: 'scroll me' }));
    const body = JSON.stringify({ id: 'evt_console_long', type: 'order.placed', data: { lines } });
    expect((await deliver(trigger.url, body)).status).toBe(200);
    await waitForExecutions(stack, token, trigger.id, (executions) => executions.some((e) => e.event_id === 'evt_console_long' && e.status === 'succeeded'));

    const page = await signIn('long-user');
    await openDeliveries(page, 'echo');
    await page.getByRole('link', { name: /Delivery evt_console_long/ }).click();
    await page.getByRole('heading', { name: 'Delivery evt_console_long', level: 1 }).waitFor();
    const requestBody = page.getByLabel('Request body');
    const output = page.getByLabel('Flow output');
    await expect(output.textContent()).resolves.toContain('sku-119');
    for (const region of [requestBody, output]) {
      // The premise: each really scrolls, so axe's rule applies to it.
      await expect(region.evaluate((node) => node.scrollHeight > node.clientHeight + 50)).resolves.toBe(true);
    }
    expect(await seriousA11yViolations(page, ['scrollable-region-focusable'])).toEqual([]);
    expect(await seriousA11yViolations(page)).toEqual([]);
    // Each is announced as a region with its name, so a screen reader says what the focus landed on.
    for (const name of ['Request body', 'Flow output']) await expect(page.getByRole('region', { name }).count()).resolves.toBe(1);

    // From "Replay", Tab reaches the body, then the output; each shows where the focus is and scrolls with the keys.
    await page.getByRole('button', { name: 'Replay' }).focus();
    for (const region of [requestBody, output]) {
      await expect(tabTo(page, region, 3)).resolves.toBe(true);
      const outline = await region.evaluate((node) => {
        const style = (globalThis as unknown as { getComputedStyle(n: unknown): { outlineStyle: string; outlineWidth: string } }).getComputedStyle(node);
        return { style: style.outlineStyle, width: parseFloat(style.outlineWidth) };
      });
      expect(outline.style).not.toBe('none');
      expect(outline.width).toBeGreaterThanOrEqual(2);
      await page.keyboard.press('End');
      await expect.poll(() => region.evaluate((node) => node.scrollTop)).toBeGreaterThan(0);
    }
  });

  it('a retry from the sender shows as the same event id, marked duplicate, beside the delivery that ran', async () => {
    const token = await stack.token('retry-user');
    const trigger = await createTrigger(stack, token, { flow: 'echo', deduplicate: true, signature: { service: 'stripe', secret: SECRET } });
    const body = JSON.stringify({ id: 'evt_console_retry', type: 'invoice.paid', data: { object: { amount_paid: 100 } } });
    // Stripe signs each attempt anew; the event id in the signed body stays.
    expect((await deliver(trigger.url, body, signStripe({ secret: SECRET, body, timestamp: nowSeconds() }))).status).toBe(200);
    await waitForExecutions(stack, token, trigger.id, (list) => list.some((e) => e.status === 'succeeded'));
    expect((await deliver(trigger.url, body, signStripe({ secret: SECRET, body, timestamp: nowSeconds() + 1 }))).status).toBe(200);

    const page = await signIn('retry-user');
    await openDeliveries(page, 'echo');
    const rows = page.getByRole('table', { name: 'Deliveries, newest first' }).getByRole('row').filter({ hasText: 'evt_console_retry' });
    await expect.poll(async () => rows.count(), { timeout: 20_000 }).toBe(2);
    await rows.filter({ hasText: 'succeeded' }).waitFor();
    await rows.filter({ hasText: 'duplicate' }).waitFor();
  });

  it('a failing trigger switched to a working flow has its failures replayed with "Replay failed"', async () => {
    const token = await stack.token('replay-user');
    const trigger = await createTrigger(stack, token, { flow: 'always-fails', response_mode: 'wait' });
    for (const id of ['evt_fail_1', 'evt_fail_2']) expect((await deliver(trigger.url, JSON.stringify({ id, type: 'order.placed' }))).status).toBe(502);

    const page = await signIn('replay-user');
    await page.getByRole('row').filter({ hasText: 'always-fails' }).getByRole('button', { name: 'Edit' }).click();
    const form = page.getByRole('form', { name: 'Edit the always-fails trigger' });
    await form.getByRole('option', { name: 'echo', exact: true }).waitFor({ state: 'attached' });
    await form.getByLabel('Flow').selectOption('echo');
    await form.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('row').filter({ hasText: 'echo' }).waitFor();

    await openDeliveries(page, 'echo');
    // The list's rows (the chart above it has a table of its own, whose header names `failed` too).
    await expect.poll(async () => page.getByRole('table', { name: 'Deliveries, newest first' }).getByRole('row').filter({ hasText: 'failed' }).count()).toBe(2);
    await page.getByRole('button', { name: 'Replay failed' }).click();
    await page.getByText('Replayed 2 failed deliveries').waitFor();
    // Each replay runs the echo flow now, and says it replays another delivery.
    await expect.poll(async () => page.getByRole('row').filter({ hasText: 'replay' }).filter({ hasText: 'succeeded' }).count(), { timeout: 20_000 }).toBe(2);
    const listed = (await call(stack, 'GET', `/triggers/${trigger.id}/executions`, { token })).json.data.executions as { status: string; replay_of?: string }[];
    expect(listed.filter((e) => e.replay_of && e.status === 'succeeded')).toHaveLength(2);
    expect(await seriousA11yViolations(page)).toEqual([]);
  });
});
