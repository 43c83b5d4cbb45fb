import { describe, expect, it } from 'vitest';
import { pageErrors, seriousA11yViolations, useBrowser } from '../support/browser.js';
import { call, useLocalStack } from '../support/local-stack.js';

/** The Streams page, driven in Chromium against one local stack. */
describe('the console\'s Streams page', () => {
  const stack = useLocalStack();
  const browser = useBrowser();

  it('lists streams with counts and a sparkline of publishes, pages through messages by sequence, and shows consumers with their lag', async () => {
    const token = await stack.token('streams-console-user');
    expect((await call(stack, 'PUT', '/storage/streams/orders', { token, body: { description: 'Order events' } })).status).toBe(201);
    expect((await call(stack, 'PUT', '/storage/streams/idle', { token })).status).toBe(201);
    for (let batch = 0; batch < 2; batch++) {
      const messages = Array.from({ length: 40 }, (_, i) => ({ data: { order: batch * 40 + i + 1 }, ...(i === 0 && { msg_id: `first-of-${batch}` }) }));
      expect((await call(stack, 'POST', '/storage/streams/orders/messages', { token, body: { messages } })).status).toBe(200);
    }
    expect((await call(stack, 'PUT', '/storage/streams/orders/consumers/billing', { token })).status).toBe(201);
    expect((await call(stack, 'PUT', '/storage/streams/orders/consumers/shipping', { token })).status).toBe(201);
    expect((await call(stack, 'POST', '/storage/streams/orders/consumers/billing/fetch', { token, body: { batch: 30 } })).status).toBe(200);

    const { page } = browser;
    const errors = pageErrors(page);
    await page.goto(`${stack.baseUrl}/console#token=${token}`);
    await page.getByRole('heading', { name: 'Triggers', level: 1 }).waitFor();
    await page.getByRole('link', { name: 'Streams' }).click();
    await page.getByRole('heading', { name: 'Streams', level: 1 }).waitFor();
    await expect(page.getByRole('link', { name: 'Streams' }).getAttribute('aria-current')).resolves.toBe('page');
    const orders = page.getByRole('row').filter({ hasText: 'Order events' });
    await orders.getByRole('img', { name: '80 publishes in the last 24 hours' }).waitFor();
    expect(await orders.getByRole('cell').allTextContents()).toEqual(expect.arrayContaining(['orders', 'Order events', '80', '1–80', '2']));
    await page.getByRole('row').filter({ hasText: 'idle' }).getByRole('img', { name: '0 publishes in the last 24 hours' }).waitFor();
    expect(await seriousA11yViolations(page)).toEqual([]);

    await page.getByRole('link', { name: 'orders' }).click();
    await page.getByRole('heading', { name: 'Stream orders', level: 1 }).waitFor();
    await page.getByText('Sequences 1 to 50 of 1 to 80.').waitFor();
    const messages = page.getByRole('table', { name: 'Messages by sequence' });
    await expect(messages.getByRole('row').nth(1).textContent()).resolves.toContain('{"order":1}');
    await page.getByRole('button', { name: 'Next messages' }).click();
    await page.getByText('Sequences 51 to 80 of 1 to 80.').waitFor();
    await expect(page.getByRole('button', { name: 'Next messages' }).isHidden()).resolves.toBe(true);
    await page.getByLabel('From sequence').fill('41');
    await page.getByRole('button', { name: 'Show' }).click();
    await page.getByText('Sequences 41 to 80 of 1 to 80.').waitFor();
    await expect(messages.getByRole('row').nth(1).textContent()).resolves.toContain('first-of-1');

    const consumers = page.getByRole('table', { name: 'Consumers and their lag' });
    await expect(consumers.getByRole('row', { name: /billing/ }).getByRole('cell').allTextContents()).resolves.toEqual(['all', '50', '30', '0', '0']);
    await expect(consumers.getByRole('row', { name: /shipping/ }).getByRole('cell').allTextContents()).resolves.toEqual(['all', '80', '0', '0', '0']);
    expect(await seriousA11yViolations(page)).toEqual([]);
    expect(errors).toEqual([]);
  }, 60_000);
});
