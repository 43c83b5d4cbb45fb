import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import chromium from '@sparticuz/chromium';
import { chromium as playwright, type Browser, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';

/**
 * One headless Chromium for the calling test file and a fresh page (own session storage) for each
 * test. The binary is the one `@sparticuz/chromium` ships inside its npm package: `npm ci` is all a
 * machine needs, no browser download. Read `page` inside tests, not at collection time.
 */
export function useBrowser(): { readonly page: Page; readonly browser: Browser } {
  let browser: Browser | undefined;
  let page: Page | undefined;
  beforeAll(async () => {
    // Its args are tuned for Lambda, where `--single-process` fits one core; here it makes closing a
    // test's context take the whole browser down, so each test could not have a fresh one.
    const args = chromium.args.filter((arg) => arg !== '--single-process');
    browser = await playwright.launch({ executablePath: await chromium.executablePath(), args, headless: true });
  });
  beforeEach(async () => {
    page = await browser!.newPage();
  });
  afterEach(async () => {
    await page?.context().close();
  });
  afterAll(async () => {
    await browser?.close();
  });
  return {
    get page() {
      return page!;
    },
    get browser() {
      return browser!;
    },
  };
}

/**
 * Collects, from now on, the page's script errors and its console errors: a Content-Security-Policy
 * refusal or a script error shows up as one. With `provokedApiErrors`, the "Failed to load resource"
 * line an API's 4xx logs (a test provoking it on purpose) is not counted.
 */
export function pageErrors(page: Page, options: { provokedApiErrors?: boolean } = {}): string[] {
  const errors: string[] = [];
  const provoked = /^Failed to load resource: the server responded with a status of 4\d\d/;
  page.on('console', (message) => message.type() === 'error' && !(options.provokedApiErrors && provoked.test(message.text())) && errors.push(message.text()));
  page.on('pageerror', (error) => errors.push(error.message));
  return errors;
}

/** Opens "New trigger" with echo as its flow and signature verification on, once the catalog is in the picker. */
export async function newSignedTrigger(page: Page): Promise<Page> {
  await page.getByRole('button', { name: 'New trigger' }).click();
  await page.getByRole('option', { name: 'echo', exact: true }).waitFor({ state: 'attached' });
  await page.getByLabel('Flow').selectOption('echo');
  await page.getByLabel('Enable signature verification').check();
  await page.getByLabel('Service').locator('optgroup').first().waitFor({ state: 'attached' });
  return page;
}

/** Opens the console signed in as `sub` (a token in the address, as the hosted UI hands it over) and waits for its landing page. */
export async function signIntoConsole(page: Page, stack: { baseUrl: string; token(sub: string): Promise<string> }, sub: string): Promise<Page> {
  await page.goto(`${stack.baseUrl}/console#token=${await stack.token(sub)}`);
  await page.getByRole('heading', { name: 'Triggers', level: 1 }).waitFor();
  return page;
}

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeViolation {
  id: string;
  impact: string;
  help: string;
  targets: string[];
}

/**
 * Runs axe-core on the page as it is now and returns its serious and critical violations: of every
 * rule, or of only the `rules` named (axe rule ids, e.g. `scrollable-region-focusable`).
 */
export async function seriousA11yViolations(page: Page, rules?: readonly string[]): Promise<AxeViolation[]> {
  // Evaluated over the DevTools protocol, which the page's Content-Security-Policy does not govern.
  await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async (only) => {
    const options = { resultTypes: ['violations'], ...(only && { runOnly: { type: 'rule', values: only } }) };
    const results = await (globalThis as any).axe.run((globalThis as any).document, options);
    return results.violations.map((v: any) => ({ id: v.id, impact: v.impact, help: v.help, targets: v.nodes.map((n: any) => String(n.target)) }));
  }, rules ? [...rules] : undefined);
  return (violations as AxeViolation[]).filter((v) => v.impact === 'serious' || v.impact === 'critical');
}
