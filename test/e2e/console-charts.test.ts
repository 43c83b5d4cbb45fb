/**
 * The delivery charts in a real browser on the local stack: after 7 succeeded, 2 failed and 3
 * refused deliveries, a trigger's page charts exactly those counts (its accessible table says so),
 * its refused segment opens exactly the 3 refused deliveries, the triggers list shows the trigger's
 * sparkline and failure rate, and the dashboard shows every trigger together; axe finds nothing
 * serious or critical on any of them.
 */
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { dynamoClient } from '../../functions/adapters/aws/clients/dynamo.js';
import { DynamoDeliveryStats } from '../../functions/adapters/aws/dynamo-delivery-stats.js';
import { DynamoTriggerStore } from '../../functions/adapters/aws/dynamo-trigger-store.js';
import { pageErrors, seriousA11yViolations, useBrowser } from '../support/browser.js';
import { useLocalStack } from '../support/local-stack.js';
import { createTrigger, deliver, TEST_FLOWS_DIR, waitForExecutions } from '../support/webhooks.js';

const DASHBOARD_SCREENSHOT = resolve(import.meta.dirname, '../../docs/console-dashboard.png');
const CHART_SCREENSHOT = resolve(import.meta.dirname, '../../docs/console-trigger-chart.png');
const OUTCOME_COLUMNS = ['succeeded', 'failed', 'refused', 'ignored', 'duplicate', 'handshake', 'queued', 'total'];

describe('delivery charts in the console', () => {
  const stack = useLocalStack({ flowsDir: TEST_FLOWS_DIR });
  const browser = useBrowser();

  /** The figures of a chart table's row, by column. */
  async function rowFigures(page: Page, table: string, row: RegExp | string): Promise<Record<string, number>> {
    const cells = await page.getByRole('table', { name: table }).getByRole('row', { name: row }).getByRole('cell').allTextContents();
    return Object.fromEntries(OUTCOME_COLUMNS.map((column, i) => [column, Number(cells[i])]));
  }

  it('a trigger\'s chart, its refused segment, its sparkline and the dashboard show exactly the deliveries made', async () => {
    const sub = 'charts-user';
    const token = await stack.token(sub);
    // Wait mode: each delivery's outcome is known when it is answered.
    const trigger = await createTrigger(stack, token, { flow: 'fails-on-type', response_mode: 'wait', api_key_enabled: true });
    const key = { 'x-api-key': trigger.api_key! };
    // All twelve within one minute, so each outcome is one segment of one bar: start early in a minute.
    while (new Date().getSeconds() > 40) await new Promise((r) => setTimeout(r, 250));
    for (let i = 0; i < 7; i++) expect((await deliver(trigger.url, JSON.stringify({ id: `evt_ok_${i}`, type: 'order.paid' }), key)).status).toBe(200);
    for (let i = 0; i < 2; i++) expect((await deliver(trigger.url, JSON.stringify({ id: `evt_poison_${i}`, type: 'poison' }), key)).status).toBe(502);
    for (let i = 0; i < 3; i++) expect((await deliver(trigger.url, JSON.stringify({ id: `evt_bad_key_${i}`, type: 'order.paid' }), { 'x-api-key': 'fgk_wrong' })).status).toBe(401);
    await waitForExecutions(stack, token, trigger.id, (all) => all.length === 12);
    const expected = { succeeded: 7, failed: 2, refused: 3, ignored: 0, duplicate: 0, handshake: 0, queued: 0, total: 12 };

    const { page } = browser;
    const errors = pageErrors(page);
    await page.goto(`${stack.baseUrl}/console#token=${token}`);
    await page.getByRole('heading', { name: 'Triggers', level: 1 }).waitFor();

    // The triggers list: the sparkline of the last 24 hours, named by its figures, and the failure rate beside it.
    const row = page.getByRole('row').filter({ hasText: 'fails-on-type' });
    await row.getByRole('img', { name: 'Last 24 hours: 12 deliveries, 42% failed or refused' }).waitFor();
    await row.getByText('12 deliveries, 42% failed or refused').waitFor();
    expect(await seriousA11yViolations(page)).toEqual([]);

    // The trigger's page opens with its chart: the last day by hour; the table holds the same figures as the bars.
    await row.getByRole('link', { name: 'Deliveries' }).click();
    const dayTable = 'Deliveries over time in the last day, by outcome';
    await page.getByRole('table', { name: dayTable }).waitFor();
    expect(await rowFigures(page, dayTable, 'All')).toEqual(expected);
    await page.getByText('12 deliveries in the last day: 7 succeeded, 2 failed, 3 refused. Failure rate 42% (failed or refused).').waitFor();
    const svgChart = page.getByRole('group', { name: dayTable });
    await expect(svgChart.getByRole('link').count()).resolves.toBe(3);
    expect(await seriousA11yViolations(page)).toEqual([]);

    // The last hour, by minute: the same deliveries.
    await page.getByRole('radio', { name: 'Last hour' }).check();
    const hourTable = 'Deliveries over time in the last hour, by outcome';
    await page.getByRole('table', { name: hourTable }).waitFor();
    expect(await rowFigures(page, hourTable, 'All')).toEqual(expected);
    await expect(page.getByRole('table', { name: hourTable }).getByRole('row').count()).resolves.toBe(1 + 60 + 1);

    // The refused segment opens the list of that period and outcome: exactly the 3 refused deliveries.
    await page.getByRole('link', { name: /^3 refused, / }).click();
    await page.waitForURL(/status=refused/);
    await page.getByText(/^Received from .* to .*\. All times$/).waitFor();
    const list = page.getByRole('table', { name: 'Deliveries, newest first' });
    await list.waitFor();
    await expect(list.getByRole('row').count()).resolves.toBe(1 + 3);
    expect((await list.getByRole('link').allTextContents()).sort()).toEqual(['evt_bad_key_0', 'evt_bad_key_1', 'evt_bad_key_2']);
    await expect(page.getByLabel('Status').inputValue()).resolves.toBe('refused');
    // The chart above it kept the period it was clicked in.
    await expect(page.getByRole('radio', { name: 'Last hour' }).isChecked()).resolves.toBe(true);
    expect(await seriousA11yViolations(page)).toEqual([]);

    // The dashboard: every trigger together (this account has one), then each trigger with its figures.
    await page.getByRole('link', { name: 'Dashboard' }).click();
    await page.getByRole('heading', { name: 'Dashboard', level: 1 }).waitFor();
    const allTable = 'All deliveries in the last day, by outcome';
    await page.getByRole('table', { name: allTable }).waitFor();
    expect(await rowFigures(page, allTable, 'All')).toEqual(expected);
    const byTrigger = page.getByRole('table', { name: 'Triggers in the last day, the most failing first' });
    const triggerRow = byTrigger.getByRole('row').filter({ hasText: 'fails-on-type' });
    await expect(triggerRow.getByRole('cell').allTextContents()).resolves.toEqual(['', '12', '5', '42%']);
    await triggerRow.getByRole('img', { name: 'Last day: 12 deliveries, 42% failed or refused' }).waitFor();
    expect(await seriousA11yViolations(page)).toEqual([]);
    expect(errors).toEqual([]);

    // The console guide's pictures: retaken with UPDATE_SCREENSHOTS=1 npm test, so a plain run leaves the tree clean.
    if (process.env.UPDATE_SCREENSHOTS) {
      mkdirSync(resolve(DASHBOARD_SCREENSHOT, '..'), { recursive: true });
      await seedHistoryForPictures(sub, trigger.id, token);
      await page.reload();
      await page.getByRole('table', { name: allTable }).waitFor();
      await page.evaluate(() => (globalThis as unknown as { document: { activeElement: { blur(): void } } }).document.activeElement.blur());
      await page.screenshot({ path: DASHBOARD_SCREENSHOT, fullPage: true });
      await page.getByRole('link', { name: /^The fails-on-type trigger/ }).click();
      await page.getByRole('table', { name: dayTable }).waitFor();
      await page.getByRole('region', { name: 'Deliveries over time' }).screenshot({ path: CHART_SCREENSHOT });
    }
  }, 60_000);

  /**
   * For the console guide's pictures only (UPDATE_SCREENSHOTS=1): a second trigger with real deliveries,
   * and a day of earlier traffic for both, written as the counters a day of deliveries would have
   * left (the local stack cannot receive a delivery in the past); the current hour's are real.
   */
  async function seedHistoryForPictures(accountId: string, triggerId: string, token: string): Promise<void> {
    const other = await createTrigger(stack, token, { flow: 'echo', event_filter: ['invoice.*'] });
    for (let i = 0; i < 4; i++) await deliver(other.url, JSON.stringify({ id: `evt_invoice_${i}`, type: 'invoice.paid' }));
    await deliver(other.url, JSON.stringify({ id: 'evt_other', type: 'customer.created' }));
    await waitForExecutions(stack, token, other.id, (all) => all.length === 5 && all.every((e) => e.status !== 'queued' && e.status !== 'running'));
    // Counts before a trigger's creation are never read: both were "created" two days ago.
    const triggers = new DynamoTriggerStore(dynamoClient(stack.aws), stack.engines.env.TRIGGERS_TABLE!, Date.now);
    for (const id of [triggerId, other.id]) {
      const record = (await triggers.get(accountId, id))!;
      expect(await triggers.replace(record, { ...record, created_at: new Date(Date.now() - 48 * 3600_000).toISOString(), version: record.version + 1 })).toBe(true);
    }
    const stats = new DynamoDeliveryStats(dynamoClient(stack.aws), stack.engines.env.EXECUTIONS_TABLE!, Date.now);
    const nowMinute = Math.floor(Date.now() / 60_000);
    for (let hoursAgo = 1; hoursAgo < 24; hoursAgo++) {
      const minute = nowMinute - hoursAgo * 60;
      const wave = Math.round(20 + 15 * Math.sin(hoursAgo / 3));
      await stats.add(triggerId, minute, `seed${hoursAgo}`, { succeeded: wave, failed: hoursAgo % 7 === 3 ? 6 : hoursAgo % 5 === 0 ? 1 : 0, refused: hoursAgo % 4 === 0 ? 2 : 0, duplicate: hoursAgo % 6 === 0 ? 1 : 0 });
      await stats.add(other.id, minute, `seed${hoursAgo}`, { succeeded: Math.round(wave / 3), ignored: hoursAgo % 3 === 0 ? 2 : 0 });
    }
  }
});
