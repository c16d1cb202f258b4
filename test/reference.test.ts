import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MESSAGES } from '../src/messages.ts';
import { ROUTES, SHAPES, template } from '../src/routes.ts';
import { startLocalServer, type LocalServer } from './helpers.ts';

const SCREENSHOT = path.resolve('test-results/reference.png');
const PHONE_SCREENSHOT = path.resolve('test-results/reference-phone.png');
/** Never downloads a browser: the system Chromium, with nothing phoning home. */
const CHROMIUM = {
  executablePath: '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
};

describe('the reference page at /', () => {
  let local: LocalServer;
  let browser: Browser;
  beforeAll(async () => {
    local = await startLocalServer();
    browser = await chromium.launch(CHROMIUM);
  });
  afterAll(async () => {
    await browser?.close();
    await local?.close();
  });

  it('shows a browser the eight lookups, the errors, the limits and the links, with no console errors', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const problems: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(message.text());
    });
    page.on('pageerror', (error) => problems.push(error.message));
    page.on('requestfailed', (request) => problems.push(`failed: ${request.url()}`));
    const external: string[] = [];
    page.on('request', (request) => {
      if (!request.url().startsWith(local.baseUrl) && !request.url().startsWith('data:')) external.push(request.url());
    });

    const response = await page.goto(`${local.baseUrl}/`, { waitUntil: 'load' });
    expect(response?.status()).toBe(200);
    expect(response?.headers()['content-type']).toContain('text/html');
    await expect(page.title()).resolves.toContain('Film Awards Archive API');

    for (const route of ROUTES) {
      const row = page.locator(`tr#${route.id}`);
      await expect(row.count()).resolves.toBe(1);
      const text = await row.innerText();
      expect(text).toContain(template(route));
      expect(text).toContain('apikey=YOUR_KEY');
    }
    const body = await page.locator('body').innerText();
    for (const message of [MESSAGES.forbidden, MESSAGES.tooMany, MESSAGES.fetchError, MESSAGES.methodNotAllowed, MESSAGES.badName, MESSAGES.badTitleId, MESSAGES.badNameId]) {
      expect(body).toContain(message);
    }
    expect(body).toContain('60 requests per minute');
    expect(body).toContain('Retry-After');
    expect(body).toContain('If-None-Match');
    await expect(page.locator('a[href="/portal"]').count()).resolves.toBeGreaterThan(0);
    await expect(page.locator('a[href="/openapi.json"]').count()).resolves.toBeGreaterThan(0);

    await mkdir(path.dirname(SCREENSHOT), { recursive: true });
    await page.screenshot({ path: SCREENSHOT, fullPage: true });
    console.log(`reference page screenshot: ${SCREENSHOT}`);

    expect(problems).toEqual([]);
    expect(external).toEqual([]);
    await page.close();
  });

  it('shows every answer shape in the spec’s notation', async () => {
    const page = await browser.newPage();
    await page.goto(`${local.baseUrl}/`);
    for (const [name, shape] of Object.entries(SHAPES)) {
      await expect(page.locator(`#shape-${name}`).innerText()).resolves.toContain(shape);
    }
    for (const route of ROUTES) await expect(page.locator(`tr#${route.id}`).innerText()).resolves.toContain(route.answer);
    await page.close();
  });

  it('fits a 390 px phone screen: nothing scrolls sideways, and every lookup is still there', async () => {
    const page = await browser.newPage({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true });
    await page.goto(`${local.baseUrl}/`, { waitUntil: 'load' });
    const widths = await page.evaluate(() => ({
      viewport: window.innerWidth,
      document: document.documentElement.scrollWidth,
      widest: Math.max(...[...document.querySelectorAll('body *')].map((e) => e.getBoundingClientRect().right)),
    }));
    expect(widths.viewport).toBe(390);
    expect(widths.document).toBeLessThanOrEqual(390);
    expect(widths.widest).toBeLessThanOrEqual(390);
    for (const route of ROUTES) await expect(page.locator(`tr#${route.id}`).isVisible()).resolves.toBe(true);
    await mkdir(path.dirname(PHONE_SCREENSHOT), { recursive: true });
    await page.screenshot({ path: PHONE_SCREENSHOT, fullPage: true });
    console.log(`reference page at phone width: ${PHONE_SCREENSHOT}`);
    await page.close();
  });

  it('links each example to a path that answers once a real key replaces YOUR_KEY', async () => {
    const page = await browser.newPage();
    await page.goto(`${local.baseUrl}/`);
    const hrefs = await page.locator('tbody tr[id] a').evaluateAll((links) => links.map((a) => a.getAttribute('href') ?? ''));
    expect(hrefs).toHaveLength(ROUTES.length);
    for (const href of hrefs) {
      const response = await fetch(local.baseUrl + href.replace('apikey=YOUR_KEY', `apikey=${local.key}`));
      // The sample has only a few ceremonies, so an example may be absent (404) but never malformed or refused.
      expect([200, 404], href).toContain(response.status);
    }
    await page.close();
  });

  it('still gives JSON clients the JSON description at /', async () => {
    const response = await fetch(`${local.baseUrl}/`, { headers: { accept: 'application/json' } });
    expect(response.headers.get('content-type')).toContain('application/json');
    const description = (await response.json()) as { endpoints: { operationId: string }[] };
    expect(description.endpoints.map((e) => e.operationId)).toEqual(ROUTES.map((r) => r.id));
  });
});
