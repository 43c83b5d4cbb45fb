/**
 * Issue 43: the console's first authenticator can be named at set-up, as a later one can, and the
 * name is what the list shows; in Chromium on the local stack.
 */
import { describe, expect, it } from 'vitest';
import { pageErrors, seriousA11yViolations, signIntoConsole, useBrowser } from '../support/browser.js';
import { call, useLocalStack } from '../support/local-stack.js';
import { totpCodeAt } from '../support/totp.js';

describe('naming the authenticator in the console', () => {
  const stack = useLocalStack();
  const browser = useBrowser();

  it('the first set-up takes an optional name, stored with the factor and shown in the list', async () => {
    const sub = 'mfa-name-user';
    const page = await signIntoConsole(browser.page, stack, sub);
    const errors = pageErrors(page);
    await page.goto(`${stack.baseUrl}/console#/account`);
    await page.getByRole('heading', { name: 'Account', level: 1 }).waitFor();
    await page.getByRole('button', { name: 'Set up authenticator' }).click();
    const name = page.getByLabel('Name', { exact: true });
    await name.waitFor();
    // The name field comes first and has the focus: the page asks for it before the code.
    await expect(name.evaluate((input) => input === (globalThis as any).document.activeElement)).resolves.toBe(true);
    expect(await seriousA11yViolations(page)).toEqual([]);
    const secret = (await page.locator('#totp-secret').textContent())!;
    await name.fill('Work phone');
    await page.getByLabel('Code', { exact: true }).fill(totpCodeAt(secret, Date.now()));
    await page.getByRole('button', { name: 'Confirm' }).click();
    await page.getByRole('list', { name: 'Recovery codes' }).getByRole('listitem').first().waitFor();
    await page.getByRole('button', { name: 'Done' }).click();
    await page.getByRole('cell', { name: 'Work phone', exact: true }).waitFor();
    const { factors } = (await call(stack, 'GET', '/accounts/factors', { token: await stack.token(sub) })).json.data;
    expect(factors).toEqual([expect.objectContaining({ type: 'totp', name: 'Work phone' })]);
    expect(errors).toEqual([]);
  });
});
