/**
 * The trigger form's sender-dependent parts, in a real browser on the local stack, all from
 * `GET /signature-services` and `GET /flows/{name}`: the chosen sender's delivery time-out and
 * retry window; a warning when a wait-mode trigger's flow may take longer than the sender waits;
 * `split_batches` for a sender that batches; and the sender's event names as the filter's suggestions.
 */
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { newSignedTrigger, seriousA11yViolations, signIntoConsole, useBrowser } from '../support/browser.js';
import { call, useLocalStack } from '../support/local-stack.js';
import { TEST_FLOWS_DIR } from '../support/webhooks.js';

describe('the trigger form and the chosen sender\'s deliveries', () => {
  const stack = useLocalStack({ flowsDir: TEST_FLOWS_DIR });
  const browser = useBrowser();

  const signedTriggerForm = async (sub: string): Promise<Page> => newSignedTrigger(await signIntoConsole(browser.page, stack, sub));

  const suggestions = (page: Page) => page.locator('#event-filter-names option').evaluateAll((nodes) => nodes.map((n) => (n as unknown as { value: string }).value));

  it('shows the sender\'s time-out and retry window, and warns when a wait-mode flow may take longer than the sender waits', async () => {
    const token = await stack.token('timing-user');
    // The flow's wait limit the form compares with: WAIT_TIMEOUT_MS's default, echo having no TimeoutSeconds of its own.
    expect((await call(stack, 'GET', '/flows/echo', { token })).json.data.wait_limit_seconds).toBe(25);
    const page = await signedTriggerForm('timing-user');
    const warning = page.locator('.sender-delivery .warning');

    await page.getByLabel('Service').selectOption('slack');
    await page.getByText('Slack waits 3 s for an answer; it retries for up to 6 min.').waitFor();
    await expect(warning.isHidden()).resolves.toBe(true); // acknowledge mode answers at once

    await page.getByLabel('Response mode').selectOption('wait');
    await page.getByText('Slack gives up after 3 s, but in wait mode this trigger may wait up to 25 s for echo').waitFor();
    await expect(warning.getAttribute('role')).resolves.toBe('status');
    expect(await seriousA11yViolations(page)).toEqual([]);

    // A sender that waits longer than the flow can take: no warning. One whose time-out is undocumented: said so, no warning.
    await page.getByLabel('Service').selectOption('woocommerce');
    await page.getByText('WooCommerce waits 60 s for an answer; it does not retry by itself.').waitFor();
    await warning.waitFor({ state: 'hidden' });
    await page.getByLabel('Service').selectOption('stripe');
    await page.getByText('Stripe\'s delivery time-out is not documented; it retries for up to 3 days.').waitFor();
    await expect(warning.isHidden()).resolves.toBe(true);

    // Back to acknowledge mode, a 3 s sender gives no warning.
    await page.getByLabel('Service').selectOption('zoom');
    await warning.waitFor({ state: 'visible' });
    await page.getByLabel('Response mode').selectOption('acknowledge');
    await warning.waitFor({ state: 'hidden' });
  });

  it('offers split_batches for a sender that batches, and sends it', async () => {
    const page = await signedTriggerForm('split-user');
    const split = page.getByLabel('Split batches: one event per element of a POST');
    await page.getByLabel('Service').selectOption('slack');
    await expect(split.isHidden()).resolves.toBe(true);
    await page.getByLabel('Service').selectOption('hubspot');
    await split.waitFor({ state: 'visible' });
    await expect(split.isChecked()).resolves.toBe(true);
    await split.uncheck();
    await page.getByLabel('Signing secret').fill('hubspot-client-secret');
    await page.getByRole('button', { name: 'Create' }).click();
    await page.getByText('Trigger for echo created.').waitFor();
    const { triggers } = (await call(stack, 'GET', '/triggers', { token: await stack.token('split-user') })).json.data as { triggers: { split_batches: boolean; signature: { service: string } }[] };
    expect(triggers).toEqual([expect.objectContaining({ split_batches: false, signature: expect.objectContaining({ service: 'hubspot' }) })]);
  });

  it('suggests the sender\'s event names in the event filter, after the last comma', async () => {
    const page = await signedTriggerForm('names-user');
    const filter = page.getByLabel('Event filter');
    await expect(filter.getAttribute('list')).resolves.toBe('event-filter-names');
    await page.getByLabel('Service').selectOption('github'); // its names from @octokit/webhooks-types
    await filter.fill('pull_req');
    expect(await suggestions(page)).toEqual(expect.arrayContaining(['pull_request', 'pull_request_review']));
    expect(await suggestions(page)).not.toContain('push');
    await filter.fill('push, pull_request_rev');
    expect(await suggestions(page)).toEqual(expect.arrayContaining(['push, pull_request_review', 'push, pull_request_review_comment']));
    await page.getByLabel('Service').selectOption('stripe'); // from the stripe package
    await filter.fill('payment_intent.succ');
    expect(await suggestions(page)).toEqual(['payment_intent.succeeded']);
  });
});
