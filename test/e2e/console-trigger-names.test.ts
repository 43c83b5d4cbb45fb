/**
 * Issue 43: four `echo` triggers must be told apart in the console. The triggers list and the
 * dashboard show each trigger's name (its flow's when it has none) and description, and the
 * trigger form sets and changes them; in Chromium on the local stack.
 */
import { describe, expect, it } from 'vitest';
import { pageErrors, seriousA11yViolations, signIntoConsole, useBrowser } from '../support/browser.js';
import { call, useLocalStack } from '../support/local-stack.js';
import { createTrigger, TEST_FLOWS_DIR } from '../support/webhooks.js';

describe('trigger names in the console', () => {
  const stack = useLocalStack({ flowsDir: TEST_FLOWS_DIR });
  const browser = useBrowser();

  it('the list and the dashboard tell triggers of one flow apart; the form sets, changes and clears a name', async () => {
    const sub = 'console-names';
    const token = await stack.token(sub);
    const named = await createTrigger(stack, token, { flow: 'echo', name: 'GitHub pushes', description: 'the main repository' });
    const unnamed = await createTrigger(stack, token, { flow: 'echo' });
    const page = await signIntoConsole(browser.page, stack, sub);
    const errors = pageErrors(page);

    const table = page.getByRole('table', { name: 'Webhook triggers' });
    const namedRow = table.getByRole('row').filter({ hasText: 'GitHub pushes' });
    await namedRow.waitFor();
    await expect(namedRow.textContent()).resolves.toContain('the main repository');
    await expect(table.getByRole('rowheader').allTextContents()).resolves.toEqual(expect.arrayContaining(['GitHub pushesthe main repository', "echo (no name: its flow's)"]));
    await namedRow.getByRole('link', { name: 'Deliveries of the GitHub pushes trigger' }).waitFor();
    expect(await seriousA11yViolations(page)).toEqual([]);

    // A new trigger named in the form.
    await page.getByRole('button', { name: 'New trigger' }).click();
    await page.getByRole('option', { name: 'echo', exact: true }).waitFor({ state: 'attached' });
    await page.getByLabel('Flow', { exact: true }).selectOption('echo');
    await page.getByLabel('Name', { exact: true }).fill('Stripe invoices');
    await page.getByLabel('Description', { exact: true }).fill('billing account');
    expect(await seriousA11yViolations(page)).toEqual([]);
    await page.getByRole('button', { name: 'Create' }).click();
    await page.getByText('Trigger Stripe invoices for echo created.').waitFor();
    await table.getByRole('row').filter({ hasText: 'Stripe invoices' }).waitFor();

    // Renaming the unnamed one, then clearing the named one's name back to its flow's.
    await table.getByRole('row').filter({ hasText: "no name: its flow's" }).getByRole('button', { name: 'Edit' }).click();
    await expect(page.getByLabel('Name', { exact: true }).inputValue()).resolves.toBe('');
    await page.getByLabel('Name', { exact: true }).fill('Shopify orders');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Trigger Shopify orders for echo changed.').waitFor();
    await namedRow.getByRole('button', { name: 'Edit' }).click();
    await expect(page.getByLabel('Name', { exact: true }).inputValue()).resolves.toBe('GitHub pushes');
    await expect(page.getByLabel('Description', { exact: true }).inputValue()).resolves.toBe('the main repository');
    await page.getByLabel('Name', { exact: true }).fill('');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Trigger for echo changed.').waitFor();
    const read = async (id: string) => (await call(stack, 'GET', `/triggers/${id}`, { token })).json.data;
    await expect(read(unnamed.id)).resolves.toMatchObject({ name: 'Shopify orders', name_is_default: false, description: null });
    await expect(read(named.id)).resolves.toMatchObject({ name: 'echo', name_is_default: true, description: 'the main repository' });

    // The dashboard: one row per trigger, by name, the flow beside a name that is not the flow's.
    await page.getByRole('link', { name: 'Dashboard' }).click();
    const byTrigger = page.getByRole('table', { name: /^Triggers .* the most failing first$/ });
    await byTrigger.getByRole('link', { name: /^The Stripe invoices trigger/ }).waitFor();
    await byTrigger.getByRole('link', { name: /^The Shopify orders trigger/ }).waitFor();
    await expect(byTrigger.getByRole('row').filter({ hasText: 'Shopify orders' }).getByRole('rowheader').textContent()).resolves.toContain('echo');
    await byTrigger.getByRole('link', { name: `The echo trigger (${named.id.slice(0, 8)})` }).waitFor();
    expect(await seriousA11yViolations(page)).toEqual([]);
    expect(errors).toEqual([]);
  });
});
